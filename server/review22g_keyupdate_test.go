package server

import (
	"encoding/json"
	"net/http"
	"testing"
)

// LiteLLM's /key/update answers {"key": <the key as given>, ...the updated key}: a script
// reading resp["key"] after an update must find the key it named, by token or the key
// itself.
func TestReview22gKeyUpdateAnswersKey(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	g := litellmGenerate(t, s, `{"key_alias":"upd"}`)
	for _, ref := range []string{g.Token, g.Key} {
		body, _ := json.Marshal(map[string]any{"key": ref, "max_budget": 7})
		r := do(t, s, "POST", "/key/update", testKey, string(body))
		if r.status != http.StatusOK {
			t.Fatalf("POST /key/update: %d %s", r.status, r.raw)
		}
		var out map[string]any
		if err := json.Unmarshal([]byte(r.raw), &out); err != nil {
			t.Fatal(err)
		}
		if out["key"] != ref || out["token"] != g.Token || out["max_budget"] != 7.0 {
			t.Fatalf("update by %q answered %s: want key %q, token %q and max_budget 7", ref, r.raw, ref, g.Token)
		}
	}
}
