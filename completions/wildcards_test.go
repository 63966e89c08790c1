package completions

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestWildcardResolution: the wildcards resolve as LiteLLM's pattern router does — the
// most specific pattern first, each '*' of the model taking a match in order, a model of
// fewer '*' called by the name asked — and only for names nothing else answers: a
// catalogued bare name keeps its provider, a provider's own name stays its own; a pattern
// without '*' or a model of no provider is refused by New.
func TestWildcardResolution(t *testing.T) {
	env := map[string]string{"OPENAI_API_KEY": "sk-o", "ANTHROPIC_API_KEY": "sk-a"}
	g, err := New(Options{Providers: providers.FromEnv(func(k string) string { return env[k] }, providers.Options{}), Prices: providers.DefaultCatalog(),
		Wildcards: []Wildcard{
			{Pattern: "*", Model: "openai/*"},
			{Pattern: "llmengine/*", Model: "openai/*"},
			{Pattern: "llmengine/fo::*::static::*", Model: "openai/fo::*::static::*"},
			{Pattern: "llmengine/v-*-*", Model: "openai/v-*-*-c"},
			{Pattern: "fixed-*", Model: "anthropic/claude-3-5-haiku-20241022"},
		}})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"my-finetune-xyz":                     "openai/my-finetune-xyz",
		"ft:gpt-4o-mini-2024-07-18:org::abc":  "openai/ft:gpt-4o-mini-2024-07-18:org::abc",
		"llmengine/foo":                       "openai/foo",
		"llmengine/foo::bar::static::baz":     "openai/foo::bar::static::baz",
		"llmengine/v-a-b":                     "openai/v-a-b-c", // the most specific pattern
		"fixed-anything":                      "anthropic/claude-3-5-haiku-20241022",
		"claude-sonnet-4-5":                   "anthropic/claude-sonnet-4-5",         // catalogued: its provider
		"claude-3-5-haiku-20241022":           "openai/claude-3-5-haiku-20241022",    // not catalogued: the wildcard over the family's maker
		"anthropic/claude-3-5-haiku-20241022": "anthropic/claude-3-5-haiku-20241022", // a provider's own name
	} {
		got, ok := g.ResolveModel(name)
		if got != want || !ok {
			t.Errorf("ResolveModel(%q) = %q, %v; want %q, true", name, got, ok, want)
		}
	}
	fewer, err := compileWildcards([]Wildcard{{Pattern: "x/*-*", Model: "openai/*"}})
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := fewer[0].target("x/a-b"); got != "x/a-b" || !ok {
		t.Errorf("a model of fewer '*' than its pattern: %q, %v; want the name asked", got, ok)
	}
	for _, ws := range [][]Wildcard{{{Pattern: "no-star", Model: "openai/*"}}, {{Pattern: "*", Model: "nowhere"}}} {
		if _, err := New(Options{Providers: providers.FromEnv(func(k string) string { return env[k] }, providers.Options{}), Wildcards: ws}); !errors.Is(err, ErrInvalid) {
			t.Errorf("New with %v: %v, want ErrInvalid", ws, err)
		}
	}
}

// TestWildcardGroupNameWarning: a "*" wildcard matches every model group's name, but only
// a group named as a model is warned about (every group was).
func TestWildcardGroupNameWarning(t *testing.T) {
	var logs bytes.Buffer
	env := map[string]string{"OPENAI_API_KEY": "sk-o"}
	_, err := New(Options{Providers: providers.FromEnv(func(k string) string { return env[k] }, providers.Options{}), Prices: providers.DefaultCatalog(),
		Logger:    slog.New(slog.NewTextHandler(&logs, nil)),
		Wildcards: []Wildcard{{Pattern: "*", Model: "openai/*"}},
		ModelGroups: map[string]ModelGroup{
			"team-x": {Models: []string{"openai/gpt-4o-mini"}},
			"gpt-4o": {Models: []string{"openai/gpt-4o-mini"}},
		}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(logs.String(), "group=team-x") || !strings.Contains(logs.String(), "group=gpt-4o") {
		t.Errorf("warnings %s: want gpt-4o's only", logs.String())
	}
}

// BenchmarkResolveWildcard times resolving a request's model on the OpenAI-compatible
// surfaces: a catalogued bare name and a provider/model name (which the wildcards do not
// touch), and a name only a wildcard routes.
func BenchmarkResolveWildcard(b *testing.B) {
	env := map[string]string{"OPENAI_API_KEY": "sk-o"}
	for _, ws := range []struct {
		name string
		w    []Wildcard
	}{{"none", nil}, {"star", []Wildcard{{Pattern: "*", Model: "openai/*"}, {Pattern: "custom/*", Model: "openai/*"}}}} {
		g, err := New(Options{Providers: providers.FromEnv(func(k string) string { return env[k] }, providers.Options{}), Prices: providers.DefaultCatalog(), Wildcards: ws.w})
		if err != nil {
			b.Fatal(err)
		}
		for _, model := range []string{"gpt-4o-mini", "openai/gpt-4o-mini", "my-finetune-xyz"} {
			if ws.w == nil && model == "my-finetune-xyz" {
				continue
			}
			b.Run(ws.name+"/"+model, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := g.resolve("model", []string{model}, false, true); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
