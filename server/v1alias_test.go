package server

import (
	"net/http"
	"strings"
	"testing"
)

// TestRoutesWithoutV1Prefix: the /v1 routes answer without the prefix too, as LiteLLM's
// proxy does for clients given its root as their base URL: the same answer, the same key
// checks (401 without a key, a virtual key's model limits) and metrics; paths that are not
// a /v1 route without its prefix stay unrouted.
func TestRoutesWithoutV1Prefix(t *testing.T) {
	hs, s, up := rerankServer(t)
	for _, path := range []string{"/rerank", "/v1/rerank"} {
		resp, b := do2(t, "POST", hs.URL+path, testKey, rerankBody, nil)
		if resp.StatusCode != 200 || !strings.Contains(string(b), `"model":"cohere/rerank-v3.5"`) {
			t.Fatalf("%s: %d %s", path, resp.StatusCode, b)
		}
	}
	if up.calls["/v2/rerank"] != 2 {
		t.Errorf("upstream calls %v", up.calls)
	}
	if resp, b := do2(t, "GET", hs.URL+"/models", testKey, "", nil); resp.StatusCode != 200 || !strings.Contains(string(b), `"cohere/rerank-v3.5"`) {
		t.Errorf("GET /models: %d %s", resp.StatusCode, b)
	}
	if resp, b := do2(t, "GET", hs.URL+"/models/rerank-v3.5", testKey, "", nil); resp.StatusCode != 200 || !strings.Contains(string(b), `"id":"cohere/rerank-v3.5"`) {
		t.Errorf("GET /models/rerank-v3.5: %d %s", resp.StatusCode, b)
	}
	resp, b := do2(t, "POST", hs.URL+"/rerank", "", rerankBody, nil)
	wantOpenAIError(t, "no key", resp, b, http.StatusUnauthorized, "invalid_request_error", "invalid_api_key")
	vk := issue(t, s, `{"name":"rag","models":["jina-reranker-v2-base-multilingual"]}`)
	resp, b = do2(t, "POST", hs.URL+"/rerank", vk.Key, rerankBody, nil)
	wantOpenAIError(t, "a model the key may not call", resp, b, http.StatusUnauthorized, "key_model_access_denied", "401")
	if up.calls["/v2/rerank"] != 2 {
		t.Errorf("refused requests reached the upstream: %v", up.calls)
	}
	for _, path := range []string{"/nothing", "/v1", "/rerankers", "/api/rerank"} {
		resp, b := do2(t, "POST", hs.URL+path, testKey, rerankBody, nil)
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s: %d %s", path, resp.StatusCode, b)
		}
	}
	resp, b = do2(t, "GET", hs.URL+"/rerank", testKey, "", nil)
	if resp.StatusCode != http.StatusMethodNotAllowed || !strings.Contains(string(b), "/v1/rerank") {
		t.Errorf("GET /rerank: %d %s", resp.StatusCode, b)
	}
}
