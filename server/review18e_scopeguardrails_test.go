package server

import (
	"net/http"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/completions"
)

// TestReview18eScopedKeyGuardrails: completions.Scope.Guardrails is "guardrails every chat
// request of the scope runs ... a request cannot turn them off", and keyScopes rebuilds a
// shared key's completions.Scope with them. But completionsScope copies only Budget, Tag
// and CallTimeout from a Principal whose Scope is a completions.Scope or *completions.Scope
// (a temporary or shared scoped key), so its guardrails are dropped: fail open.
func TestReview18eScopedKeyGuardrails(t *testing.T) {
	hs, s, up := completionsServerWith(t, func(o *completions.Options) {
		o.Guardrails = []completions.GuardrailConfig{
			{Name: "words", Kind: completions.GuardrailBannedWords, Mode: completions.GuardrailPreCall, Words: []string{"forbidden"}},
		}
	})
	revoke := s.Auth().AddTemporaryKey("sy-review18e-value", "agent", completions.Scope{Owner: "agent", Guardrails: []string{"words"}})
	defer revoke()
	revokePtr := s.Auth().AddTemporaryKey("sy-review18e-pointer", "agent", &completions.Scope{Owner: "agent", Guardrails: []string{"words"}})
	defer revokePtr()
	for _, key := range []string{"sy-review18e-value", "sy-review18e-pointer"} {
		resp, b := post(t, hs.URL+"/v1/chat/completions", key, `{"model":"up/ok","messages":[{"role":"user","content":"a forbidden topic"}]}`)
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "words") {
			t.Errorf("%s: a scope's guardrail not run: %d %s", key, resp.StatusCode, b)
		}
	}
	if n := up.count(); n != 0 {
		t.Errorf("%d upstream calls for requests the scope's guardrail blocks", n)
	}
}
