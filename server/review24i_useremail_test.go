package server

import (
	"net/http"
	"testing"
)

// TestReview24iMemberEmailIsTrimmed: /user/new keeps user_email without surrounding
// spaces, so /team/member_add and /user/update naming that address with spaces find the
// same user, rather than member_add making a second user with the address.
func TestReview24iMemberEmailIsTrimmed(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	litellmTeamNew(t, s, `{"team_id":"eng"}`)
	litellmUserNew(t, s, `{"user_id":"ann","user_email":"ann@example.com","auto_create_key":false}`)
	if r := do(t, s, "POST", "/team/member_add", testKey, `{"team_id":"eng","member":{"user_email":" ann@example.com ","role":"user"}}`); r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	if r := do(t, s, "GET", "/user/list", testKey, ""); r.body["total"] != 1.0 {
		t.Fatalf("member_add made a second user for ann's address: %s", r.raw)
	}
	if r := do(t, s, "POST", "/user/update", testKey, `{"user_email":" ann@example.com","user_alias":"Ann"}`); r.status != http.StatusOK {
		t.Fatalf("/user/update by ann's address with a space: %d %s", r.status, r.raw)
	}
}
