package completions

import (
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestReview10cVoyageIsNotAChatModel: Voyage serves embeddings only, but with VOYAGE_API_KEY
// set the gateway takes voyage/voyage-3.5 as a routable chat model (HasModel/ResolveModel:
// the catalogue lists no voyage chat model, so the provider counts as "not enumerated" and
// any name passes through to Voyage's nonexistent /chat/completions), while
// mistral/mistral-embed is refused locally.
func TestReview10cVoyageIsNotAChatModel(t *testing.T) {
	env := map[string]string{"VOYAGE_API_KEY": "pa-x", "MISTRAL_API_KEY": "m"}
	g, err := New(Options{Providers: providers.FromEnv(func(k string) string { return env[k] }, providers.Options{}), Prices: providers.DefaultCatalog()})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := g.ResolveModel("mistral/mistral-embed"); ok {
		t.Fatalf("baseline: mistral-embed taken as a chat model")
	}
	if id, ok := g.ResolveModel("voyage/voyage-3.5"); ok {
		t.Errorf("%s resolves as a chat model (HasModel %v)", id, g.HasModel(id))
	}
}
