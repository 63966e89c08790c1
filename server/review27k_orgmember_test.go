package server

import (
	"net/http"
	"strings"
	"testing"
)

// TestReview27kOrgMemberBudgetScope: a membership's bound holds only for the user's keys
// of the organization's teams: not for its keys of another organization's teams, nor its
// team-less keys, nor once the team has left the organization; a team moved into another
// organization draws on the membership there.
func TestReview27kOrgMemberBudgetScope(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	a := litellmOrganizationNew(t, s, `{"organization_alias":"A"}`).OrganizationID
	b := litellmOrganizationNew(t, s, `{"organization_alias":"B"}`).OrganizationID
	litellmTeamNew(t, s, `{"team_id":"eng","organization_id":"`+a+`"}`)
	litellmTeamNew(t, s, `{"team_id":"ops","organization_id":"`+b+`"}`)
	if r := do(t, s, "POST", "/organization/member_add", testKey, `{"organization_id":"`+a+`","member":{"user_id":"ann","role":"internal_user"},"max_budget_in_organization":0}`); r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	if r := do(t, s, "POST", "/organization/member_add", testKey, `{"organization_id":"`+b+`","member":{"user_id":"ann","role":"internal_user"}}`); r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	eng, ops, solo := litellmGenerate(t, s, `{"team_id":"eng","user_id":"ann"}`), litellmGenerate(t, s, `{"team_id":"ops","user_id":"ann"}`), litellmGenerate(t, s, `{"user_id":"ann"}`)
	if st, body := chatStatus(t, hs.URL, eng.Key, "openai/ok"); st == http.StatusOK {
		t.Fatalf("blocked in A: %d %s", st, body)
	}
	for _, k := range []string{ops.Key, solo.Key} {
		if st, body := chatStatus(t, hs.URL, k, "openai/ok"); st != http.StatusOK {
			t.Fatalf("a key outside A: %d %s", st, body)
		}
	}
	if r := do(t, s, "POST", "/team/update", testKey, `{"team_id":"eng","organization_id":null}`); r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	if st, body := chatStatus(t, hs.URL, eng.Key, "openai/ok"); st != http.StatusOK {
		t.Fatalf("team moved out of A: %d %s", st, body)
	}
	if r := do(t, s, "POST", "/team/update", testKey, `{"team_id":"eng","organization_id":"`+b+`"}`); r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	if st, body := chatStatus(t, hs.URL, eng.Key, "openai/ok"); st != http.StatusOK {
		t.Fatalf("team moved into B: %d %s", st, body)
	}
	info := litellmOrganizationInfo(t, s, b)
	if len(info.Members) != 1 || info.Members[0].Spend < 0.025 || info.Members[0].Spend > 0.027 {
		t.Fatalf("ann's spend in B (ops's call and eng's after the move): %+v", info.Members)
	}
	r := do(t, s, "DELETE", "/organization/member_delete", testKey, `{"organization_id":"`+b+`","user_id":"ann"}`)
	if r.status != http.StatusOK || !strings.Contains(r.raw, `"spend":0.026`) {
		t.Fatalf("member_delete answers the membership as it was, its spend too: %d %s", r.status, r.raw)
	}
}
