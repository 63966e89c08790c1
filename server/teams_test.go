package server

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// litellmTeamNew creates a team through /team/new and returns its answer.
func litellmTeamNew(t *testing.T, s *Server, body string) litellmTeam {
	t.Helper()
	r := do(t, s, "POST", "/team/new", testKey, body)
	if r.status != http.StatusOK {
		t.Fatalf("POST /team/new %s: %d %s", body, r.status, r.raw)
	}
	var out litellmTeam
	if err := json.Unmarshal([]byte(r.raw), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// chatStatus sends a chat request of key for model and returns its status and body.
func chatStatus(t *testing.T, url, key, model string) (int, string) {
	t.Helper()
	resp, b := post(t, url+"/v1/chat/completions", key, `{"model":"`+model+`","messages":[{"role":"user","content":"hi"}]}`)
	return resp.StatusCode, string(b)
}

// TestTeamBudgetSharedByKeys: two keys of one team draw on the team's one account: once
// the first spent the team's budget the second, whose own budget is untouched, is refused
// in LiteLLM's words naming the team; /team/info shows the spend and both keys.
func TestTeamBudgetSharedByKeys(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	tm := litellmTeamNew(t, s, `{"team_id":"eng","team_alias":"Engineering","max_budget":0.02,"budget_duration":"30d","members_with_roles":[]}`)
	if tm.TeamID != "eng" || tm.MaxBudget == nil || *tm.MaxBudget != 0.02 || tm.TeamAlias == nil || *tm.TeamAlias != "Engineering" {
		t.Fatalf("created %+v", tm)
	}
	k1 := litellmGenerate(t, s, `{"team_id":"eng","max_budget":1}`)
	k2 := litellmGenerate(t, s, `{"team_id":"eng"}`)
	if k1.TeamID == nil || *k1.TeamID != "eng" {
		t.Fatalf("key info team_id: %+v", k1.TeamID)
	}
	for i := range 2 { // $0.013 each: the second starts at 0.013 < 0.02
		if st, b := chatStatus(t, hs.URL, k1.Key, "openai/ok"); st != http.StatusOK {
			t.Fatalf("call %d of the first key: %d %s", i+1, st, b)
		}
	}
	st, b := chatStatus(t, hs.URL, k2.Key, "openai/ok")
	if st != http.StatusTooManyRequests || !strings.Contains(b, "Budget has been exceeded! Team=eng Current cost: 0.026") ||
		!strings.Contains(b, "Max budget: 0.02") || !strings.Contains(b, `"budget_exceeded"`) {
		t.Fatalf("the second key over the team's budget: %d %s", st, b)
	}
	if vk := keyInfoOf(t, s, testKey, "/api/v1/keys/"+k2.Token); vk.Spend.Requests != 0 || vk.TeamID != "eng" {
		t.Fatalf("the refused key's own account: %+v", vk)
	}
	r := do(t, s, "GET", "/team/info?team_id=eng", testKey, "")
	var info litellmTeamInfo
	if r.status != http.StatusOK || json.Unmarshal([]byte(r.raw), &info) != nil {
		t.Fatalf("/team/info: %d %s", r.status, r.raw)
	}
	if info.TeamInfo.Spend < 0.0259 || len(info.Keys) != 2 || info.TeamInfo.BudgetResetAt == nil {
		t.Fatalf("/team/info: %s", r.raw)
	}
	r = do(t, s, "GET", "/team/list", testKey, "")
	if r.status != http.StatusOK || !strings.Contains(r.raw, `"team_id":"eng"`) || !strings.Contains(r.raw, k1.Token) {
		t.Fatalf("/team/list: %d %s", r.status, r.raw)
	}
	// A raised budget lets the team's keys on, and keeps what was spent.
	r = do(t, s, "POST", "/team/update", testKey, `{"team_id":"eng","max_budget":1}`)
	if r.status != http.StatusOK || !strings.Contains(r.raw, `"spend":0.026`) {
		t.Fatalf("/team/update: %d %s", r.status, r.raw)
	}
	if st, b := chatStatus(t, hs.URL, k2.Key, "openai/ok"); st != http.StatusOK {
		t.Fatalf("after the team's budget was raised: %d %s", st, b)
	}
}

// TestTeamModelsBlockAndRate: a team's models bound its keys (a key asking for more is
// refused naming models; a key without models still cannot call outside the team's), a
// blocked team's keys are all refused until unblocked, and the team's rpm_limit is shared
// by its keys.
func TestTeamModelsBlockAndRate(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	litellmTeamNew(t, s, `{"team_id":"ml","models":["openai/ok"]}`)
	wantLiteLLMError(t, do(t, s, "POST", "/key/generate", testKey, `{"team_id":"ml","models":["openai/other"]}`), http.StatusBadRequest, "models")
	wantError(t, do(t, s, "POST", "/api/v1/keys", testKey, `{"team_id":"ml","models":["openai/ok","openai/other"]}`), http.StatusUnprocessableEntity, KindValidation, "models[1]")
	wantLiteLLMError(t, do(t, s, "POST", "/key/generate", testKey, `{"team_id":"nope"}`), http.StatusNotFound, "team_id")
	a := litellmGenerate(t, s, `{"team_id":"ml"}`)
	b := issue(t, s, `{"team_id":"ml","models":["openai/ok"]}`)
	if st, body := chatStatus(t, hs.URL, a.Key, "openai/other"); st != http.StatusUnauthorized {
		t.Fatalf("a model outside the team's: %d %s", st, body)
	}
	if st, body := chatStatus(t, hs.URL, a.Key, "openai/ok"); st != http.StatusOK {
		t.Fatalf("the team's model: %d %s", st, body)
	}
	// Blocked: every key of the team, in LiteLLM's words.
	if r := do(t, s, "POST", "/team/block", testKey, `{"team_id":"ml"}`); r.status != http.StatusOK || !strings.Contains(r.raw, `"blocked":true`) {
		t.Fatalf("/team/block: %d %s", r.status, r.raw)
	}
	for _, key := range []string{a.Key, b.Key} {
		if st, body := chatStatus(t, hs.URL, key, "openai/ok"); st != http.StatusUnauthorized || !strings.Contains(body, "Team=ml is blocked. Update via `/team/unblock`") {
			t.Fatalf("a key of a blocked team: %d %s", st, body)
		}
	}
	if r := do(t, s, "POST", "/team/unblock", testKey, `{"team_id":"ml"}`); r.status != http.StatusOK || !strings.Contains(r.raw, `"blocked":false`) {
		t.Fatalf("/team/unblock: %d %s", r.status, r.raw)
	}
	if st, body := chatStatus(t, hs.URL, a.Key, "openai/ok"); st != http.StatusOK {
		t.Fatalf("after /team/unblock: %d %s", st, body)
	}
	// rpm_limit 3 for the team: three requests pass, by either key, then 429.
	litellmTeamNew(t, s, `{"team_id":"rl","rpm_limit":3}`)
	c, d := litellmGenerate(t, s, `{"team_id":"rl"}`), litellmGenerate(t, s, `{"team_id":"rl"}`)
	for i, key := range []string{c.Key, d.Key, c.Key} {
		if st, body := chatStatus(t, hs.URL, key, "openai/ok"); st != http.StatusOK {
			t.Fatalf("request %d within the team's rate: %d %s", i+1, st, body)
		}
	}
	if st, body := chatStatus(t, hs.URL, d.Key, "openai/ok"); st != http.StatusTooManyRequests || !strings.Contains(body, "rpm_limit") {
		t.Fatalf("over the team's rpm_limit: %d %s", st, body)
	}
}

// TestTeamValidationKeepsRecords: bad team input is a 400 naming the field (LiteLLM) or a
// 422 (native), and a failed update changes nothing stored.
func TestTeamValidationKeepsRecords(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	litellmTeamNew(t, s, `{"team_id":"t","max_budget":5,"models":["openai/ok"]}`)
	for body, field := range map[string]string{
		`{"team_id":"t"}`:                                   "team_id", // exists: 409
		`{"max_budget":-1}`:                                 "max_budget",
		`{"budget_duration":"soon"}`:                        "budget_duration",
		`{"models":["nope/none"]}`:                          "models",
		`{"tpm_limit":-3}`:                                  "tpm_limit",
		`{"team_id":"a b"}`:                                 "team_id",
		`{"team_alias":"` + strings.Repeat("x", 300) + `"}`: "team_alias",
	} {
		r := do(t, s, "POST", "/team/new", testKey, body)
		want := http.StatusBadRequest
		if body == `{"team_id":"t"}` {
			want = http.StatusConflict
		}
		wantLiteLLMError(t, r, want, field)
	}
	wantLiteLLMError(t, do(t, s, "POST", "/team/new", testKey, `{"organization_id":"org1"}`), http.StatusNotFound, "organization_id")
	wantLiteLLMError(t, do(t, s, "POST", "/team/update", testKey, `{"team_id":"t","max_budget":-2}`), http.StatusBadRequest, "max_budget")
	wantLiteLLMError(t, do(t, s, "POST", "/team/update", testKey, `{"max_budget":2}`), http.StatusBadRequest, "team_id")
	wantLiteLLMError(t, do(t, s, "POST", "/team/update", testKey, `{"team_id":"zz","max_budget":2}`), http.StatusNotFound, "team_id")
	wantError(t, do(t, s, "PATCH", "/api/v1/teams/t", testKey, `{"requests_per_minute":-1}`), http.StatusUnprocessableEntity, KindValidation, "requests_per_minute")
	r := do(t, s, "GET", "/api/v1/teams/t", testKey, "")
	var tm team
	if r.status != http.StatusOK || json.Unmarshal([]byte(r.raw), &tm) != nil || tm.MaxBudgetUSD != 5 || len(tm.Models) != 1 {
		t.Fatalf("after failed updates: %d %s", r.status, r.raw)
	}
	if r := do(t, s, "GET", "/team/list", testKey, ""); strings.Count(r.raw, `"team_id"`) != 1 {
		t.Fatalf("a refused /team/new stored a team: %s", r.raw)
	}
	// Managing teams is for the keys that manage keys: not a virtual key.
	vk := issue(t, s, `{}`)
	wantError(t, do(t, s, "POST", "/api/v1/teams", vk.Key, `{}`), http.StatusForbidden, KindForbidden, "limited in scope")
	if r := do(t, s, "GET", "/team/list", vk.Key, ""); r.status != http.StatusForbidden {
		t.Fatalf("/team/list by a virtual key: %d %s", r.status, r.raw)
	}
	// Another key sees none of this key's teams.
	if r := do(t, s, "GET", "/team/info?team_id=t", completionsOtherKey, ""); r.status != http.StatusNotFound {
		t.Fatalf("another key's team: %d %s", r.status, r.raw)
	}
}

// TestTeamDeleteRevokesKeys: deleting a team deletes its keys (as LiteLLM's /team/delete
// does), at once; a key outside the team stays.
func TestTeamDeleteRevokesKeys(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	litellmTeamNew(t, s, `{"team_id":"gone"}`)
	in := litellmGenerate(t, s, `{"team_id":"gone"}`)
	out := litellmGenerate(t, s, `{}`)
	wantLiteLLMError(t, do(t, s, "POST", "/team/delete", testKey, `{"team_ids":["gone","nope"]}`), http.StatusNotFound, "nope")
	if st, b := chatStatus(t, hs.URL, in.Key, "openai/ok"); st != http.StatusOK {
		t.Fatalf("a failed delete removed the key: %d %s", st, b)
	}
	r := do(t, s, "POST", "/team/delete", testKey, `{"team_ids":["gone"]}`)
	if r.status != http.StatusOK || !strings.Contains(r.raw, in.Token) || strings.Contains(r.raw, out.Token) {
		t.Fatalf("/team/delete: %d %s", r.status, r.raw)
	}
	if st, b := chatStatus(t, hs.URL, in.Key, "openai/ok"); st != http.StatusUnauthorized {
		t.Fatalf("a key of a deleted team: %d %s", st, b)
	}
	if st, b := chatStatus(t, hs.URL, out.Key, "openai/ok"); st != http.StatusOK {
		t.Fatalf("a key outside the team: %d %s", st, b)
	}
	wantLiteLLMError(t, do(t, s, "GET", "/team/info?team_id=gone", testKey, ""), http.StatusNotFound, "team_id")
	// Native: DELETE /api/v1/teams/{team_id}.
	if r := do(t, s, "POST", "/api/v1/teams", testKey, `{"team_id":"n2","name":"two"}`); r.status != http.StatusCreated {
		t.Fatalf("POST /api/v1/teams: %d %s", r.status, r.raw)
	}
	vk := issue(t, s, `{"team_id":"n2"}`)
	if r := do(t, s, "DELETE", "/api/v1/teams/n2", testKey, ""); r.status != http.StatusOK || !strings.Contains(r.raw, vk.ID) {
		t.Fatalf("DELETE /api/v1/teams/n2: %d %s", r.status, r.raw)
	}
	wantError(t, do(t, s, "GET", "/api/v1/keys/"+vk.ID, testKey, ""), http.StatusNotFound, KindNotFound, "")
}

// TestTeamAccountAcrossReplicas: two servers on one store (replicas) meter one team
// account: what a key spent through one refuses another key of the team through the other.
func TestTeamAccountAcrossReplicas(t *testing.T) {
	st := newTestStore(t)
	hsA, a := keysServer(t, st, 0)
	hsB, _ := keysServer(t, st, 0)
	litellmTeamNew(t, a, `{"team_id":"shared","max_budget":0.01}`)
	k1 := litellmGenerate(t, a, `{"team_id":"shared"}`)
	k2 := litellmGenerate(t, a, `{"team_id":"shared"}`)
	if code, b := chatStatus(t, hsB.URL, k1.Key, "openai/ok"); code != http.StatusOK {
		t.Fatalf("through replica B: %d %s", code, b)
	}
	code, b := chatStatus(t, hsA.URL, k2.Key, "openai/ok")
	if code != http.StatusTooManyRequests || !strings.Contains(b, "Team=shared") {
		t.Fatalf("replica A after B spent the team's budget: %d %s", code, b)
	}
}

// TestTeamRoutesInOpenAPI: the OpenAPI document lists the team routes.
func TestTeamRoutesInOpenAPI(t *testing.T) {
	hs, _ := keysServer(t, nil, 0)
	resp, err := http.Get(hs.URL + "/api/v1/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var doc struct {
		Paths map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	for path, methods := range map[string][]string{
		"/team/new": {"post"}, "/team/update": {"post"}, "/team/info": {"get"}, "/team/list": {"get"},
		"/team/delete": {"post"}, "/team/block": {"post"}, "/team/unblock": {"post"},
		"/api/v1/teams": {"post", "get"}, "/api/v1/teams/{team_id}": {"get", "patch", "delete"},
	} {
		for _, m := range methods {
			if doc.Paths[path][m] == nil {
				t.Errorf("the OpenAPI document lacks %s %s", strings.ToUpper(m), path)
			}
		}
	}
}
