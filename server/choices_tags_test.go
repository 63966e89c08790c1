package server

import (
	"testing"
)

// TestChoicesCarryHeaderTags: a whole (not streamed) answer with n > 1 takes the
// X-Switchyard-Tags / x-litellm-tags headers' tags as one choice does: each choice's
// request in the usage log carries them.
func TestChoicesCarryHeaderTags(t *testing.T) {
	hs := usageServer(t)
	resp, b := do2(t, "POST", hs.URL+"/v1/chat/completions", testKey, `{"model":"up/ok","n":2,"messages":[{"role":"user","content":"b"}]}`,
		map[string]string{"X-Switchyard-Tags": "team:search", "x-litellm-tags": "feature:draft"})
	if resp.StatusCode != 200 {
		t.Fatalf("n=2: %d %s", resp.StatusCode, b)
	}
	for _, tag := range []string{"team:search", "feature:draft"} {
		code, m := getJSON(t, hs.URL+"/api/v1/usage/requests?request_tag="+tag, testKey)
		if data, _ := m["data"].([]any); code != 200 || len(data) != 2 {
			t.Errorf("requests tagged %s: %d %v, want the 2 choices' requests", tag, code, m)
		}
	}
	if resp, b := do2(t, "POST", hs.URL+"/v1/chat/completions", testKey, `{"model":"up/ok","n":2,"messages":[{"role":"user","content":"b"}]}`,
		map[string]string{"X-Switchyard-Tags": "has space"}); resp.StatusCode != 400 {
		t.Errorf("n=2 with a bad header tag: %d %s, want 400", resp.StatusCode, b)
	}
}
