package server

import (
	"strings"
	"testing"
)

// OpenAI refuses a bound of 0 on its chat and Responses APIs: max_tokens and
// max_completion_tokens must be at least 1 and max_output_tokens at least 16. Each is a 400
// naming the field, without asking the upstream; the legacy /v1/completions takes
// max_tokens 0, as OpenAI's does.
func TestReview23eZeroMaxTokensRefused(t *testing.T) {
	hs, _, up := completionsServer(t)
	for _, c := range []struct{ path, body, param, msg string }{
		{"/v1/chat/completions", `{"model":"up/ok","max_tokens":0,"messages":[{"role":"user","content":"hi"}]}`, "max_tokens", "at least 1, got 0"},
		{"/v1/chat/completions", `{"model":"up/ok","max_completion_tokens":0,"messages":[{"role":"user","content":"hi"}]}`, "max_completion_tokens", "at least 1, got 0"},
		{"/v1/chat/completions", `{"model":"up/ok","max_completion_tokens":5,"max_tokens":0,"messages":[{"role":"user","content":"hi"}]}`, "max_tokens", "at least 1, got 0"},
		{"/v1/chat/completions", `{"model":"up/ok","max_tokens":-1,"stream":true,"messages":[{"role":"user","content":"hi"}]}`, "max_tokens", "at least 1, got -1"},
		{"/v1/responses", `{"model":"up/ok","max_output_tokens":0,"input":"hi"}`, "max_output_tokens", "at least 16, got 0"},
		{"/v1/responses", `{"model":"up/ok","max_output_tokens":15,"input":"hi","stream":true}`, "max_output_tokens", "at least 16, got 15"},
		{"/v1/completions", `{"model":"up/ok","max_tokens":-1,"prompt":"hi"}`, "max_tokens", "must not be negative"},
	} {
		resp, b := do2(t, "POST", hs.URL+c.path, testKey, c.body, nil)
		e := wantOpenAIError(t, c.body, resp, b, 400, "invalid_request_error", "")
		if e.Param == nil || *e.Param != c.param || !strings.Contains(e.Message, c.msg) {
			t.Errorf("%s %s: param %v message %q, want %s with %q", c.path, c.body, e.Param, e.Message, c.param, c.msg)
		}
	}
	up.mu.Lock()
	n := len(up.messages)
	up.mu.Unlock()
	if n != 0 {
		t.Errorf("the upstream was asked %d times for refused requests", n)
	}
	for _, c := range []struct{ path, body string }{
		{"/v1/chat/completions", `{"model":"up/ok","max_tokens":1,"messages":[{"role":"user","content":"hi"}]}`},
		{"/v1/responses", `{"model":"up/ok","max_output_tokens":16,"input":"hi"}`},
		{"/v1/completions", `{"model":"up/ok","max_tokens":0,"prompt":"hi"}`},
	} {
		if resp, b := do2(t, "POST", hs.URL+c.path, testKey, c.body, nil); resp.StatusCode != 200 {
			t.Errorf("%s %s: %d %s", c.path, c.body, resp.StatusCode, b)
		}
	}
}
