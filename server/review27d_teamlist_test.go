package server

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"
)

// TestReview27dTeamListOrganizationFilter: LiteLLM's GET /team/list takes organization_id
// (the teams of that organization) and user_id (the teams the user is a member of); a
// filter ignored would answer every team of the key, teams of other organizations
// included, to a script acting on "the organization's teams". An unknown parameter with a
// value is a 400 naming it.
func TestReview27dTeamListOrganizationFilter(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	litellmOrganizationNew(t, s, `{"organization_id":"acme","organization_alias":"Acme"}`)
	litellmOrganizationNew(t, s, `{"organization_id":"other","organization_alias":"Other"}`)
	litellmTeamNew(t, s, `{"team_id":"eng","organization_id":"acme"}`)
	litellmTeamNew(t, s, `{"team_id":"ops","organization_id":"other"}`)
	litellmTeamNew(t, s, `{"team_id":"solo"}`)
	if r := do(t, s, "POST", "/team/member_add", testKey, `{"team_id":"ops","member":{"user_id":"ann","role":"user"}}`); r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	ids := func(query string) []string {
		t.Helper()
		r := do(t, s, "GET", "/team/list"+query, testKey, "")
		var out []litellmListedTeam
		if r.status != http.StatusOK || json.Unmarshal([]byte(r.raw), &out) != nil {
			t.Fatalf("GET /team/list%s: %d %s", query, r.status, r.raw)
		}
		var got []string
		for _, t := range out {
			got = append(got, t.TeamID)
		}
		slices.Sort(got)
		return got
	}
	if got := ids(""); !slices.Equal(got, []string{"eng", "ops", "solo"}) {
		t.Fatalf("every team: %v", got)
	}
	if got := ids("?organization_id=acme"); !slices.Equal(got, []string{"eng"}) {
		t.Fatalf("organization_id=acme: %v", got)
	}
	if got := ids("?organization_id=nope"); len(got) != 0 {
		t.Fatalf("organization_id of no organization: %v", got)
	}
	if got := ids("?user_id=ann"); !slices.Equal(got, []string{"ops"}) {
		t.Fatalf("user_id=ann: %v", got)
	}
	if got := ids("?user_id=ann&organization_id=acme"); len(got) != 0 {
		t.Fatalf("user_id=ann and organization_id=acme: %v", got)
	}
	if got := ids("?organization_id="); !slices.Equal(got, []string{"eng", "ops", "solo"}) {
		t.Fatalf("an empty organization_id filters nothing: %v", got)
	}
	wantParam(t, do(t, s, "GET", "/team/list?team_alias=x", testKey, ""), http.StatusBadRequest, "team_alias", "team_alias")
}
