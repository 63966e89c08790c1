package server

import (
	"net/http"
	"testing"
)

// TestReview11fModelLookupScoped: GET /v1/models lists to a scoped (virtual) key only the
// models it may call (completions.go: "a scoped key sees what it may call"), but
// GET /v1/models/{id...} answers 200 for any routed model, confirming to a key held to
// openai/ok that openai/other is served. The lookup should answer as the list does (404
// model_not_found) for a model outside the key's list.
func TestReview11fModelLookupScoped(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	vk := issue(t, s, `{"models":["openai/ok"]}`)
	if r := do(t, s, "GET", "/v1/models/openai/ok", vk.Key, ""); r.status != http.StatusOK {
		t.Fatalf("allowed model: %d %s", r.status, r.raw)
	}
	if r := do(t, s, "GET", "/v1/models/openai/other", vk.Key, ""); r.status != http.StatusNotFound {
		t.Fatalf("GET /v1/models/openai/other with a key held to openai/ok: %d %s (the list hides it)", r.status, r.raw)
	}
}
