package server

import (
	"net/http"
	"strings"
	"testing"
)

// TestOrgAdminMemberNotFoundHidesUsers: an org_admin's virtual key gets the same 404 (param
// and message, but for the name it gave) from /organization/member_update and member_delete
// for a user_id or user_email no user has as for a user who is not a member, so it cannot
// probe which users the server has; an operator key's answers still tell them apart.
func TestOrgAdminMemberNotFoundHidesUsers(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	litellmOrganizationNew(t, s, `{"organization_id":"acme","organization_alias":"Acme"}`)
	litellmOrganizationNew(t, s, `{"organization_id":"beta","organization_alias":"Beta"}`)
	for _, c := range []struct{ org, member string }{
		{"acme", `{"user_id":"ann","role":"org_admin"}`},
		{"beta", `{"user_id":"zed","user_email":"zed@example.com","role":"internal_user"}`},
	} {
		if r := do(t, s, "POST", "/organization/member_add", testKey, `{"organization_id":"`+c.org+`","member":`+c.member+`}`); r.status != http.StatusOK {
			t.Fatalf("member_add: %d %s", r.status, r.raw)
		}
	}
	ann := litellmGenerate(t, s, `{"user_id":"ann"}`).Key
	calls := []struct{ method, path, extra string }{
		{"PATCH", "/organization/member_update", `,"role":"internal_user_viewer"`},
		{"DELETE", "/organization/member_delete", ``},
	}
	answer := func(key string, call struct{ method, path, extra string }, field, value string) (int, string, string) {
		r := do(t, s, call.method, call.path, key, `{"organization_id":"acme","`+field+`":"`+value+`"`+call.extra+`}`)
		e, _ := r.body["error"].(map[string]any)
		msg, _ := e["message"].(string)
		param, _ := e["param"].(string)
		return r.status, param, strings.ReplaceAll(msg, value, "<name>")
	}
	for _, call := range calls {
		for _, f := range []struct{ field, existing, unknown string }{
			{"user_id", "zed", "nobody"},
			{"user_email", "zed@example.com", "nobody@example.com"},
		} {
			st1, p1, m1 := answer(ann, call, f.field, f.existing)
			st2, p2, m2 := answer(ann, call, f.field, f.unknown)
			if st1 != http.StatusNotFound || p1 != f.field || st1 != st2 || p1 != p2 || m1 != m2 {
				t.Errorf("org_admin's key, %s by %s: not a member %d %s %q; unknown %d %s %q: want the same 404 naming %s",
					call.path, f.field, st1, p1, m1, st2, p2, m2, f.field)
			}
			if strings.Contains(m1, "zed") && f.field == "user_email" {
				t.Errorf("org_admin's key, %s by user_email: %q names the user's id", call.path, m1)
			}
			os1, _, om1 := answer(testKey, call, f.field, f.existing)
			os2, _, om2 := answer(testKey, call, f.field, f.unknown)
			if os1 != http.StatusNotFound || os2 != http.StatusNotFound || om1 == om2 {
				t.Errorf("operator key, %s by %s: %d %q and %d %q: want 404s telling an unknown user from a non-member", call.path, f.field, os1, om1, os2, om2)
			}
		}
	}
	if r := do(t, s, "DELETE", "/organization/member_delete", testKey, `{"organization_id":"beta","user_id":"zed"}`); r.status != http.StatusOK {
		t.Fatalf("operator's member_delete of zed from beta (still a member): %d %s", r.status, r.raw)
	}
}
