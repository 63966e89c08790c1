package server

import (
	"net/http"
	"testing"

	"github.com/switchyard-ai/switchyard/store"
)

// TestReview25dUserDotIDsRefused: a user id "." or ".." cannot be reached through
// /api/v1/users/{user_id} nor /api/v1/teams/{team_id}/members/{user_id} (a URL path cleans
// those segments away), so no route makes such a user: 422 naming user_id on the native
// route, 400 on LiteLLM's /user/new and /team/member_add; nothing is stored. An id with
// dots among other characters stays good.
func TestReview25dUserDotIDsRefused(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	nativeUserDo(t, s, "POST", "/api/v1/teams", `{"team_id":"eng"}`, http.StatusCreated, nil)
	for _, id := range []string{".", ".."} {
		wantError(t, do(t, s, "POST", "/api/v1/users", testKey, `{"user_id":"`+id+`"}`), http.StatusUnprocessableEntity, KindValidation, "user_id")
		wantStatusMessage(t, do(t, s, "POST", "/user/new", testKey, `{"user_id":"`+id+`"}`), http.StatusBadRequest, "user_id: ")
		wantStatusMessage(t, do(t, s, "POST", "/team/member_add", testKey, `{"team_id":"eng","member":{"user_id":"`+id+`","role":"user"}}`),
			http.StatusBadRequest, "member.user_id: ")
	}
	if n := countStored(t, s, store.Users); n != 0 {
		t.Fatalf("%d users stored", n)
	}
	nativeUserDo(t, s, "POST", "/api/v1/users", `{"user_id":"a..b"}`, http.StatusCreated, nil)
	nativeUserDo(t, s, "GET", "/api/v1/users/a..b", "", http.StatusOK, nil)
}
