package server

import (
	"net/http"
	"strings"
	"testing"
)

// An unknown pref_ preference_id answers 404 naming the field even with a timeout too short
// for any ranking and a default: the default answers only a selection that could not
// finish, never a request naming something this key does not own.
func TestModelSelectUnknownPreferenceWithTinyTimeout(t *testing.T) {
	ts, _ := modelSelectServer(t, nil)
	body := `{"messages":[{"role":"user","content":"hi"}],"llm_providers":["openai/gpt-4o","openai/gpt-4o-mini"],` +
		`"timeout":1e-9,"default":"openai/gpt-4o","preference_id":"pref_000000000000000000000000"}`
	status, out := postSelect(t, ts, "/api/v1/model-select", testKey, body)
	msg, _ := out["message"].(string)
	if status != http.StatusNotFound || !strings.HasPrefix(msg, "preference_id") {
		t.Fatalf("%d %v; want 404 naming preference_id", status, out)
	}
}
