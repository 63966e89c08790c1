package server

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// orgIDsOf reads the organization_ids of a list of organizations.
func orgIDsOf(t *testing.T, r reply) []string {
	t.Helper()
	var os []litellmOrganization
	if r.status != http.StatusOK || json.Unmarshal([]byte(r.raw), &os) != nil {
		t.Fatalf("organizations: %d %s", r.status, r.raw)
	}
	ids := make([]string, 0, len(os))
	for _, o := range os {
		ids = append(ids, o.OrganizationID)
	}
	return ids
}

// wantOrgRefusal checks r is a status refusal naming param whose message holds part.
func wantOrgRefusal(t *testing.T, what string, r reply, status int, param, part string) {
	t.Helper()
	e, _ := r.body["error"].(map[string]any)
	msg, _ := e["message"].(string)
	if r.status != status || e == nil || e["param"] != param || !strings.Contains(msg, part) {
		t.Fatalf("%s: %d %s, want %d naming %s with %q", what, r.status, r.raw, status, param, part)
	}
}

// TestOrganizationListFilters: /organization/list takes LiteLLM's org_id (the exact
// organization_id) and org_alias (a case-insensitive part of organization_alias), alone or
// together; an org_id no organization has lists nothing; another parameter with a value is
// a 400 naming it.
func TestOrganizationListFilters(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	litellmOrganizationNew(t, s, `{"organization_id":"acme","organization_alias":"Acme Corp"}`)
	litellmOrganizationNew(t, s, `{"organization_id":"acme-labs","organization_alias":"Acme Labs"}`)
	litellmOrganizationNew(t, s, `{"organization_id":"beta","organization_alias":"Beta"}`)
	for _, c := range []struct {
		query string
		want  []string
	}{
		{"", []string{"acme", "acme-labs", "beta"}},
		{"?org_id=acme", []string{"acme"}},
		{"?org_alias=aCmE", []string{"acme", "acme-labs"}},
		{"?org_alias=labs", []string{"acme-labs"}},
		{"?org_alias=acme&org_id=beta", []string{}},
		{"?org_id=nobody", []string{}},
		{"?org_id=&org_alias=", []string{"acme", "acme-labs", "beta"}},
	} {
		got := orgIDsOf(t, do(t, s, "GET", "/organization/list"+c.query, testKey, ""))
		slices.Sort(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("/organization/list%s: %v, want %v", c.query, got, c.want)
		}
	}
	wantOrgRefusal(t, "?page=2", do(t, s, "GET", "/organization/list?page=2", testKey, ""), http.StatusBadRequest, "page", "org_id and org_alias")
}

// TestOrganizationAdminKeys: a virtual key made for a member of an organization reads it
// (/organization/info, GET and POST, and /organization/list, which shows only its user's
// organizations); an org_admin's key also adds, changes and removes its members, but not
// its own user's max_budget_in_organization; an internal_user's key, a key of another
// organization's member, a key without user_id and a blocked key (or a key of a blocked
// team) are refused (403 naming
// the field), and no virtual key makes, changes or deletes an organization.
func TestOrganizationAdminKeys(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	litellmOrganizationNew(t, s, `{"organization_id":"acme","organization_alias":"Acme"}`)
	litellmOrganizationNew(t, s, `{"organization_id":"beta","organization_alias":"Beta"}`)
	add := func(key, org, member string) reply {
		return do(t, s, "POST", "/organization/member_add", key, `{"organization_id":"`+org+`","member":`+member+`}`)
	}
	if r := add(testKey, "acme", `[{"user_id":"ann","role":"org_admin"},{"user_id":"bob","role":"internal_user"}]`); r.status != http.StatusOK {
		t.Fatalf("member_add: %d %s", r.status, r.raw)
	}
	if r := add(testKey, "beta", `{"user_id":"dee","role":"org_admin"}`); r.status != http.StatusOK {
		t.Fatalf("member_add: %d %s", r.status, r.raw)
	}
	ann := litellmGenerate(t, s, `{"user_id":"ann"}`).Key
	bob := litellmGenerate(t, s, `{"user_id":"bob"}`).Key
	anon := litellmGenerate(t, s, `{}`).Key

	// Reading.
	for _, k := range []string{ann, bob} {
		if r := do(t, s, "GET", "/organization/info?organization_id=acme", k, ""); r.status != http.StatusOK || !strings.Contains(r.raw, `"organization_id":"acme"`) {
			t.Fatalf("a member's key, /organization/info: %d %s", r.status, r.raw)
		}
		if got := orgIDsOf(t, do(t, s, "GET", "/organization/list", k, "")); !slices.Equal(got, []string{"acme"}) {
			t.Fatalf("a member's key, /organization/list: %v, want [acme]", got)
		}
	}
	if got := orgIDsOf(t, do(t, s, "GET", "/organization/list?org_alias=beta", ann, "")); len(got) != 0 {
		t.Fatalf("ann's key, /organization/list?org_alias=beta: %v, want []", got)
	}
	if got := orgIDsOf(t, do(t, s, "GET", "/organization/list", anon, "")); len(got) != 0 {
		t.Fatalf("a key without user_id, /organization/list: %v, want []", got)
	}
	wantOrgRefusal(t, "ann's key, info of beta", do(t, s, "GET", "/organization/info?organization_id=beta", ann, ""), http.StatusForbidden, "organization_id", "not a member of organization \"beta\"")
	wantOrgRefusal(t, "ann's key, POST info of acme and beta", do(t, s, "POST", "/organization/info", ann, `{"organizations":["acme","beta"]}`), http.StatusForbidden, "organizations", "beta")
	wantOrgRefusal(t, "a key without user_id, info", do(t, s, "GET", "/organization/info?organization_id=acme", anon, ""), http.StatusForbidden, "organization_id", "no user_id")
	if r := do(t, s, "POST", "/organization/info", ann, `{"organizations":["acme"]}`); r.status != http.StatusOK {
		t.Fatalf("ann's key, POST info of acme: %d %s", r.status, r.raw)
	}

	// Managing members: ann (org_admin of acme) only.
	if r := add(ann, "acme", `{"user_id":"cat","role":"internal_user"}`); r.status != http.StatusOK {
		t.Fatalf("org_admin's key, member_add: %d %s", r.status, r.raw)
	}
	wantOrgRefusal(t, "org_admin's key, member_add in beta", add(ann, "beta", `{"user_id":"cat","role":"internal_user"}`), http.StatusForbidden, "organization_id", "not a member")
	wantOrgRefusal(t, "internal_user's key, member_add", add(bob, "acme", `{"user_id":"eve","role":"internal_user"}`), http.StatusForbidden, "organization_id", "is internal_user in organization \"acme\"")
	wantOrgRefusal(t, "internal_user's key, member_update", do(t, s, "PATCH", "/organization/member_update", bob, `{"organization_id":"acme","user_id":"bob","role":"org_admin"}`),
		http.StatusForbidden, "organization_id", "org_admin")
	wantOrgRefusal(t, "internal_user's key, member_delete", do(t, s, "DELETE", "/organization/member_delete", bob, `{"organization_id":"acme","user_id":"cat"}`),
		http.StatusForbidden, "organization_id", "org_admin")
	if r := do(t, s, "PATCH", "/organization/member_update", ann, `{"organization_id":"acme","user_id":"bob","role":"internal_user_viewer","max_budget_in_organization":5}`); r.status != http.StatusOK ||
		!strings.Contains(r.raw, `"user_role":"internal_user_viewer"`) {
		t.Fatalf("org_admin's key, member_update of bob: %d %s", r.status, r.raw)
	}
	wantOrgRefusal(t, "org_admin's key, its own bound", do(t, s, "PATCH", "/organization/member_update", ann, `{"organization_id":"acme","user_id":"ann","max_budget_in_organization":1000}`),
		http.StatusForbidden, "max_budget_in_organization", "its own")
	if info := litellmOrganizationInfo(t, s, "acme"); len(info.Members) != 3 || info.Members[0].UserID != "ann" || info.Members[0].BudgetTable != nil {
		t.Fatalf("acme's members after the refused self-update: %+v", info.Members)
	}
	if r := do(t, s, "DELETE", "/organization/member_delete", ann, `{"organization_id":"acme","user_id":"cat"}`); r.status != http.StatusOK {
		t.Fatalf("org_admin's key, member_delete: %d %s", r.status, r.raw)
	}
	if info := litellmOrganizationInfo(t, s, "acme"); len(info.Members) != 2 {
		t.Fatalf("acme's members after member_delete: %+v", info.Members)
	}

	// The organization itself stays the operator's.
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/organization/new", `{"organization_alias":"Mine"}`},
		{"PATCH", "/organization/update", `{"organization_id":"acme","max_budget":1}`},
		{"DELETE", "/organization/delete", `{"organization_ids":["acme"]}`},
	} {
		if r := do(t, s, c.method, c.path, ann, c.body); r.status != http.StatusForbidden {
			t.Fatalf("org_admin's key, %s %s: %d %s", c.method, c.path, r.status, r.raw)
		}
	}

	// A blocked org_admin key manages nothing.
	annTok := litellmGenerate(t, s, `{"user_id":"ann"}`)
	if r := do(t, s, "POST", "/key/block", testKey, `{"key":"`+annTok.Token+`"}`); r.status != http.StatusOK {
		t.Fatalf("/key/block: %d %s", r.status, r.raw)
	}
	if r := add(annTok.Key, "acme", `{"user_id":"fay","role":"internal_user"}`); r.status != http.StatusForbidden || !strings.Contains(r.raw, "this virtual key is blocked") {
		t.Fatalf("a blocked org_admin key, member_add: %d %s", r.status, r.raw)
	}
	// So does one whose team is blocked, as its model calls are refused.
	litellmTeamNew(t, s, `{"team_id":"ops"}`)
	inTeam := litellmGenerate(t, s, `{"user_id":"ann","team_id":"ops"}`).Key
	if r := add(inTeam, "acme", `{"user_id":"gus","role":"internal_user"}`); r.status != http.StatusOK {
		t.Fatalf("org_admin's key in a team, member_add: %d %s", r.status, r.raw)
	}
	if r := do(t, s, "POST", "/team/block", testKey, `{"team_id":"ops"}`); r.status != http.StatusOK {
		t.Fatalf("/team/block: %d %s", r.status, r.raw)
	}
	if r := add(inTeam, "acme", `{"user_id":"hal","role":"internal_user"}`); r.status != http.StatusForbidden || !strings.Contains(r.raw, "is blocked") {
		t.Fatalf("an org_admin key of a blocked team, member_add: %d %s", r.status, r.raw)
	}
}
