package completions

import (
	"errors"
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
