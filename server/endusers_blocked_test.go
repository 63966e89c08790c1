package server

import (
	"encoding/json"
	"net/http"
	"testing"
)

// TestBlockedEndUserErrorCode: a blocked end user's refusal on the OpenAI-compatible
// surface carries LiteLLM's code "400" (not null), with its message and status.
func TestBlockedEndUserErrorCode(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	if r := do(t, s, "POST", "/customer/block", testKey, `{"user_ids":["zoe"]}`); r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	st, b := postWith(t, hs.URL+"/v1/chat/completions", testKey, `{"model":"openai/ok","messages":[{"role":"user","content":"hi"}],"user":"zoe"}`, nil)
	var body struct {
		Error struct {
			Message string  `json:"message"`
			Code    *string `json:"code"`
		} `json:"error"`
	}
	if st != http.StatusBadRequest || json.Unmarshal([]byte(b), &body) != nil || body.Error.Code == nil || *body.Error.Code != "400" ||
		body.Error.Message != "User blocked from making LLM API Calls. User=zoe" {
		t.Fatalf("blocked zoe: %d %s", st, b)
	}
}
