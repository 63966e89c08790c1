package server

import (
	"net/http"
	"strings"
	"testing"
)

// TestOrganizationMoveTeamChecksKeys: moving a team into an organization (/team/update
// organization_id, PATCH /api/v1/teams) is refused while one of its keys names a model
// outside the organization's, naming the key and the model (400 on LiteLLM's route, 422
// on the native one), and nothing changes; with the key's models within, the move goes
// through. Narrowing an organization's models under a key of one of its teams' models is
// refused the same way, naming models.
func TestOrganizationMoveTeamChecksKeys(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	org := litellmOrganizationNew(t, s, `{"organization_alias":"Acme","models":["openai/ok"]}`)
	id := org.OrganizationID
	litellmTeamNew(t, s, `{"team_id":"eng"}`)
	k := litellmGenerate(t, s, `{"team_id":"eng","models":["openai/ok","openai/ok2"]}`)
	if k.Token == "" {
		t.Fatalf("/key/generate: no token: %+v", k)
	}

	wantParam(t, do(t, s, "POST", "/team/update", testKey, `{"team_id":"eng","organization_id":"`+id+`"}`),
		http.StatusBadRequest, "organization_id", `key `+k.Token+` of team eng names "openai/ok2" (its models[1])`)
	wantError(t, do(t, s, "PATCH", "/api/v1/teams/eng", testKey, `{"organization_id":"`+id+`","max_budget_usd":3}`),
		http.StatusUnprocessableEntity, KindValidation, `organization_id: key `+k.Token+` of team eng names "openai/ok2"`)
	// Nothing changed: the team is outside the organization, its budget as it was.
	if r := do(t, s, "GET", "/api/v1/teams/eng", testKey, ""); r.status != http.StatusOK || strings.Contains(r.raw, "organization_id") || strings.Contains(r.raw, "max_budget_usd") {
		t.Fatalf("the team after a refused move: %d %s", r.status, r.raw)
	}
	if info := litellmOrganizationInfo(t, s, id); len(info.Teams) != 0 {
		t.Fatalf("a refused move listed the team: %+v", info.Teams)
	}

	// The key's models within the organization's: the move goes through.
	if r := do(t, s, "POST", "/key/update", testKey, `{"key":"`+k.Key+`","models":["openai/ok"]}`); r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	if r := do(t, s, "POST", "/team/update", testKey, `{"team_id":"eng","organization_id":"`+id+`"}`); r.status != http.StatusOK || !strings.Contains(r.raw, `"organization_id":"`+id+`"`) {
		t.Fatalf("moving a team whose keys are within the organization: %d %s", r.status, r.raw)
	}

	// Narrowing an organization under a key of its team (a team without models of its own).
	wide := litellmOrganizationNew(t, s, `{"organization_alias":"Wide","models":["openai/ok","openai/ok2"]}`)
	litellmTeamNew(t, s, `{"team_id":"ops","organization_id":"`+wide.OrganizationID+`"}`)
	k2 := litellmGenerate(t, s, `{"team_id":"ops","models":["openai/ok2"]}`)
	wantParam(t, do(t, s, "PATCH", "/organization/update", testKey, `{"organization_id":"`+wide.OrganizationID+`","models":["openai/ok"]}`),
		http.StatusBadRequest, "models", `key `+k2.Token+` of team ops names "openai/ok2"`)
	if info := litellmOrganizationInfo(t, s, wide.OrganizationID); len(info.Models) != 2 {
		t.Fatalf("the organization after a refused narrowing: %+v", info.Models)
	}
}

// TestOrganizationMemberBudget: max_budget_in_organization on /organization/member_add
// bounds what the member's keys of the organization's teams spend together (refused naming
// the user and the organization, another member's key unaffected); the memberships of
// /organization/info carry their spend, budget_id and litellm_budget_table;
// /organization/member_update changes the bound (its spend kept; 0 blocks), a bad one is a
// 400 naming the field, and a deleted membership no longer bounds the keys.
func TestOrganizationMemberBudget(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	org := litellmOrganizationNew(t, s, `{"organization_alias":"Acme"}`)
	id := org.OrganizationID
	litellmTeamNew(t, s, `{"team_id":"eng","organization_id":"`+id+`"}`)
	r := do(t, s, "POST", "/organization/member_add", testKey, `{"organization_id":"`+id+`","member":{"user_id":"ann","role":"internal_user"},"max_budget_in_organization":0.02}`)
	if r.status != http.StatusOK || !strings.Contains(r.raw, `"budget_id":"orgmember/`) || !strings.Contains(r.raw, `"litellm_budget_table":{"max_budget":0.02}`) || !strings.Contains(r.raw, `"spend":0`) {
		t.Fatalf("member_add with max_budget_in_organization: %d %s", r.status, r.raw)
	}
	if r := do(t, s, "POST", "/organization/member_add", testKey, `{"organization_id":"`+id+`","member":{"user_id":"bob","role":"internal_user"}}`); r.status != http.StatusOK || !strings.Contains(r.raw, `"budget_id":null`) {
		t.Fatalf("member_add without a budget: %d %s", r.status, r.raw)
	}
	wantParam(t, do(t, s, "POST", "/organization/member_add", testKey, `{"organization_id":"`+id+`","member":{"user_id":"cy","role":"internal_user"},"max_budget_in_organization":-1}`),
		http.StatusBadRequest, "max_budget_in_organization", "at least 0")
	ann, bob := litellmGenerate(t, s, `{"team_id":"eng","user_id":"ann"}`), litellmGenerate(t, s, `{"team_id":"eng","user_id":"bob"}`)

	for i := range 2 { // $0.013 each: the second starts at 0.013 < 0.02
		if st, b := chatStatus(t, hs.URL, ann.Key, "openai/ok"); st != http.StatusOK {
			t.Fatalf("ann's call %d: %d %s", i+1, st, b)
		}
	}
	if st, b := chatStatus(t, hs.URL, ann.Key, "openai/ok"); st != http.StatusTooManyRequests || !strings.Contains(b, "User=ann in Organization="+id) {
		t.Fatalf("a member's key past max_budget_in_organization: %d %s", st, b)
	}
	if st, b := chatStatus(t, hs.URL, bob.Key, "openai/ok"); st != http.StatusOK {
		t.Fatalf("another member's key: %d %s", st, b)
	}
	info := litellmOrganizationInfo(t, s, id)
	if len(info.Members) != 2 || info.Members[0].UserID != "ann" || info.Members[0].Spend < 0.026 || info.Members[0].BudgetID == nil ||
		info.Members[0].BudgetTable == nil || *info.Members[0].BudgetTable.MaxBudget != 0.02 ||
		info.Members[1].Spend < 0.013 || info.Members[1].Spend > 0.014 || info.Members[1].BudgetID != nil || info.Members[1].BudgetTable != nil {
		t.Fatalf("/organization/info members: %+v", info.Members)
	}

	wantParam(t, do(t, s, "PATCH", "/organization/member_update", testKey, `{"organization_id":"`+id+`","user_id":"ann","max_budget_in_organization":-0.5}`),
		http.StatusBadRequest, "max_budget_in_organization", "at least 0")
	if r := do(t, s, "PATCH", "/organization/member_update", testKey, `{"organization_id":"`+id+`","user_id":"ann","max_budget_in_organization":"lots"}`); r.status != http.StatusBadRequest ||
		!strings.Contains(r.raw, "max_budget_in_organization") {
		t.Fatalf("member_update with a string bound: %d %s", r.status, r.raw)
	}
	if r := do(t, s, "PATCH", "/organization/member_update", testKey, `{"organization_id":"`+id+`","user_id":"ann","max_budget_in_organization":1}`); r.status != http.StatusOK ||
		!strings.Contains(r.raw, `"litellm_budget_table":{"max_budget":1}`) || !strings.Contains(r.raw, `"spend":0.026`) {
		t.Fatalf("member_update raising the bound: %d %s", r.status, r.raw)
	}
	if st, b := chatStatus(t, hs.URL, ann.Key, "openai/ok"); st != http.StatusOK {
		t.Fatalf("after the bound was raised: %d %s", st, b)
	}
	if r := do(t, s, "PATCH", "/organization/member_update", testKey, `{"organization_id":"`+id+`","user_id":"ann","max_budget_in_organization":0}`); r.status != http.StatusOK ||
		!strings.Contains(r.raw, `"litellm_budget_table":{"max_budget":0}`) {
		t.Fatalf("member_update to 0: %d %s", r.status, r.raw)
	}
	if st, b := chatStatus(t, hs.URL, ann.Key, "openai/ok"); st == http.StatusOK || !strings.Contains(b, "User=ann in Organization="+id+" is blocked") {
		t.Fatalf("a member blocked in the organization: %d %s", st, b)
	}
	wantParam(t, do(t, s, "DELETE", "/organization/member_delete", testKey, `{"organization_id":"`+id+`","user_id":"ann","max_budget_in_organization":1}`),
		http.StatusBadRequest, "max_budget_in_organization", "member_update")
	if r := do(t, s, "DELETE", "/organization/member_delete", testKey, `{"organization_id":"`+id+`","user_id":"ann"}`); r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	if st, b := chatStatus(t, hs.URL, ann.Key, "openai/ok"); st != http.StatusOK {
		t.Fatalf("after the membership was deleted: %d %s", st, b)
	}
}
