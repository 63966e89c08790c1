package server

import (
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/deployments"
	"github.com/switchyard-ai/switchyard/providers"
)

// TestReview30rModelInfoEntrySentBackKeepsCatalogPrice: an edit sending back a stored
// deployment's /model/info entry whole (as LiteLLM's UI does: here only its rpm changed)
// carries the catalogue's rates /model/info shows in model_info; they are not made the
// deployment's own flat price, which dropped the catalogue's long-prompt tier
// (claude-sonnet-4-5 above 200k tokens: $6 per million, billed $3 after the edit).
func TestReview30rModelInfoEntrySentBackKeepsCatalogPrice(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":300000,"output_tokens":0}}`)
	}))
	t.Cleanup(up.Close)
	st := newTestStore(t)
	reg := providers.FromEnv(func(string) string { return "" }, providers.Options{})
	g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog(), Store: st,
		Backoff: completions.Backoff{Initial: time.Millisecond, Max: 2 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := deployments.New(deployments.Options{Store: st, Gateway: g, Registry: reg,
		SecretKey: []byte("salt-for-tests"), LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	hs := serveDeployments(t, st, g, svc)

	if code, out := adminCall(t, hs, "POST", "/model/new", `{"model_name":"long","litellm_params":{"model":"anthropic/claude-sonnet-4-5","api_key":"sk-x","api_base":"`+up.URL+`"},"model_info":{"id":"long-1"}}`); code != http.StatusOK {
		t.Fatalf("/model/new: %d %s", code, out)
	}
	cost := func(when string) float64 {
		t.Helper()
		var o completions.OpenAIChatRequest
		if err := json.Unmarshal([]byte(`{"model":"long","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`), &o); err != nil {
			t.Fatal(err)
		}
		req, err := o.ToRequest()
		if err != nil {
			t.Fatal(err)
		}
		resp, err := g.Complete(context.Background(), completions.Scope{}, req)
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		return resp.Usage.Costs.TotalTokensCost
	}
	before := cost("as added")
	if math.Abs(before-1.8) > 1e-9 {
		t.Fatalf("as added: 300k prompt tokens cost %g, want 1.8 (the catalogue's rate above 200k)", before)
	}

	_, out := adminCall(t, hs, "GET", "/model/info", "")
	var list struct {
		Data []map[string]any `json:"data"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatal(err)
	}
	var entry map[string]any
	for _, e := range list.Data {
		if e["model_info"].(map[string]any)["id"] == "long-1" {
			entry = e
		}
	}
	if entry == nil {
		t.Fatalf("/model/info lacks long-1: %s", out)
	}
	entry["litellm_params"].(map[string]any)["rpm"] = 100
	body, _ := json.Marshal(entry)
	if code, out := adminCall(t, hs, "POST", "/model/update", string(body)); code != http.StatusOK {
		t.Fatalf("/model/update with the /model/info entry: %d %s", code, out)
	}
	if after := cost("after the entry was sent back"); math.Abs(after-before) > 1e-9 {
		t.Errorf("after the /model/info entry was sent back: 300k prompt tokens cost %g, was %g", after, before)
	}
	// A rate changed in the entry is the deployment's own.
	if code, out := adminCall(t, hs, "PATCH", "/model/long-1/update", `{"model_info":{"input_cost_per_token":0.000001}}`); code != http.StatusOK {
		t.Fatalf("PATCH: %d %s", code, out)
	}
	if got := cost("own rate"); math.Abs(got-0.3) > 1e-9 {
		t.Errorf("an own input rate of $1 per million: 300k prompt tokens cost %g, want 0.3", got)
	}
}
