package server

import (
	"net/http"
	"strings"
	"testing"
)

// TestReview27aPassThroughBodyModelOnce: the model checked is the one the provider reads:
// a body's "Model" (which Go's decoder would fold into model, a provider ignores) does not
// stand for its "model", and a body naming model twice is a 400 naming the field, neither
// reaching the upstream.
func TestReview27aPassThroughBodyModelOnce(t *testing.T) {
	hs, s, up := passThroughServer(t)
	vk := issue(t, s, `{"name":"narrow","models":["openai/gpt-4o-mini"]}`)
	h := map[string]string{"Authorization": "Bearer " + vk.Key}
	before := up.count()
	resp, b := sendPassThrough(t, "POST", hs.URL+"/openai/v1/chat/completions", `{"model":"gpt-4o","Model":"gpt-4o-mini","messages":[]}`, h)
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("case-folded Model: %d %s, want 401", resp.StatusCode, b)
	}
	resp, b = sendPassThrough(t, "POST", hs.URL+"/openai/v1/chat/completions", `{"model":"gpt-4o","model":"gpt-4o-mini","messages":[]}`, h)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(b, "model") {
		t.Errorf("model twice: %d %s, want 400 naming model", resp.StatusCode, b)
	}
	if up.count() != before {
		t.Errorf("the upstream was called")
	}
}
