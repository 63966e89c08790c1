package server

import (
	"net/http"
	"strings"
	"testing"
)

// TestOrgAdminCreatesTeamsAndKeys: an org_admin's virtual key makes teams in its
// organization (/team/new) and keys of it and of its teams (/key/generate), as LiteLLM's
// org_admin may with organization_id in the body; it is refused (403 naming the field)
// without organization_id, in an organization it is not org_admin of (an internal_user's
// key too), for a team of another organization, for a key of another user (LiteLLM's
// "User can only create keys for themselves"), for a limit above the organization's and
// for a field outside its list (budget_id, metadata); a key of its own user in a team its
// user is not a member of is LiteLLM's 400 naming user_id; its role taken away, it makes
// nothing; nothing refused is stored; /team/update stays the operator's.
func TestOrgAdminCreatesTeamsAndKeys(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	litellmOrganizationNew(t, s, `{"organization_id":"acme","organization_alias":"Acme","max_budget":100,"tpm_limit":1000,"rpm_limit":60}`)
	litellmOrganizationNew(t, s, `{"organization_id":"beta","organization_alias":"Beta"}`)
	litellmTeamNew(t, s, `{"team_id":"web","organization_id":"beta"}`)
	for _, m := range []string{`{"organization_id":"acme","member":[{"user_id":"ann","role":"org_admin"},{"user_id":"bob","role":"internal_user"}]}`,
		`{"organization_id":"beta","member":{"user_id":"dee","role":"org_admin"}}`} {
		if r := do(t, s, "POST", "/organization/member_add", testKey, m); r.status != http.StatusOK {
			t.Fatalf("member_add: %d %s", r.status, r.raw)
		}
	}
	ann := litellmGenerate(t, s, `{"user_id":"ann"}`).Key
	bob := litellmGenerate(t, s, `{"user_id":"bob"}`).Key
	teamNew := func(key, body string) reply { return do(t, s, "POST", "/team/new", key, body) }
	generate := func(key, body string) reply { return do(t, s, "POST", "/key/generate", key, body) }

	// Teams.
	if r := teamNew(ann, `{"organization_id":"acme","team_id":"eng","max_budget":50,"tpm_limit":500,"members_with_roles":[],"metadata":{}}`); r.status != http.StatusOK || !strings.Contains(r.raw, `"organization_id":"acme"`) {
		t.Fatalf("org_admin's key, /team/new in acme: %d %s", r.status, r.raw)
	}
	for _, c := range []struct {
		what, key, body, param, part string
	}{
		{"no organization_id", ann, `{"team_id":"t1"}`, "organization_id", "required of a virtual key"},
		{"another organization", ann, `{"organization_id":"beta","team_id":"t2"}`, "organization_id", "not a member of organization \"beta\""},
		{"an internal_user's key", bob, `{"organization_id":"acme","team_id":"t3"}`, "organization_id", "is internal_user"},
		{"max_budget above acme's", ann, `{"organization_id":"acme","team_id":"t4","max_budget":500}`, "max_budget", "above organization acme's max_budget 100"},
		{"rpm_limit above acme's", ann, `{"organization_id":"acme","team_id":"t5","rpm_limit":61}`, "rpm_limit", "above"},
		{"metadata", ann, `{"organization_id":"acme","team_id":"t6","metadata":{"a":1}}`, "metadata", "may not set metadata on /team/new"},
	} {
		wantOrgRefusal(t, "/team/new, "+c.what, teamNew(c.key, c.body), http.StatusForbidden, c.param, c.part)
	}
	if r := do(t, s, "GET", "/team/info?team_id=t4", testKey, ""); r.status != http.StatusNotFound {
		t.Fatalf("a refused team was made: %d %s", r.status, r.raw)
	}

	// Keys.
	if r := generate(ann, `{"organization_id":"acme","team_id":"eng","max_budget":10}`); r.status != http.StatusOK || !strings.Contains(r.raw, `"team_id":"eng"`) {
		t.Fatalf("org_admin's key, a key of team eng: %d %s", r.status, r.raw)
	}
	if r := generate(ann, `{"organization_id":"acme","key_alias":"acme-own"}`); r.status != http.StatusOK || !strings.Contains(r.raw, `"organization_id":"acme"`) {
		t.Fatalf("org_admin's key, a key of acme: %d %s", r.status, r.raw)
	}
	for _, c := range []struct {
		what, key, body string
		status          int
		param, part     string
	}{
		{"no organization_id", ann, `{"team_id":"eng"}`, http.StatusForbidden, "organization_id", "required of a virtual key"},
		{"beta's team", ann, `{"organization_id":"acme","team_id":"web"}`, http.StatusForbidden, "team_id", "not a team of organization \"acme\""},
		{"beta", ann, `{"organization_id":"beta","team_id":"web"}`, http.StatusForbidden, "organization_id", "not a member of organization \"beta\""},
		{"an internal_user's key", bob, `{"organization_id":"acme"}`, http.StatusForbidden, "organization_id", "is internal_user"},
		{"another user's key", ann, `{"organization_id":"acme","user_id":"bob"}`, http.StatusForbidden, "user_id", "User can only create keys for themselves"},
		{"its user not in the team", ann, `{"organization_id":"acme","team_id":"eng","user_id":"ann"}`, http.StatusBadRequest, "user_id", "User=ann not assigned to team=eng"},
		{"max_budget above acme's", ann, `{"organization_id":"acme","max_budget":101}`, http.StatusForbidden, "max_budget", "above organization acme's max_budget 100"},
		{"tpm_limit above acme's", ann, `{"organization_id":"acme","tpm_limit":1001}`, http.StatusForbidden, "tpm_limit", "above"},
		{"budget_id", ann, `{"organization_id":"acme","budget_id":"b1"}`, http.StatusForbidden, "budget_id", "may not set budget_id on /key/generate"},
	} {
		wantOrgRefusal(t, "/key/generate, "+c.what, generate(c.key, c.body), c.status, c.param, c.part)
	}
	if r := do(t, s, "POST", "/team/member_add", testKey, `{"team_id":"eng","member":{"user_id":"ann","role":"user"}}`); r.status != http.StatusOK {
		t.Fatalf("team member_add: %d %s", r.status, r.raw)
	}
	if r := generate(ann, `{"organization_id":"acme","team_id":"eng","user_id":"ann"}`); r.status != http.StatusOK {
		t.Fatalf("org_admin's key, a key of its own user in eng: %d %s", r.status, r.raw)
	}
	if info := litellmOrganizationInfo(t, s, "acme"); len(info.Teams) != 1 {
		t.Fatalf("acme's teams: %+v, want eng only", info.Teams)
	}

	// The rest stays the operator's, and a role taken away takes the right with it.
	if r := do(t, s, "POST", "/team/update", ann, `{"team_id":"eng","max_budget":1}`); r.status != http.StatusForbidden {
		t.Fatalf("org_admin's key, /team/update: %d %s", r.status, r.raw)
	}
	if r := do(t, s, "PATCH", "/organization/member_update", testKey, `{"organization_id":"acme","user_id":"ann","role":"internal_user"}`); r.status != http.StatusOK {
		t.Fatalf("member_update: %d %s", r.status, r.raw)
	}
	wantOrgRefusal(t, "a former org_admin's /team/new", teamNew(ann, `{"organization_id":"acme","team_id":"t7"}`), http.StatusForbidden, "organization_id", "is internal_user")
	wantOrgRefusal(t, "a former org_admin's /key/generate", generate(ann, `{"organization_id":"acme"}`), http.StatusForbidden, "organization_id", "is internal_user")
}
