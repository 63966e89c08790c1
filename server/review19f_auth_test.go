package server

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/switchyard-ai/switchyard/mcpgateway"
)

// TestReview19fLiteLLMKeyHeaderWinsOverAuthorization: LiteLLM's x-litellm-api-key exists so
// that a client can keep Authorization for something else (an MCP server's own token, a
// Vertex SDK's credential); LiteLLM takes x-litellm-api-key first. A request carrying both
// is the x-litellm-api-key's, on the MCP routes and the /v1/ ones (and a batch it creates
// runs as that key: Credential), but not on the service's own /api/v1/ routes.
func TestReview19fLiteLLMKeyHeaderWinsOverAuthorization(t *testing.T) {
	m := newMCPTestServer(t, mcpgateway.Options{})
	for _, path := range []string{"/mcp-rest/tools/list", "/v1/mcp/server"} {
		req, _ := http.NewRequest("GET", m.hs.URL+path, nil)
		req.Header.Set("Authorization", "Bearer upstream-mcp-token-not-a-switchyard-key")
		req.Header.Set("X-Litellm-Api-Key", "Bearer "+testKey)
		resp, err := m.hs.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s with Authorization (another token) and x-litellm-api-key (the key): %d, want 200", path, resp.StatusCode)
		}
	}
	r := httptest.NewRequest("POST", "/v1/batches", nil)
	r.Header.Set("Authorization", "Bearer something-else")
	r.Header.Set("X-Litellm-Api-Key", testKey)
	want := sha256.Sum256([]byte(testKey))
	if got := Credential(r); got != hex.EncodeToString(want[:]) {
		t.Errorf("Credential of a /v1/ request with both headers is not x-litellm-api-key's")
	}
	// The service's own operations take Authorization only, as the spec says.
	r = httptest.NewRequest("GET", "/api/v1/keys", nil)
	r.Header.Set("Authorization", "Bearer "+testKey)
	r.Header.Set("X-Litellm-Api-Key", "other")
	if got := bearer(r); got != testKey {
		t.Errorf("/api/v1/ with both headers: key %q, want Authorization's", got)
	}
}
