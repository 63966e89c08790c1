package server

import (
	"net/http"
	"testing"
)

// TestReview25dMemberRoleNullIsTheDefault: on PATCH /api/v1/teams/{team_id}/members/{user_id}
// a role of null (what the Python client sends for role=None) or "" is the default role,
// user, as on POST and as a user's role null is internal_user on PATCH /api/v1/users/{id};
// it was a 422 reading `role: admin or user, got ""`.
func TestReview25dMemberRoleNullIsTheDefault(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	nativeUserDo(t, s, "POST", "/api/v1/teams", `{"team_id":"eng"}`, http.StatusCreated, nil)
	nativeUserDo(t, s, "POST", "/api/v1/users", `{"user_id":"ann","role":"proxy_admin"}`, http.StatusCreated, nil)
	var u nativeUser
	nativeUserDo(t, s, "PATCH", "/api/v1/users/ann", `{"role":null}`, http.StatusOK, &u)
	if u.Role != "internal_user" {
		t.Fatalf("a user's role null: %q", u.Role)
	}
	for _, body := range []string{`{"role":null,"max_budget_usd":2}`, `{"role":""}`} {
		var m nativeTeamMember
		nativeUserDo(t, s, "POST", "/api/v1/teams/eng/members", `{"user_id":"ann","role":"admin"}`, http.StatusCreated, nil)
		nativeUserDo(t, s, "PATCH", "/api/v1/teams/eng/members/ann", body, http.StatusOK, &m)
		if m.Role != "user" {
			t.Fatalf("PATCH %s: %+v", body, m)
		}
		nativeUserDo(t, s, "DELETE", "/api/v1/teams/eng/members/ann", "", http.StatusOK, nil)
	}
	nativeUserDo(t, s, "POST", "/api/v1/teams/eng/members", `{"user_id":"ann"}`, http.StatusCreated, nil)
	wantFieldError(t, do(t, s, "PATCH", "/api/v1/teams/eng/members/ann", testKey, `{"role":"boss"}`), http.StatusUnprocessableEntity, "role")
}
