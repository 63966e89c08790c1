package server

import (
	"net/http"
	"testing"
)

// TestBackgroundRefusedByKeyModelLimits: a background /v1/responses request for a model
// the key's own per-model limits refuse (model_rpm_limit used up in the minute,
// model_max_budget spent; a model group both of whose members are refused) is refused at
// create time with the synchronous request's status and message (LiteLLM's 429
// model_per_key, 400 budget_exceeded), not queued to fail later; a model the limits leave
// alone is queued.
func TestBackgroundRefusedByKeyModelLimits(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	g := litellmGenerate(t, s, `{"model_rpm_limit":{"openai/ok":1},"model_max_budget":{"ok2":0}}`)
	if resp, b := chatWith(t, hs, g.Key, "openai/ok"); resp.StatusCode != http.StatusOK {
		t.Fatalf("openai/ok's one request of the minute: %d %s", resp.StatusCode, b)
	}
	for model, status := range map[string]int{"openai/ok": http.StatusTooManyRequests, "openai/ok2": http.StatusBadRequest, "pair": http.StatusTooManyRequests} {
		sync, sb := post(t, hs.URL+"/v1/responses", g.Key, `{"model":"`+model+`","input":"x"}`)
		bg, bb := post(t, hs.URL+"/v1/responses", g.Key, `{"model":"`+model+`","input":"x","background":true}`)
		smsg, _, _ := openAIErrorOf(t, sb)
		bmsg, _, _ := openAIErrorOf(t, bb)
		if sync.StatusCode != status || bg.StatusCode != status || bmsg != smsg || smsg == "" {
			t.Errorf("%s: synchronous %d %s, background %d %s; want both %d with one message", model, sync.StatusCode, sb, bg.StatusCode, bb, status)
		}
	}
	bg, bb := post(t, hs.URL+"/v1/responses", g.Key, `{"model":"openai/other","input":"x","background":true}`)
	if bg.StatusCode != http.StatusOK || responseOf(t, bb)["status"] != "queued" {
		t.Fatalf("a model without limits of its own in the background: %d %s", bg.StatusCode, bb)
	}
}
