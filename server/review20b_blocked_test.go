package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// litellmAuthError reads body as LiteLLM's auth error envelope.
func litellmAuthError(t *testing.T, body string) (message, typ, param, code string) {
	t.Helper()
	var e struct {
		Error struct {
			Message, Type string
			Param, Code   *string
		}
	}
	if err := json.Unmarshal([]byte(body), &e); err != nil || e.Error.Param == nil || e.Error.Code == nil {
		t.Fatalf("not LiteLLM's error envelope: %s", body)
	}
	return e.Error.Message, e.Error.Type, *e.Error.Param, *e.Error.Code
}

// TestReview20bBlockedTeamAndKeyAreAuthErrors: LiteLLM refuses a key of a blocked team in
// its auth check (auth_checks.common_checks raises "Team=… is blocked. Update via
// `/team/unblock` if you're an admin.", which user_api_key_auth's exception handler answers
// 401 auth_error "Authentication Error, …"), and a blocked key the same way ("Key is
// blocked…"). The OpenAI-compatible routes answer both so; Switchyard's own envelope answers
// both as it answers a blocked key, a 429.
func TestReview20bBlockedTeamAndKeyAreAuthErrors(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	litellmTeamNew(t, s, `{"team_id":"ml","models":["openai/ok"]}`)
	inTeam := litellmGenerate(t, s, `{"team_id":"ml"}`)
	blockedKey := litellmGenerate(t, s, `{}`)
	if r := do(t, s, "POST", "/team/block", testKey, `{"team_id":"ml"}`); r.status != http.StatusOK {
		t.Fatalf("/team/block: %d %s", r.status, r.raw)
	}
	if r := do(t, s, "POST", "/key/block", testKey, `{"key":"`+blockedKey.Token+`"}`); r.status != http.StatusOK {
		t.Fatalf("/key/block: %d %s", r.status, r.raw)
	}
	for _, c := range []struct{ key, want string }{
		{inTeam.Key, "Authentication Error, Team=ml is blocked. Update via `/team/unblock` if you're an admin."},
		{blockedKey.Key, "Authentication Error, Key is blocked. Update via `/key/unblock` if you're an admin."},
	} {
		st, body := chatStatus(t, hs.URL, c.key, "openai/ok")
		if st != http.StatusUnauthorized {
			t.Fatalf("/v1/chat/completions of a blocked key or team: %d %s, want 401", st, body)
		}
		msg, typ, param, code := litellmAuthError(t, body)
		if msg != c.want || typ != "auth_error" || param != "None" || code != "401" {
			t.Errorf("refusal %s, want LiteLLM's auth_error %q", body, c.want)
		}
		// Switchyard's own envelope: the blocked team as the blocked key, a 429.
		resp, b := post(t, hs.URL+"/api/v1/completions", c.key, `{"models":["openai/ok"],"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`)
		if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(string(b), "is blocked. Update via") {
			t.Errorf("/api/v1/completions of a blocked key or team: %d %s, want 429 naming the block", resp.StatusCode, b)
		}
	}
}

// TestReview20bTeamZeroBudgetBlocks: a team's max_budget 0 is taken as a key's is (LiteLLM
// accepts it and then refuses every request): the team is blocked, /team/info shows
// max_budget 0 and blocked, and another max_budget lifts that block (not one from
// /team/block). tpm_limit and rpm_limit 0 stay 400s, as for a key.
func TestReview20bTeamZeroBudgetBlocks(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	tm := litellmTeamNew(t, s, `{"team_id":"zero","max_budget":0}`)
	if !tm.Blocked || tm.MaxBudget == nil || *tm.MaxBudget != 0 {
		t.Fatalf("max_budget 0: %+v, want blocked with max_budget 0", tm)
	}
	k := litellmGenerate(t, s, `{"team_id":"zero"}`)
	if st, body := chatStatus(t, hs.URL, k.Key, "openai/ok"); st != http.StatusUnauthorized || !strings.Contains(body, "Team=zero is blocked") {
		t.Fatalf("a key of a team with max_budget 0: %d %s", st, body)
	}
	if r := do(t, s, "POST", "/team/update", testKey, `{"team_id":"zero","max_budget":5}`); r.status != http.StatusOK || !strings.Contains(r.raw, `"blocked":false`) {
		t.Fatalf("a new max_budget did not lift the budget block: %d %s", r.status, r.raw)
	}
	if st, body := chatStatus(t, hs.URL, k.Key, "openai/ok"); st != http.StatusOK {
		t.Fatalf("after the block was lifted: %d %s", st, body)
	}
	// Blocked by /team/block: a budget change does not lift it.
	if r := do(t, s, "POST", "/team/block", testKey, `{"team_id":"zero"}`); r.status != http.StatusOK {
		t.Fatalf("/team/block: %d %s", r.status, r.raw)
	}
	if r := do(t, s, "POST", "/team/update", testKey, `{"team_id":"zero","max_budget":7}`); r.status != http.StatusOK || !strings.Contains(r.raw, `"blocked":true`) {
		t.Fatalf("a budget change lifted a /team/block: %d %s", r.status, r.raw)
	}
	// max_budget 0 on update blocks; blocked false with it contradicts it.
	litellmTeamNew(t, s, `{"team_id":"later","max_budget":3}`)
	if r := do(t, s, "POST", "/team/update", testKey, `{"team_id":"later","max_budget":0}`); r.status != http.StatusOK || !strings.Contains(r.raw, `"blocked":true`) || !strings.Contains(r.raw, `"max_budget":0`) {
		t.Fatalf("max_budget 0 on update: %d %s", r.status, r.raw)
	}
	wantLiteLLMError(t, do(t, s, "POST", "/team/new", testKey, `{"max_budget":0,"blocked":false}`), http.StatusBadRequest, "blocked")
	for _, f := range []string{"rpm_limit", "tpm_limit"} {
		wantLiteLLMError(t, do(t, s, "POST", "/team/new", testKey, `{"`+f+`":0}`), http.StatusBadRequest, f)
		wantLiteLLMError(t, do(t, s, "POST", "/key/generate", testKey, `{"`+f+`":0}`), http.StatusBadRequest, f)
	}
}
