package server

import "testing"

// TestReview27bAPIKeyBeforeXAPIKey: without Authorization, LiteLLM reads Azure's api-key
// before Anthropic's x-api-key (user_api_key_auth's order), so a client sending both (an
// Azure SDK behind a proxy that adds x-api-key) is the api-key's caller, on the deployment
// routes and on /v1 alike; Authorization: Bearer still wins over both.
func TestReview27bAPIKeyBeforeXAPIKey(t *testing.T) {
	hs, _, _ := deploymentsServer(t)
	const body = `{"model":"chat","messages":[{"role":"user","content":"hi"}]}`
	for _, path := range []string{"/openai/deployments/chat/chat/completions?api-version=2024-10-21", "/v1/chat/completions"} {
		resp, b := do2(t, "POST", hs.URL+path, "", body, map[string]string{"api-key": testKey, "x-api-key": "sy-not-a-key"})
		if resp.StatusCode != 200 {
			t.Errorf("%s: api-key beside another x-api-key: %d %s", path, resp.StatusCode, b)
		}
		resp, b = do2(t, "POST", hs.URL+path, "sy-not-a-key", body, map[string]string{"api-key": testKey})
		wantOpenAIError(t, path+": Authorization wins", resp, b, 401, "invalid_request_error", "invalid_api_key")
	}
}
