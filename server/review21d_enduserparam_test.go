package server

import (
	"net/http"
	"strings"
	"testing"
)

// TestReview21dEndUserIDRefusalParam: an end user id no URL can name ("." or "..") is
// refused with the error's param naming the header or field that gave it, as a refusal past
// --end-users-per-key already did; param was null. (/v1/messages answers in Anthropic's
// error shape, which has no param.)
func TestReview21dEndUserIDRefusalParam(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	k := litellmGenerate(t, s, `{"max_budget":10}`)
	chat := `{"model":"openai/ok","messages":[{"role":"user","content":"hi"}]`
	cases := []struct {
		path, body string
		headers    map[string]string
		param      string
	}{
		{"/v1/chat/completions", chat + `,"litellm_metadata":{"user":".."}}`, nil, "litellm_metadata.user"},
		{"/v1/chat/completions", chat + `,"metadata":{"user_id":"."}}`, nil, "metadata.user_id"},
		{"/v1/chat/completions", chat + `,"user":".."}`, nil, "user"},
		{"/v1/chat/completions", chat + `}`, map[string]string{"X-Litellm-End-User-Id": ".."}, "x-litellm-end-user-id"},
		{"/v1/responses", `{"model":"openai/ok","input":"hi","safety_identifier":"."}`, nil, "safety_identifier"},
	}
	for _, c := range cases {
		st, b := postWith(t, hs.URL+c.path, k.Key, c.body, c.headers)
		if st != http.StatusBadRequest || !strings.Contains(b, `"param":"`+c.param+`"`) {
			t.Errorf("%s %s %v: %d %s, want 400 with param %q", c.path, c.body, c.headers, st, b, c.param)
		}
	}
}
