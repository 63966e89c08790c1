package server

import (
	"net/http"
	"strings"
	"testing"
)

// TestReview21bEndUserRefusalNamesItsSource: a gateway request's end user refused (an id
// no URL can name, or one past --end-users-per-key) is named by where the request gave
// it: LiteLLM's header, Anthropic's metadata.user_id, the Responses API's
// safety_identifier, OpenAI's user.
func TestReview21bEndUserRefusalNamesItsSource(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	chat := `{"model":"openai/ok","messages":[{"role":"user","content":"hi"}]}`
	cases := []struct {
		path, body string
		headers    map[string]string
		field      string
	}{
		{"/v1/chat/completions", chat, map[string]string{"X-Litellm-End-User-Id": ".."}, "x-litellm-end-user-id: "},
		{"/v1/chat/completions", chat, map[string]string{"X-Litellm-Customer-Id": "."}, "x-litellm-customer-id: "},
		{"/v1/messages", `{"model":"openai/ok","max_tokens":5,"messages":[{"role":"user","content":"hi"}],"metadata":{"user_id":".."}}`, nil, "metadata.user_id: "},
		{"/v1/responses", `{"model":"openai/ok","input":"hi","safety_identifier":"."}`, nil, "safety_identifier: "},
		{"/v1/responses", `{"model":"openai/ok","input":"hi","user":"."}`, nil, "user: "},
		{"/v1/chat/completions", `{"model":"openai/ok","messages":[{"role":"user","content":"hi"}],"user":".."}`, nil, "user: "},
	}
	for _, c := range cases {
		st, b := postWith(t, hs.URL+c.path, testKey, c.body, c.headers)
		if st != http.StatusBadRequest || !strings.Contains(b, c.field) {
			t.Errorf("%s %s %v: %d %s, want 400 naming %q", c.path, c.body, c.headers, st, b, c.field)
		}
	}
	s.cfg.MaxEndUsersPerKey = 1
	if r := do(t, s, "POST", "/customer/new", testKey, `{"user_id":"a"}`); r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	st, b := postWith(t, hs.URL+"/v1/chat/completions", testKey, chat, map[string]string{"X-Litellm-End-User-Id": "b"})
	if st != http.StatusBadRequest || !strings.Contains(b, "x-litellm-end-user-id: this key has 1 end users") || !strings.Contains(b, `"param":"x-litellm-end-user-id"`) {
		t.Errorf("a header naming an end user past the bound: %d %s", st, b)
	}
}
