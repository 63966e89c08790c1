package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
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
	if resp, _ := post(t, url, k.Key, `{"model":"up/other","messages":[{"role":"user","content":"hi"}]}`); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("other model: %d", resp.StatusCode)
	}
	if u := k.Usage(); u.Tokens == 0 {
		t.Fatalf("usage not metered: %+v", u)
	}
	wantError(t, do(t, s, "GET", "/api/v1/test/whoami", k.Key, ""), http.StatusForbidden, KindForbidden, "limited in scope")
}

// TestJobKeyCallTimeout: a job key carries the job's llm_call_timeout_seconds; the agent's
// calls made with it are held to it (here shorter than the model takes), on this replica
// and on one that rebuilds the key's scope from the store.
func TestJobKeyCallTimeout(t *testing.T) {
	hs, s, _ := completionsServer(t)
	body := `{"model":"up/slow","max_retries":0,"messages":[{"role":"user","content":"hi"}]}`
	mint := func(d time.Duration) *optimizer.JobKey {
		k, err := jobKeyMinter{auth: s.Auth()}.MintKey(context.Background(), optimizer.KeyGrant{
			Owner: "key_job_owner", JobID: "opt_1", Model: "up/slow", MaxCalls: 10, MaxTokens: 1 << 20, CallTimeout: d})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(k.Revoke)
		return k
	}
	if resp, b := post(t, hs.URL+"/v1/chat/completions", mint(5*time.Second).Key, body); resp.StatusCode != http.StatusOK {
		t.Fatalf("within the call timeout: %d %s", resp.StatusCode, b)
	}
	resp, b := post(t, hs.URL+"/v1/chat/completions", mint(100*time.Millisecond).Key, body)
	if resp.StatusCode != http.StatusBadGateway || !strings.Contains(string(b), "timeout") {
		t.Fatalf("past the call timeout: %d %s", resp.StatusCode, b)
	}
	// Another replica rebuilds the scope from the key's stored document.
	if _, err := completions.CreateSharedBudget(context.Background(), s.cfg.Store, "job/t", completions.BudgetLimits{MaxCalls: 1}); err != nil {
		t.Fatal(err)
	}
	sc, err := keyScopes(s.cfg.Store)(context.Background(), "key_job_owner",
		json.RawMessage(`{"tag":"optimize:opt_1","budget":"job/t","call_timeout_ms":30000}`))
	if got, ok := sc.(completions.Scope); err != nil || !ok || got.CallTimeout != 30*time.Second || got.Budget == nil {
		t.Fatalf("rebuilt scope %+v, err %v", sc, err)
	}
}

// TestJobKeyReclaimedByAnotherReplica: a replica taking over a job whose worker died
// reclaims the dead run's key by its reference: no replica accepts the key after that, what
// it spent is returned, and reclaiming it again says the key is gone.
func TestJobKeyReclaimedByAnotherReplica(t *testing.T) {
	st := newTestStore(t)
	up := httptest.NewServer(&fakeOpenAIUpstream{})
	t.Cleanup(up.Close)
	hsA, a := replica(t, st, up)
	hsB, b := replica(t, st, up)
	k, err := jobKeyMinter{auth: a.Auth()}.MintKey(context.Background(), optimizer.KeyGrant{
		Owner: "key_job_owner", JobID: "opt_1", Model: "up/ok", MaxCalls: 10, MaxTokens: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if k.Ref == "" || strings.Contains(k.Ref, k.Key) {
		t.Fatalf("ref %q: empty, or it holds the key", k.Ref)
	}
	body := `{"model":"up/ok","messages":[{"role":"user","content":"hi"}]}`
	for _, hs := range []*httptest.Server{hsA, hsB} {
		if resp, out := post(t, hs.URL+"/v1/chat/completions", k.Key, body); resp.StatusCode != http.StatusOK {
			t.Fatalf("before the reclaim: %d %s", resp.StatusCode, out)
		}
	}
	spent := k.Usage()
	u, err := jobKeyMinter{auth: b.Auth()}.ReclaimKey(context.Background(), k.Ref)
	if err != nil || u.Tokens != spent.Tokens || u.Tokens == 0 || u.CostUSD != spent.CostUSD {
		t.Fatalf("ReclaimKey = %+v, %v; the key spent %+v", u, err, spent)
	}
	if resp, out := post(t, hsB.URL+"/v1/chat/completions", k.Key, body); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("another replica after the reclaim: %d %s", resp.StatusCode, out)
	}
	// The minting replica still holds the key in memory; its budget is gone, so it spends nothing.
	if resp, out := post(t, hsA.URL+"/v1/chat/completions", k.Key, body); resp.StatusCode == http.StatusOK {
		t.Errorf("the minting replica after the reclaim: %d %s", resp.StatusCode, out)
	}
	if _, err := (jobKeyMinter{auth: b.Auth()}).ReclaimKey(context.Background(), k.Ref); !errors.Is(err, optimizer.ErrKeyGone) {
		t.Errorf("second reclaim: %v, want ErrKeyGone", err)
	}
	if _, err := (jobKeyMinter{auth: b.Auth()}).ReclaimKey(context.Background(), "nonsense"); err == nil || errors.Is(err, optimizer.ErrKeyGone) {
		t.Errorf("malformed ref: %v", err)
	}
}
