package completions

import (
	"slices"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

func TestGatewayModels(t *testing.T) {
	reg := providers.NewRegistry(
		providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: "http://127.0.0.1:1/v1", APIKey: "k"}),
		providers.NewOpenAI(providers.Config{Name: "mylab", BaseURL: "http://127.0.0.1:1/v1", APIKey: "k"}),
		// Registered as the environment's presets are, without its key: listed nowhere.
		providers.NewAnthropic(providers.Config{Name: "anthropic", BaseURL: "http://127.0.0.1:1"}))
	g, err := New(Options{Providers: reg, Prices: providers.DefaultCatalog(), Store: memstore.New()})
	if err != nil {
		t.Fatal(err)
	}
	ms := g.Models()
	if !slices.Contains(ms, "openai/gpt-4o") || !slices.Contains(ms, "openai/gpt-4o-mini") || !slices.IsSorted(ms) {
		t.Fatalf("models %d, first %v", len(ms), ms[:min(5, len(ms))])
	}
	for _, m := range ms {
		if m[:7] != "openai/" {
			t.Fatalf("model %q of a provider without a key", m)
		}
	}
	for id, want := range map[string]bool{"openai/gpt-4o": true, "openai/no-such-model": false, "mylab/anything": true, "anthropic/claude-3-haiku-20240307": false, "bad": false} {
		if got := g.HasModel(id); got != want {
			t.Errorf("HasModel(%q) = %v, want %v", id, got, want)
		}
	}
}
