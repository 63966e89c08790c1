package deployments

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// TestUpdateOnReplicaNotYetSynced: a deployment added on one replica and edited on another
// before that one's poll applied it, by sending back the first replica's /model/info entry
// whole (the catalogue's rates in model_info), does not get the catalogue's rates as its
// own price: the replica applies the stored deployments before the update.
func TestUpdateOnReplicaNotYetSynced(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	a, ga := review27cService(t, st, providers.FromEnv(func(string) string { return "" }, providers.Options{}), nil)
	b, _ := review27cService(t, st, providers.FromEnv(func(string) string { return "" }, providers.Options{}), nil)
	if _, err := a.Add(ctx, Input{ModelName: "team-gpt", LiteLLMParams: map[string]any{"model": "openai/gpt-4o", "api_base": "https://example.invalid/v1"},
		ModelInfo: map[string]any{"id": "dep-1"}}); err != nil {
		t.Fatal(err)
	}
	var shown float64
	for _, d := range ga.Deployments() {
		if d.ID == "dep-1" && d.PriceFound {
			shown = d.Price.InputPerToken
		}
	}
	if shown == 0 {
		t.Fatal("replica a shows no catalogue price for gpt-4o")
	}
	// Replica b has not polled since the add.
	if _, err := b.Update(ctx, "dep-1", Input{ModelName: "team-gpt", LiteLLMParams: map[string]any{"model": "openai/gpt-4o", "api_base": "https://example.invalid/v1", "rpm": 7},
		ModelInfo: map[string]any{"id": "dep-1", "input_cost_per_token": shown}}); err != nil {
		t.Fatal(err)
	}
	raw, err := st.Get(ctx, store.Deployments, "dep-1")
	if err != nil {
		t.Fatal(err)
	}
	var rec record
	if err := json.Unmarshal(raw, &rec); err != nil {
		t.Fatal(err)
	}
	if _, own := rec.ModelInfo["input_cost_per_token"]; own {
		t.Errorf("the update on the replica that had not polled made the catalogue's rate the deployment's own: %s", raw)
	}
	if rec.LiteLLMParams["rpm"] != float64(7) {
		t.Errorf("the update's own change was lost: %s", raw)
	}
}
