package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestMemberUpdateNullKeepsBudget: on PATCH /organization/member_update and POST
// /team/member_update a max_budget_in_organization / max_budget_in_team that is null or
// absent leaves the member's bound as it was (LiteLLM reads both as unchanged), so a
// LiteLLM client changing a role with null defaults does not lift it: the member's keys
// are still refused past it. A number changes it; a team member's bound is removed on the
// native route (max_budget_usd 0).
func TestMemberUpdateNullKeepsBudget(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	org := litellmOrganizationNew(t, s, `{"organization_alias":"Acme"}`)
	id := org.OrganizationID
	litellmTeamNew(t, s, `{"team_id":"eng","organization_id":"`+id+`"}`)
	litellmTeamNew(t, s, `{"team_id":"ops"}`)
	if r := do(t, s, "POST", "/organization/member_add", testKey, `{"organization_id":"`+id+`","member":{"user_id":"ann","role":"internal_user"},"max_budget_in_organization":0.02}`); r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	if r := do(t, s, "POST", "/team/member_add", testKey, `{"team_id":"ops","member":{"user_id":"bob","role":"user"},"max_budget_in_team":0.02}`); r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}

	// The organization's member: null, then absent, keep the bound while the role changes.
	for i, body := range []string{
		`{"organization_id":"` + id + `","user_id":"ann","role":"org_admin","max_budget_in_organization":null}`,
		`{"organization_id":"` + id + `","user_id":"ann","role":"internal_user_viewer"}`,
	} {
		r := do(t, s, "PATCH", "/organization/member_update", testKey, body)
		var m litellmOrganizationMembership
		if r.status != http.StatusOK || json.Unmarshal([]byte(r.raw), &m) != nil || m.BudgetTable == nil || m.BudgetTable.MaxBudget == nil ||
			*m.BudgetTable.MaxBudget != 0.02 || m.BudgetID == nil {
			t.Fatalf("organization member_update %d kept no bound: %d %s", i, r.status, r.raw)
		}
	}
	if info := litellmOrganizationInfo(t, s, id); len(info.Members) != 1 || info.Members[0].UserRole != "internal_user_viewer" ||
		info.Members[0].BudgetTable == nil || *info.Members[0].BudgetTable.MaxBudget != 0.02 {
		t.Fatalf("/organization/info after the updates: %+v", info.Members)
	}
	ann := litellmGenerate(t, s, `{"team_id":"eng","user_id":"ann"}`)
	for i := range 2 { // $0.013 each: the second starts at 0.013 < 0.02
		if st, b := chatStatus(t, hs.URL, ann.Key, "openai/ok"); st != http.StatusOK {
			t.Fatalf("ann's call %d: %d %s", i+1, st, b)
		}
	}
	if st, b := chatStatus(t, hs.URL, ann.Key, "openai/ok"); st != http.StatusTooManyRequests || !strings.Contains(b, "User=ann in Organization="+id) {
		t.Fatalf("past the bound a null update kept: %d %s", st, b)
	}
	// A number still changes it.
	if r := do(t, s, "PATCH", "/organization/member_update", testKey, `{"organization_id":"`+id+`","user_id":"ann","max_budget_in_organization":1}`); r.status != http.StatusOK ||
		!strings.Contains(r.raw, `"litellm_budget_table":{"max_budget":1}`) {
		t.Fatalf("organization member_update to 1: %d %s", r.status, r.raw)
	}
	if st, b := chatStatus(t, hs.URL, ann.Key, "openai/ok"); st != http.StatusOK {
		t.Fatalf("after the bound was raised: %d %s", st, b)
	}

	// The team's member: the same.
	for i, body := range []string{
		`{"team_id":"ops","user_id":"bob","role":"admin","max_budget_in_team":null}`,
		`{"team_id":"ops","user_id":"bob","role":"user"}`,
	} {
		r := do(t, s, "POST", "/team/member_update", testKey, body)
		var upd litellmMemberUpdated
		if r.status != http.StatusOK || json.Unmarshal([]byte(r.raw), &upd) != nil || upd.MaxBudgetInTeam == nil || *upd.MaxBudgetInTeam != 0.02 {
			t.Fatalf("team member_update %d kept no bound: %d %s", i, r.status, r.raw)
		}
	}
	bob := litellmGenerate(t, s, `{"team_id":"ops","user_id":"bob"}`)
	for i := range 2 {
		if st, b := chatStatus(t, hs.URL, bob.Key, "openai/ok"); st != http.StatusOK {
			t.Fatalf("bob's call %d: %d %s", i+1, st, b)
		}
	}
	if st, b := chatStatus(t, hs.URL, bob.Key, "openai/ok"); st != http.StatusTooManyRequests || !strings.Contains(b, "User=bob in Team=ops") {
		t.Fatalf("past the team bound a null update kept: %d %s", st, b)
	}
	// Removed on the native route.
	if r := do(t, s, "PATCH", "/api/v1/teams/ops/members/bob", testKey, `{"max_budget_usd":0}`); r.status != http.StatusOK || strings.Contains(r.raw, "max_budget_usd") {
		t.Fatalf("native member update removing the bound: %d %s", r.status, r.raw)
	}
	if st, b := chatStatus(t, hs.URL, bob.Key, "openai/ok"); st != http.StatusOK {
		t.Fatalf("after the team bound was removed: %d %s", st, b)
	}
}
