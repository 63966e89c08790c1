package server

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestAnthropicSurfaceErrors: failures on /v1/messages routes are Anthropic's envelope with
// its error types; x-api-key is a key on every route.
func TestAnthropicSurfaceErrors(t *testing.T) {
	hs, _, _ := completionsServer(t)
	for _, c := range []struct {
		path, key, body string
		status          int
		typ, msg        string
	}{
		{"/v1/messages", "", `{}`, http.StatusUnauthorized, "authentication_error", "x-api-key"},
		{"/v1/messages", testKey, `{"model":"up/ok","messages":[{"role":"user","content":"hi"}]}`, http.StatusBadRequest, "invalid_request_error", "max_tokens"},
		{"/v1/messages", testKey, `{"model":"up/ok","max_tokens":5,"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"bash_20250124","name":"bash"}]}`,
			http.StatusBadRequest, "invalid_request_error", "tools[0].type"},
		{"/v1/messages", testKey, `{"model":"nope/x","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`, http.StatusBadRequest, "invalid_request_error", "model"},
		{"/v1/messages/batches", testKey, `{}`, http.StatusNotFound, "not_found_error", "no route"},
		{"/v1/messages", testKey, `{"model":`, http.StatusBadRequest, "invalid_request_error", ""},
		{"/v1/messages", testKey, `{"model":"up/down","max_retries":0,"max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`, 529, "overloaded_error", "overloaded"},
		{"/v1/messages", testKey, `{"model":"up/busy","max_retries":0,"max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`, http.StatusTooManyRequests, "rate_limit_error", "Rate limit"},
		{"/v1/messages", testKey, `{"model":"up/toolong","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`, http.StatusBadRequest, "invalid_request_error", "context length"},
	} {
		req, _ := http.NewRequest("POST", hs.URL+c.path, strings.NewReader(c.body))
		if c.key != "" {
			req.Header.Set("x-api-key", c.key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			Type  string `json:"type"`
			Error struct{ Type, Message string }
		}
		json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != c.status || body.Type != "error" || body.Error.Type != c.typ || !strings.Contains(body.Error.Message, c.msg) {
			t.Errorf("%s %s: %d %+v, want %d %s containing %q", c.path, c.body, resp.StatusCode, body, c.status, c.typ, c.msg)
		}
	}
	// x-api-key works on the other /v1/ compatibility routes too, but not on the service's
	// own /api/v1/ operations, which the spec has take the Authorization header.
	req, _ := http.NewRequest("GET", hs.URL+"/v1/models", nil)
	req.Header.Set("x-api-key", testKey)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("GET /v1/models with x-api-key: %v %v", resp.StatusCode, err)
	}
	req, _ = http.NewRequest("GET", hs.URL+"/api/v1/conversations", nil)
	req.Header.Set("x-api-key", testKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(b), "Authorization: Bearer") || strings.Contains(string(b), "x-api-key") {
		t.Errorf("GET /api/v1/conversations with x-api-key only: %d %s", resp.StatusCode, b)
	}
	req.Header.Set("Authorization", "Bearer "+testKey)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("GET /api/v1/conversations with Authorization: %v %v", resp.StatusCode, err)
	}
}
