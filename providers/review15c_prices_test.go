package providers_test

import (
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestReview15cNamedVertexClaudePrices: the README has Claude on a second vertex_ai entry
// ("vertex-claude", its own location) and says its prices are the catalogue's
// vertex_ai/claude-… entries. The gateway prices a call by providers.PriceModel, which for
// such an entry was "vertex-claude/claude-…": no catalogue key, so the canonical lookup
// picked a reseller's entry (OpenRouter's, Vercel's) — Claude 3.5 Haiku at $0.80/$4 where
// Vertex's entry says $1/$5.
func TestReview15cNamedVertexClaudePrices(t *testing.T) {
	cat := providers.DefaultCatalog()
	v, err := providers.NewVertex(providers.VertexConfig{Config: providers.Config{Name: "vertex-claude"},
		Project: "p", Location: "us-east5", AccessToken: "ya29.fixed"})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"claude-3-5-haiku@20241022", "claude-sonnet-4@20250514", "claude-3-haiku@20240307"} {
		want, ok := cat.Lookup("vertex_ai/" + m)
		if !ok {
			t.Fatalf("%s: no vertex_ai price", m)
		}
		got, ok := cat.Lookup(providers.PriceModel(v, m))
		if !ok || got.Key != want.Key || got.InputPerToken != want.InputPerToken || got.OutputPerToken != want.OutputPerToken {
			t.Errorf("vertex-claude/%s priced as %s (%s, %g/%g), want %s (%g/%g)", m, got.Key, got.Provider,
				got.InputPerToken, got.OutputPerToken, want.Key, want.InputPerToken, want.OutputPerToken)
		}
	}
}
