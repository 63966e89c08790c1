package completions

import (
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestListConfiguredServesItsOwnModels: with Options.ListConfigured (--litellm-config), a
// moderation guardrail's model and the semantic cache's embedding model need not be in the
// configuration: the gateway starts (it refused to, naming the model as not served).
func TestListConfiguredServesItsOwnModels(t *testing.T) {
	env := map[string]string{"OPENAI_API_KEY": "sk"}
	opts := Options{Providers: providers.FromEnv(func(k string) string { return env[k] }, providers.Options{}), Prices: providers.DefaultCatalog(),
		ModelGroups: map[string]ModelGroup{"smart": {Models: []string{"openai/gpt-4o"}}}, ListConfigured: true, Listed: []string{},
		Guardrails: []GuardrailConfig{{Name: "mod", Kind: GuardrailModeration, Mode: GuardrailPreCall}}}
	opts.Cache.Semantic = &SemanticCacheOptions{Model: "openai/text-embedding-3-small"}
	g, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if g.Serves("openai/gpt-4.1") {
		t.Error("serves openai/gpt-4.1, which the configuration does not name")
	}
}
