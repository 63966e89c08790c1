package server

import (
	"net/http"
	"strings"
	"testing"
)

// Review 11e: once a key's tokens_per_minute is used, every surface answers 429 with
// Retry-After and without x-should-retry: false.
func TestReview11eTokenRateSurfaces(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	vk := issue(t, s, `{"tokens_per_minute":5}`)
	if resp, b := chatWith(t, hs, vk.Key, "openai/ok"); resp.StatusCode != http.StatusOK {
		t.Fatalf("first: %d %s", resp.StatusCode, b)
	}
	for path, body := range map[string]string{
		"/v1/chat/completions":        `{"model":"openai/ok","messages":[{"role":"user","content":"hi"}]}`,
		"/v1/chat/completions#stream": `{"model":"openai/ok","stream":true,"messages":[{"role":"user","content":"hi"}]}`,
		"/v1/responses":               `{"model":"openai/ok","input":"hi"}`,
		"/v1/messages":                `{"model":"openai/ok","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`,
		"/api/v1/completions":         `{"models":["openai/ok"],"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`,
	} {
		url := hs.URL + strings.Split(path, "#")[0]
		resp, b := post(t, url, vk.Key, body)
		if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" || resp.Header.Get("X-Should-Retry") == "false" {
			t.Errorf("%s: %d %v %s", path, resp.StatusCode, resp.Header, b)
		}
	}
}
