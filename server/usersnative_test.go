package server

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// nativeUserDo sends a native user request of the operator key and decodes a 2xx answer
// into out (nil: none), failing the test unless the status is want.
func nativeUserDo(t *testing.T, s *Server, method, path, body string, want int, out any) reply {
	t.Helper()
	r := do(t, s, method, path, testKey, body)
	if r.status != want {
		t.Fatalf("%s %s %s: %d %s, want %d", method, path, body, r.status, r.raw, want)
	}
	if out != nil {
		if err := json.Unmarshal([]byte(r.raw), out); err != nil {
			t.Fatalf("%s %s: %v in %s", method, path, err, r.raw)
		}
	}
	return r
}

// wantFieldError fails unless r is a status whose native error message names field.
func wantFieldError(t *testing.T, r reply, status int, field string) {
	t.Helper()
	msg, _ := r.body["message"].(string)
	if r.status != status || !strings.Contains(msg, field) {
		t.Fatalf("got %d %s, want %d naming %q", r.status, r.raw, status, field)
	}
}

// TestNativeUserRoutes: POST, GET, PATCH and DELETE /api/v1/users make, read, change and
// delete a user with the native teams' conventions (201, object user, spend, teams and
// key_ids); PATCH changes only the fields given and keeps the id.
func TestNativeUserRoutes(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	nativeUserDo(t, s, "POST", "/api/v1/teams", `{"team_id":"eng"}`, http.StatusCreated, nil)
	var u nativeUser
	nativeUserDo(t, s, "POST", "/api/v1/users", `{"user_id":"ann","email":" ann@example.com ","alias":"Ann","role":"proxy_admin_viewer","models":["openai/ok"],
		"max_budget_usd":5,"budget_duration":"30d","tokens_per_minute":1000,"metadata":{"dept":"eng"},"teams":["eng"]}`, http.StatusCreated, &u)
	if u.UserID != "ann" || u.Object != "user" || u.Email != "ann@example.com" || u.Alias != "Ann" || u.Role != "proxy_admin_viewer" ||
		!slices.Equal(u.Models, []string{"openai/ok"}) || u.MaxBudgetUSD != 5 || u.BudgetDuration != "30d" || u.TokensPerMinute != 1000 ||
		u.Metadata["dept"] != "eng" || !slices.Equal(u.Teams, []string{"eng"}) || u.KeyIDs == nil || len(u.KeyIDs) != 0 || u.CreatedAt.IsZero() {
		t.Fatalf("created %+v", u)
	}
	var made nativeUser
	nativeUserDo(t, s, "POST", "/api/v1/users", `{}`, http.StatusCreated, &made)
	if len(made.UserID) != 36 || made.Role != "internal_user" || made.Teams == nil {
		t.Fatalf("a user without an id: %+v", made)
	}
	// A native key made for the user (metadata user_id) is listed as its.
	var vk virtualKey
	nativeUserDo(t, s, "POST", "/api/v1/keys", `{"metadata":{"user_id":"ann"}}`, http.StatusCreated, &vk)
	var got nativeUser
	nativeUserDo(t, s, "GET", "/api/v1/users/ann", "", http.StatusOK, &got)
	if !slices.Equal(got.KeyIDs, []string{vk.ID}) || got.Email != "ann@example.com" {
		t.Fatalf("GET: %+v", got)
	}
	var upd nativeUser
	nativeUserDo(t, s, "PATCH", "/api/v1/users/ann", `{"max_budget_usd":9,"metadata":{"team":"x"},"blocked":true}`, http.StatusOK, &upd)
	if upd.MaxBudgetUSD != 9 || !upd.Blocked || upd.Metadata["dept"] != nil || upd.Metadata["team"] != "x" || upd.Alias != "Ann" ||
		upd.TokensPerMinute != 1000 || !slices.Equal(upd.Models, []string{"openai/ok"}) {
		t.Fatalf("PATCH: %+v", upd)
	}
	var unblocked nativeUser
	nativeUserDo(t, s, "PATCH", "/api/v1/users/ann", `{"blocked":false,"models":[]}`, http.StatusOK, &unblocked)
	if unblocked.Blocked || unblocked.Models != nil || unblocked.MaxBudgetUSD != 9 {
		t.Fatalf("PATCH unblock, every model: %+v", unblocked)
	}
	var del userDeletion
	nativeUserDo(t, s, "DELETE", "/api/v1/users/ann", "", http.StatusOK, &del)
	if del.UserID != "ann" || del.Object != "user" || !del.Deleted || !slices.Equal(del.DeletedKeys, []string{vk.ID}) {
		t.Fatalf("DELETE: %+v", del)
	}
	wantFieldError(t, do(t, s, "GET", "/api/v1/users/ann", testKey, ""), http.StatusNotFound, "user_id")
	wantFieldError(t, do(t, s, "GET", "/api/v1/keys/"+vk.ID, testKey, ""), http.StatusNotFound, vk.ID) // revoked with the user
	var team teamMemberList
	nativeUserDo(t, s, "GET", "/api/v1/teams/eng/members", "", http.StatusOK, &team)
	if len(team.Data) != 0 {
		t.Fatalf("the deleted user is still a member: %+v", team)
	}
}

// TestNativeUserRefusals: bad input is a 422 naming the field (409 for an id or address
// taken, 404 for an unknown user or team) and changes nothing; another key's users are
// not this key's; a virtual key may not call any user route.
func TestNativeUserRefusals(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	nativeUserDo(t, s, "POST", "/api/v1/users", `{"user_id":"ann","email":"ann@example.com","max_budget_usd":3}`, http.StatusCreated, nil)
	for body, want := range map[string]struct {
		status int
		field  string
	}{
		`{"user_id":"a b"}`: {422, "user_id"},
		`{"user_id":"` + strings.Repeat("x", 129) + `"}`: {422, "user_id"},
		`{"email":"` + strings.Repeat("x", 257) + `"}`:   {422, "email"},
		`{"alias":"` + strings.Repeat("x", 257) + `"}`:   {422, "alias"},
		`{"role":"wizard"}`:                              {422, "role"},
		`{"max_budget_usd":-1}`:                          {422, "max_budget_usd"},
		`{"budget_duration":"soon"}`:                     {422, "budget_duration"},
		`{"models":["nope/none"]}`:                       {422, "models"},
		`{"tokens_per_minute":-5}`:                       {422, "tokens_per_minute"},
		`{"user_email":"x@example.com"}`:                 {422, "user_email"},
		`{"user_id":"ann"}`:                              {409, "user_id"},
		`{"user_id":"bob","email":"ANN@example.com"}`:    {409, "email"},
		`{"user_id":"bob","teams":["no-such-team"]}`:     {404, "teams"},
		`{"user_id":"bob","max_budget_usd":"lots"}`:      {422, "max_budget_usd"},
	} {
		wantFieldError(t, do(t, s, "POST", "/api/v1/users", testKey, body), want.status, want.field)
	}
	var l userList
	nativeUserDo(t, s, "GET", "/api/v1/users", "", http.StatusOK, &l)
	if len(l.Data) != 1 {
		t.Fatalf("a refused create stored a user: %+v", l.Data)
	}
	nativeUserDo(t, s, "POST", "/api/v1/users", `{"user_id":"bob","email":"bob@example.com"}`, http.StatusCreated, nil)
	for body, want := range map[string]struct {
		status int
		field  string
	}{
		`{"user_id":"other"}`:            {422, "user_id"},
		`{"teams":["x"]}`:                {422, "teams"},
		`{"max_budget_usd":-2}`:          {422, "max_budget_usd"},
		`{"role":"wizard"}`:              {422, "role"},
		`{"nickname":"A"}`:               {422, "nickname"},
		`{"email":"bob@example.com"}`:    {409, "email"},
		`{"models":["nope/none"]}`:       {422, "models"},
		`{"budget_duration":"sometime"}`: {422, "budget_duration"},
	} {
		wantFieldError(t, do(t, s, "PATCH", "/api/v1/users/ann", testKey, body), want.status, want.field)
	}
	var ann nativeUser
	nativeUserDo(t, s, "GET", "/api/v1/users/ann", "", http.StatusOK, &ann)
	if ann.MaxBudgetUSD != 3 || ann.Email != "ann@example.com" || ann.Role != "internal_user" {
		t.Fatalf("a refused update changed the user: %+v", ann)
	}
	for _, method := range []string{"GET", "PATCH", "DELETE"} {
		wantFieldError(t, do(t, s, method, "/api/v1/users/ghost", testKey, `{}`), http.StatusNotFound, "user_id")
		// Another operator key's users are not this key's.
		wantFieldError(t, do(t, s, method, "/api/v1/users/ann", completionsOtherKey, `{}`), http.StatusNotFound, "user_id")
	}
	// Operator keys only: a virtual key may not manage users or members.
	var vk virtualKey
	nativeUserDo(t, s, "POST", "/api/v1/keys", `{}`, http.StatusCreated, &vk)
	for _, c := range []struct{ method, path string }{
		{"POST", "/api/v1/users"}, {"GET", "/api/v1/users"}, {"GET", "/api/v1/users/ann"}, {"PATCH", "/api/v1/users/ann"},
		{"DELETE", "/api/v1/users/ann"}, {"POST", "/api/v1/teams/eng/members"}, {"GET", "/api/v1/teams/eng/members"},
		{"PATCH", "/api/v1/teams/eng/members/ann"}, {"DELETE", "/api/v1/teams/eng/members/ann"},
	} {
		if r := do(t, s, c.method, c.path, vk.Key, `{}`); r.status != http.StatusForbidden {
			t.Fatalf("a virtual key called %s %s: %d %s", c.method, c.path, r.status, r.raw)
		}
	}
	nativeUserDo(t, s, "GET", "/api/v1/users/ann", "", http.StatusOK, nil)
}

// TestNativeUserListPages: GET /api/v1/users pages the users oldest first with limit and
// cursor (next_cursor absent on the last page) and refuses a bad parameter naming it.
func TestNativeUserListPages(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	var want []string
	for i := range 5 {
		id := fmt.Sprintf("u%d", i)
		nativeUserDo(t, s, "POST", "/api/v1/users", `{"user_id":"`+id+`"}`, http.StatusCreated, nil)
		want = append(want, id)
	}
	var got []string
	cursor, pages := "", 0
	for {
		var l userList
		nativeUserDo(t, s, "GET", "/api/v1/users?limit=2&cursor="+cursor, "", http.StatusOK, &l)
		pages++
		for _, u := range l.Data {
			got = append(got, u.UserID)
		}
		if l.NextCursor == "" {
			break
		}
		cursor = l.NextCursor
	}
	if !slices.Equal(got, want) || pages != 3 {
		t.Fatalf("paged %v in %d pages, want %v in 3", got, pages, want)
	}
	wantFieldError(t, do(t, s, "GET", "/api/v1/users?cursor=nonsense", testKey, ""), http.StatusUnprocessableEntity, "cursor")
	wantFieldError(t, do(t, s, "GET", "/api/v1/users?status=active", testKey, ""), http.StatusUnprocessableEntity, "status")
	// A customers' cursor is not a users' one.
	for i := range 2 {
		nativeUserDo(t, s, "POST", "/api/v1/customers", fmt.Sprintf(`{"end_user_id":"c%d"}`, i), http.StatusCreated, nil)
	}
	var cl endUserList
	nativeUserDo(t, s, "GET", "/api/v1/customers?limit=1", "", http.StatusOK, &cl)
	wantFieldError(t, do(t, s, "GET", "/api/v1/users?cursor="+cl.NextCursor, testKey, ""), http.StatusUnprocessableEntity, "cursor")
	if r := do(t, s, "GET", "/api/v1/users?limit=0", testKey, ""); r.status != http.StatusUnprocessableEntity || !strings.Contains(r.raw, "limit") {
		t.Fatalf("limit 0: %d %s", r.status, r.raw)
	}
}

// TestNativeUsersShareLiteLLMRecords: a user made natively is LiteLLM's user on /user/info
// (and /user/update's change shows natively), one made by /user/new is read and deleted
// natively with its keys, as /user/delete deletes them.
func TestNativeUsersShareLiteLLMRecords(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	nativeUserDo(t, s, "POST", "/api/v1/users", `{"user_id":"ann","email":"ann@example.com","max_budget_usd":4,"role":"proxy_admin"}`, http.StatusCreated, nil)
	info := litellmUserInfoOf(t, s, "ann")
	if info.UserInfo == nil || info.UserInfo.UserEmail == nil || *info.UserInfo.UserEmail != "ann@example.com" ||
		info.UserInfo.MaxBudget == nil || *info.UserInfo.MaxBudget != 4 || info.UserInfo.UserRole != "proxy_admin" {
		t.Fatalf("/user/info of a native user: %+v", info.UserInfo)
	}
	if r := do(t, s, "POST", "/user/update", testKey, `{"user_id":"ann","user_alias":"Ann","max_budget":0}`); r.status != http.StatusOK {
		t.Fatalf("/user/update: %d %s", r.status, r.raw)
	}
	var ann nativeUser
	nativeUserDo(t, s, "GET", "/api/v1/users/ann", "", http.StatusOK, &ann)
	if ann.Alias != "Ann" || !ann.Blocked {
		t.Fatalf("a LiteLLM update seen natively: %+v", ann)
	}
	// An address is one user's on both surfaces.
	wantLiteLLMError(t, do(t, s, "POST", "/user/new", testKey, `{"user_email":"ann@example.com"}`), http.StatusBadRequest, "user_email")

	made := litellmUserNew(t, s, `{"user_id":"bob","user_email":"bob@example.com","max_budget":2}`)
	var bob nativeUser
	nativeUserDo(t, s, "GET", "/api/v1/users/bob", "", http.StatusOK, &bob)
	if bob.Email != "bob@example.com" || bob.MaxBudgetUSD != 2 || !slices.Equal(bob.KeyIDs, []string{*made.Token}) {
		t.Fatalf("a /user/new user natively: %+v", bob)
	}
	var l userList
	nativeUserDo(t, s, "GET", "/api/v1/users", "", http.StatusOK, &l)
	if len(l.Data) != 2 || l.Data[0].UserID != "ann" || l.Data[1].UserID != "bob" {
		t.Fatalf("list: %+v", l.Data)
	}
	other := litellmGenerate(t, s, `{"user_id":"ann"}`)
	if st, b := chatStatus(t, hs.URL, *made.Key, "openai/ok"); st != http.StatusOK {
		t.Fatalf("bob's key before the delete: %d %s", st, b)
	}
	var del userDeletion
	nativeUserDo(t, s, "DELETE", "/api/v1/users/bob", "", http.StatusOK, &del)
	if !slices.Equal(del.DeletedKeys, []string{*made.Token}) {
		t.Fatalf("DELETE: %+v", del)
	}
	if st, b := chatStatus(t, hs.URL, *made.Key, "openai/ok"); st != http.StatusUnauthorized {
		t.Fatalf("the deleted user's key: %d %s", st, b)
	}
	wantLiteLLMError(t, do(t, s, "GET", "/user/info?user_id=bob", testKey, ""), http.StatusNotFound, "bob")
	// ann's key is blocked by ann's max_budget 0, not revoked.
	if st, b := chatStatus(t, hs.URL, other.Key, "openai/ok"); st == http.StatusOK || !strings.Contains(b, "User=ann is blocked") {
		t.Fatalf("the blocked user's key: %d %s", st, b)
	}
	nativeUserDo(t, s, "PATCH", "/api/v1/users/ann", `{"blocked":false,"max_budget_usd":0}`, http.StatusOK, nil)
	if st, b := chatStatus(t, hs.URL, other.Key, "openai/ok"); st != http.StatusOK {
		t.Fatalf("the unblocked user's key: %d %s", st, b)
	}
}

// TestNativeTeamMembers: POST, GET, PATCH and DELETE /api/v1/teams/{team_id}/members
// manage a team's members, the same memberships as /team/member_*: a member added
// natively is in /team/info's members_with_roles and /user/info's teams, and the reverse.
func TestNativeTeamMembers(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	nativeUserDo(t, s, "POST", "/api/v1/teams", `{"team_id":"eng"}`, http.StatusCreated, nil)
	nativeUserDo(t, s, "POST", "/api/v1/users", `{"user_id":"ann"}`, http.StatusCreated, nil)
	var m nativeTeamMember
	nativeUserDo(t, s, "POST", "/api/v1/teams/eng/members", `{"user_id":"ann","max_budget_usd":2}`, http.StatusCreated, &m)
	if m.TeamID != "eng" || m.UserID != "ann" || m.Object != "team_member" || m.Role != "user" || m.MaxBudgetUSD != 2 {
		t.Fatalf("added %+v", m)
	}
	if info := litellmUserInfoOf(t, s, "ann"); !slices.Equal(info.UserInfo.Teams, []string{"eng"}) {
		t.Fatalf("/user/info teams: %+v", info.UserInfo.Teams)
	}
	r := do(t, s, "GET", "/team/info?team_id=eng", testKey, "")
	if r.status != http.StatusOK || !strings.Contains(r.raw, `"user_id":"ann"`) || !strings.Contains(r.raw, `"max_budget":2`) {
		t.Fatalf("/team/info: %d %s", r.status, r.raw)
	}
	nativeUserDo(t, s, "PATCH", "/api/v1/teams/eng/members/ann", `{"role":"admin"}`, http.StatusOK, &m)
	if m.Role != "admin" || m.MaxBudgetUSD != 2 {
		t.Fatalf("PATCH: %+v", m)
	}
	// Added through LiteLLM's route, listed natively.
	if r := do(t, s, "POST", "/team/member_add", testKey, `{"team_id":"eng","member":{"user_id":"bob","role":"user"}}`); r.status != http.StatusOK {
		t.Fatalf("/team/member_add: %d %s", r.status, r.raw)
	}
	var l teamMemberList
	nativeUserDo(t, s, "GET", "/api/v1/teams/eng/members", "", http.StatusOK, &l)
	if len(l.Data) != 2 || l.Data[0].UserID != "ann" || l.Data[0].Role != "admin" || l.Data[1].UserID != "bob" {
		t.Fatalf("members: %+v", l)
	}
	wantFieldError(t, do(t, s, "POST", "/api/v1/teams/eng/members", testKey, `{"user_id":"ann"}`), http.StatusConflict, "user_id")
	wantFieldError(t, do(t, s, "POST", "/api/v1/teams/eng/members", testKey, `{"user_id":"ghost"}`), http.StatusNotFound, "user_id")
	wantFieldError(t, do(t, s, "POST", "/api/v1/teams/eng/members", testKey, `{}`), http.StatusUnprocessableEntity, "user_id")
	wantFieldError(t, do(t, s, "POST", "/api/v1/teams/nope/members", testKey, `{"user_id":"ann"}`), http.StatusNotFound, "team_id")
	wantFieldError(t, do(t, s, "POST", "/api/v1/teams/eng/members", testKey, `{"user_id":"bob","role":"boss"}`), http.StatusUnprocessableEntity, "role")
	wantFieldError(t, do(t, s, "PATCH", "/api/v1/teams/eng/members/ann", testKey, `{"max_budget_usd":-1}`), http.StatusUnprocessableEntity, "max_budget_usd")
	wantFieldError(t, do(t, s, "PATCH", "/api/v1/teams/eng/members/ann", testKey, `{"user_id":"bob"}`), http.StatusUnprocessableEntity, "user_id")
	wantFieldError(t, do(t, s, "GET", "/api/v1/teams/nope/members", testKey, ""), http.StatusNotFound, "team_id")
	var del teamMemberDeletion
	nativeUserDo(t, s, "DELETE", "/api/v1/teams/eng/members/ann", "", http.StatusOK, &del)
	if !del.Deleted || del.UserID != "ann" || del.TeamID != "eng" {
		t.Fatalf("DELETE: %+v", del)
	}
	wantFieldError(t, do(t, s, "DELETE", "/api/v1/teams/eng/members/ann", testKey, ""), http.StatusNotFound, "user_id")
	wantFieldError(t, do(t, s, "PATCH", "/api/v1/teams/eng/members/ann", testKey, `{}`), http.StatusNotFound, "user_id")
	if info := litellmUserInfoOf(t, s, "ann"); len(info.UserInfo.Teams) != 0 {
		t.Fatalf("/user/info teams after the delete: %+v", info.UserInfo.Teams)
	}
	var ann nativeUser
	nativeUserDo(t, s, "GET", "/api/v1/users/ann", "", http.StatusOK, &ann) // the user stays
}

// TestNativeUserRoutesInOpenAPI: the OpenAPI document lists the native user and member
// routes.
func TestNativeUserRoutesInOpenAPI(t *testing.T) {
	hs, _ := keysServer(t, nil, 0)
	resp, err := http.Get(hs.URL + "/api/v1/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var doc struct {
		Paths map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"/api/v1/users": {"post", "get"}, "/api/v1/users/{user_id}": {"get", "patch", "delete"},
		"/api/v1/teams/{team_id}/members": {"post", "get"}, "/api/v1/teams/{team_id}/members/{user_id}": {"patch", "delete"},
	}
	for path, methods := range want {
		for _, m := range methods {
			if doc.Paths[path][m] == nil {
				t.Errorf("the OpenAPI document lacks %s %s", strings.ToUpper(m), path)
			}
		}
	}
}
