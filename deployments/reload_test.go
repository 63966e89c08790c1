package deployments

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// TestReloadSwapsTheConfigFile: changing a LiteLLM config's model_list took a restart
// (dropping the streams under way); Reload serves the file read anew — a group added, one
// removed, one whose deployment changed (its own api_key: a provider entry of its own) —
// beside the stored deployments, and a file that cannot be served (an unknown provider, a
// YAML error) leaves the routes and the file in force as they were, naming the error.
func TestReloadSwapsTheConfigFile(t *testing.T) {
	ctx := context.Background()
	reg := providers.FromEnv(func(string) string { return "" }, providers.Options{})
	g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog()})
	if err != nil {
		t.Fatal(err)
	}
	first := []byte("model_list:\n" +
		"  - model_name: fast\n    litellm_params:\n      model: openai/gpt-4o-mini\n      api_key: sk-a\n" +
		"  - model_name: old\n    litellm_params:\n      model: openai/gpt-4o\n      api_key: sk-a\n")
	svc, err := New(Options{Store: memstore.New(), Gateway: g, Registry: reg, Config: first, SecretKey: []byte("salt"),
		LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Add(ctx, Input{ModelName: "stored-team", LiteLLMParams: map[string]any{"model": "openai/gpt-4o", "api_key": "sk-stored"}}); err != nil {
		t.Fatal(err)
	}
	second := []byte("model_list:\n" +
		"  - model_name: fast\n    litellm_params:\n      model: openai/gpt-4.1-mini\n      api_key: sk-b\n" +
		"  - model_name: new\n    litellm_params:\n      model: anthropic/claude-3-5-haiku-20241022\n      api_key: sk-c\n")
	if err := svc.Reload(ctx, second); err != nil {
		t.Fatal(err)
	}
	groups := g.ModelGroupsInForce()
	if _, ok := groups["old"]; ok || !g.IsModelGroup("new") || !g.IsModelGroup("stored-team") {
		t.Fatalf("groups after the reload: %v", g.ModelGroups())
	}
	fast := groups["fast"].Models
	if len(fast) != 1 || !strings.HasSuffix(fast[0], "/gpt-4.1-mini") {
		t.Fatalf("fast after the reload: %v, want the new file's gpt-4.1-mini", fast)
	}
	if _, err := reg.Lookup(strings.SplitN(fast[0], "/", 2)[0]); err != nil {
		t.Fatalf("the new deployment's provider entry %s: %v", fast[0], err)
	}
	for _, bad := range []string{
		"model_list:\n  - model_name: fast\n    litellm_params:\n      model: nope/gpt-4o\n",
		"model_list:\n  - model_name: fast\n   litellm_params: [\n",
	} {
		if err := svc.Reload(ctx, []byte(bad)); err == nil {
			t.Fatalf("an invalid file was taken:\n%s", bad)
		}
		if got := g.ModelGroupsInForce(); !slices.Equal(got["fast"].Models, fast) || !g.IsModelGroup("new") || !g.IsModelGroup("stored-team") {
			t.Fatalf("groups after an invalid file: %v", g.ModelGroups())
		}
	}
	// The file in force is still the second: a stored deployment added now is applied with it.
	if _, err := svc.Add(ctx, Input{ModelName: "later", LiteLLMParams: map[string]any{"model": "openai/gpt-4o", "api_key": "sk-later"}}); err != nil {
		t.Fatal(err)
	}
	if !g.IsModelGroup("later") || !g.IsModelGroup("new") || g.IsModelGroup("old") {
		t.Fatalf("groups after an add: %v", g.ModelGroups())
	}
}
