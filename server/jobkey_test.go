package server

import (
	"context"
	"net/http"
	"testing"

	"github.com/switchyard-ai/switchyard/optimizer"
)

// TestJobKeyMinterLimits mints an optimization job key the way the optimizer does and checks
// that it is held to its model, its call budget and the completions routes.
func TestJobKeyMinterLimits(t *testing.T) {
	hs, s, _ := completionsServer(t)
	k, err := jobKeyMinter{auth: s.Auth()}.MintKey(context.Background(), optimizer.KeyGrant{
		Owner: "key_job_owner", JobID: "opt_1", Model: "up/ok", MaxCalls: 2, MaxTokens: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Revoke()
	url := hs.URL + "/v1/chat/completions"
	body := `{"model":"up/ok","messages":[{"role":"user","content":"hi"}]}`
	for i := 0; i < 2; i++ {
		if resp, b := post(t, url, k.Key, body); resp.StatusCode != http.StatusOK {
			t.Fatalf("call %d within budget: %d %s", i+1, resp.StatusCode, b)
		}
	}
	if resp, b := post(t, url, k.Key, body); resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("call over the budget: %d %s", resp.StatusCode, b)
	}
	if resp, _ := post(t, url, k.Key, `{"model":"up/other","messages":[{"role":"user","content":"hi"}]}`); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("other model: %d", resp.StatusCode)
	}
	if u := k.Usage(); u.Tokens == 0 {
		t.Fatalf("usage not metered: %+v", u)
	}
	wantError(t, do(t, s, "GET", "/api/v1/test/whoami", k.Key, ""), http.StatusForbidden, KindForbidden, "limited in scope")
}
