package deployments

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// TestReview30rEarlierRecordEntrySentBackKeepsCredential: a record an earlier build
// stored with api_base's credential in clear, edited by sending back its /model/info
// entry whole (api_base in the public form the gateway shows), keeps the credential (and
// has it sealed), as a record of this build does: it was dropped, the upstream then
// called without it.
func TestReview30rEarlierRecordEntrySentBackKeepsCredential(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	up := newBasicAuthUpstream(t)
	withUser := "http://old:SECRETold@" + strings.TrimPrefix(up.URL, "http://") + "/v1"
	old := map[string]any{"id": "old-1", "model_name": "legacy", "litellm_params": map[string]any{"model": "openai/gpt-4o", "api_base": withUser},
		"model_info": map[string]any{"id": "old-1", "db_model": true}, "created_at": "2025-01-01T00:00:00Z", "updated_at": "2025-01-01T00:00:00Z"}
	b, _ := json.Marshal(old)
	if err := st.Put(ctx, store.Deployments, "old-1", b); err != nil {
		t.Fatal(err)
	}
	svc, g := review27cService(t, st, providers.FromEnv(func(string) string { return "" }, providers.Options{}), nil)
	shown := ""
	for _, d := range g.Deployments() {
		if d.ID == "old-1" {
			shown = d.APIBase
		}
	}
	if shown == "" || strings.Contains(shown, "SECRET") {
		t.Fatalf("the gateway shows api_base %q for the earlier record", shown)
	}
	if _, err := svc.Update(ctx, "old-1", Input{ModelName: "legacy", LiteLLMParams: map[string]any{"model": "openai/gpt-4o", "api_base": shown, "rpm": 10},
		ModelInfo: map[string]any{"id": "old-1"}}); err != nil {
		t.Fatal(err)
	}
	raw, err := st.Get(ctx, store.Deployments, "old-1")
	if err != nil || strings.Contains(string(raw), "SECRET") {
		t.Errorf("after its update the earlier record holds the credential in clear (%v): %s", err, raw)
	}
	ping(t, g, "legacy")
	if got := up.last(); got != "old:SECRETold" {
		t.Errorf("after the entry was sent back the upstream got %q, want old:SECRETold", got)
	}
}
