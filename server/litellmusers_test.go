package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/storetest/drivertest"
)

// litellmUserNew creates a user through /user/new and returns its answer.
func litellmUserNew(t *testing.T, s *Server, body string) litellmNewUser {
	t.Helper()
	r := do(t, s, "POST", "/user/new", testKey, body)
	if r.status != http.StatusOK {
		t.Fatalf("POST /user/new %s: %d %s", body, r.status, r.raw)
	}
	var out litellmNewUser
	if err := json.Unmarshal([]byte(r.raw), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// litellmUserInfoOf reads GET /user/info of id.
func litellmUserInfoOf(t *testing.T, s *Server, id string) litellmUserInfo {
	t.Helper()
	r := do(t, s, "GET", "/user/info?user_id="+id, testKey, "")
	var out litellmUserInfo
	if r.status != http.StatusOK || json.Unmarshal([]byte(r.raw), &out) != nil {
		t.Fatalf("GET /user/info?user_id=%s: %d %s", id, r.status, r.raw)
	}
	return out
}

// TestLiteLLMUserNew: /user/new makes a user (its id made when not given) and a key for it
// that names it, unless auto_create_key is false; the user and key show in /user/info.
func TestLiteLLMUserNew(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	u := litellmUserNew(t, s, `{"user_email":"ann@example.com","user_role":"internal_user","max_budget":5,"budget_duration":"30d","models":["openai/ok"],"metadata":{"dept":"eng"},"key_alias":"ann-key"}`)
	if len(u.UserID) != 36 || u.UserEmail == nil || *u.UserEmail != "ann@example.com" || u.MaxBudget == nil || *u.MaxBudget != 5 ||
		u.Key == nil || !strings.HasPrefix(*u.Key, "sy-vk-") || u.Token == nil || u.KeyAlias == nil || *u.KeyAlias != "ann-key" || u.UserRole != "internal_user" {
		t.Fatalf("created %+v", u)
	}
	info := litellmUserInfoOf(t, s, u.UserID)
	if len(info.Keys) != 1 || info.Keys[0].Token != *u.Token || info.Keys[0].UserID == nil || *info.Keys[0].UserID != u.UserID ||
		info.UserInfo.Models[0] != "openai/ok" || info.UserInfo.Metadata["dept"] != "eng" || info.UserInfo.BudgetDuration == nil {
		t.Fatalf("/user/info: %+v", info)
	}
	nokey := litellmUserNew(t, s, `{"user_id":"bob@example.com","auto_create_key":false}`)
	if nokey.UserID != "bob@example.com" || nokey.Key != nil || nokey.Token != nil || nokey.UserRole != "internal_user" {
		t.Fatalf("auto_create_key false: %+v", nokey)
	}
	if info := litellmUserInfoOf(t, s, "bob@example.com"); len(info.Keys) != 0 {
		t.Fatalf("auto_create_key false made keys: %+v", info.Keys)
	}
	if r := do(t, s, "GET", "/key/list", testKey, ""); r.body["total_count"] != 1.0 {
		t.Fatalf("keys: %s", r.raw)
	}
}

// TestLiteLLMUserNewRefusals: bad input is a 400 naming the field, a user_id or address
// taken too, and nothing is stored (no user, no key).
func TestLiteLLMUserNewRefusals(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	litellmUserNew(t, s, `{"user_id":"ann","user_email":"ann@example.com","auto_create_key":false}`)
	for body, field := range map[string]string{
		`{"user_id":"ann"}`:                           "user_id",
		`{"user_email":"ann@example.com"}`:            "user_email",
		`{"user_id":"a b"}`:                           "user_id",
		`{"user_role":"wizard"}`:                      "user_role",
		`{"max_budget":-1}`:                           "max_budget",
		`{"max_budget":"lots"}`:                       "max_budget",
		`{"budget_duration":"soon"}`:                  "budget_duration",
		`{"models":["nope/none"]}`:                    "models[0]",
		`{"tpm_limit":0}`:                             "tpm_limit",
		`{"rpm_limit":10}`:                            "rpm_limit",
		`{"organization_id":"org-1"}`:                 "organization_id",
		`{"metadata":[1]}`:                            "metadata",
		`{"auto_create_key":"yes"}`:                   "auto_create_key",
		`{"user_id":"new1","duration":"forever"}`:     "duration",
		`{"user_id":"new2","teams":["no-such-team"]}`: "teams",
	} {
		status := http.StatusBadRequest
		if field == "teams" {
			status = http.StatusNotFound
		}
		wantLiteLLMError(t, do(t, s, "POST", "/user/new", testKey, body), status, field)
	}
	r := do(t, s, "GET", "/user/list", testKey, "")
	if r.body["total"] != 1.0 {
		t.Fatalf("a refused request stored a user: %s", r.raw)
	}
	if r := do(t, s, "GET", "/key/list", testKey, ""); r.body["total_count"] != 0.0 {
		t.Fatalf("a refused request stored a key: %s", r.raw)
	}
	// Operator keys only: a virtual key may not manage users.
	k := litellmGenerate(t, s, `{}`)
	if r := do(t, s, "POST", "/user/new", k.Key, `{}`); r.status != http.StatusForbidden {
		t.Fatalf("a virtual key made a user: %d %s", r.status, r.raw)
	}
	for _, path := range []string{"/user/info?user_id=ann", "/user/list"} {
		if r := do(t, s, "GET", path, k.Key, ""); r.status != http.StatusForbidden {
			t.Fatalf("a virtual key read %s: %d %s", path, r.status, r.raw)
		}
	}
}

// TestLiteLLMUserInfoUpdateDelete: /user/info of an unknown user is a 404 naming user_id;
// /user/update changes the fields given (null removes a limit) by user_id or user_email;
// /user/delete deletes users and their keys, all or none.
func TestLiteLLMUserInfoUpdateDelete(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	wantLiteLLMError(t, do(t, s, "GET", "/user/info?user_id=ghost", testKey, ""), http.StatusNotFound, "ghost")
	u := litellmUserNew(t, s, `{"user_id":"cat","user_email":"cat@example.com","max_budget":3,"tpm_limit":1000}`)
	r := do(t, s, "POST", "/user/update", testKey, `{"user_id":"cat","max_budget":null,"user_alias":"Cat","user_role":"proxy_admin_viewer"}`)
	var upd litellmUserUpdated
	if r.status != http.StatusOK || json.Unmarshal([]byte(r.raw), &upd) != nil {
		t.Fatalf("/user/update: %d %s", r.status, r.raw)
	}
	if upd.UserID != "cat" || upd.Data.MaxBudget != nil || upd.Data.UserAlias == nil || *upd.Data.UserAlias != "Cat" ||
		upd.Data.TPMLimit == nil || *upd.Data.TPMLimit != 1000 || upd.Data.UserRole != "proxy_admin_viewer" {
		t.Fatalf("/user/update: %s", r.raw)
	}
	r = do(t, s, "POST", "/user/update", testKey, `{"user_email":"cat@example.com","max_budget":7}`)
	if r.status != http.StatusOK || !strings.Contains(r.raw, `"max_budget":7`) {
		t.Fatalf("/user/update by user_email: %d %s", r.status, r.raw)
	}
	wantLiteLLMError(t, do(t, s, "POST", "/user/update", testKey, `{"user_id":"ghost","max_budget":1}`), http.StatusNotFound, "ghost")
	wantLiteLLMError(t, do(t, s, "POST", "/user/update", testKey, `{"max_budget":1}`), http.StatusBadRequest, "user_id")
	wantLiteLLMError(t, do(t, s, "POST", "/user/update", testKey, `{"user_id":"cat","max_budget":-4}`), http.StatusBadRequest, "max_budget")
	wantLiteLLMError(t, do(t, s, "POST", "/user/update", testKey, `{"user_id":"cat","teams":["x"]}`), http.StatusBadRequest, "teams")
	if info := litellmUserInfoOf(t, s, "cat"); info.UserInfo.MaxBudget == nil || *info.UserInfo.MaxBudget != 7 {
		t.Fatalf("a refused update changed the user: %+v", info.UserInfo)
	}
	// A key made with the user's id by /key/generate is the user's too.
	k2 := litellmGenerate(t, s, `{"user_id":"cat"}`)
	other := litellmGenerate(t, s, `{"user_id":"nobody"}`)
	wantLiteLLMError(t, do(t, s, "POST", "/user/delete", testKey, `{"user_ids":["cat","ghost"]}`), http.StatusNotFound, "ghost")
	litellmUserInfoOf(t, s, "cat") // all or none
	wantLiteLLMError(t, do(t, s, "POST", "/user/delete", testKey, `{"user_ids":[]}`), http.StatusBadRequest, "user_ids")
	r = do(t, s, "POST", "/user/delete", testKey, `{"user_ids":["cat"]}`)
	var del litellmUserDeletion
	if r.status != http.StatusOK || json.Unmarshal([]byte(r.raw), &del) != nil || len(del.DeletedKeys) != 2 ||
		!strings.Contains(r.raw, *u.Token) || !strings.Contains(r.raw, k2.Token) {
		t.Fatalf("/user/delete: %d %s", r.status, r.raw)
	}
	wantLiteLLMError(t, do(t, s, "GET", "/user/info?user_id=cat", testKey, ""), http.StatusNotFound, "cat")
	if st, b := chatStatus(t, hs.URL, *u.Key, "openai/ok"); st != http.StatusUnauthorized {
		t.Fatalf("the deleted user's key: %d %s", st, b)
	}
	if st, b := chatStatus(t, hs.URL, other.Key, "openai/ok"); st != http.StatusOK {
		t.Fatalf("another user's key: %d %s", st, b)
	}
}

// TestLiteLLMUserList: /user/list pages the users oldest first and filters them by
// user_ids, role and team; bad paging is a 400 naming it.
func TestLiteLLMUserList(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	litellmTeamNew(t, s, `{"team_id":"eng"}`)
	for _, body := range []string{`{"user_id":"u1","auto_create_key":false,"teams":["eng"]}`, `{"user_id":"u2","auto_create_key":false,"user_role":"proxy_admin"}`,
		`{"user_id":"u3","auto_create_key":false}`} {
		litellmUserNew(t, s, body)
	}
	list := func(q string) litellmUserList {
		t.Helper()
		r := do(t, s, "GET", "/user/list"+q, testKey, "")
		var out litellmUserList
		if r.status != http.StatusOK || json.Unmarshal([]byte(r.raw), &out) != nil {
			t.Fatalf("/user/list%s: %d %s", q, r.status, r.raw)
		}
		return out
	}
	ids := func(l litellmUserList) string {
		var out []string
		for _, u := range l.Users {
			out = append(out, u.UserID)
		}
		return strings.Join(out, ",")
	}
	if l := list(""); l.Total != 3 || l.Page != 1 || l.PageSize != 25 || l.TotalPages != 1 || ids(l) != "u1,u2,u3" {
		t.Fatalf("all: %+v", l)
	}
	if l := list("?page=2&page_size=2"); l.Total != 3 || l.TotalPages != 2 || ids(l) != "u3" {
		t.Fatalf("page 2: %+v", l)
	}
	if l := list("?user_ids=u3,u1"); ids(l) != "u1,u3" {
		t.Fatalf("user_ids: %+v", l)
	}
	if l := list("?role=proxy_admin"); ids(l) != "u2" {
		t.Fatalf("role: %+v", l)
	}
	if l := list("?team=eng"); ids(l) != "u1" || len(l.Users[0].Teams) != 1 || l.Users[0].Teams[0] != "eng" {
		t.Fatalf("team: %+v", l)
	}
	for q, field := range map[string]string{"?page=0": "page", "?page_size=101": "page_size", "?role=boss": "role", "?sort=x": "sort"} {
		wantLiteLLMError(t, do(t, s, "GET", "/user/list"+q, testKey, ""), http.StatusBadRequest, field)
	}
}

// TestLiteLLMUserBudgetStopsItsKeys: a user's max_budget is one account its keys share:
// once one key spent it, the other key (its own budget untouched) is refused in LiteLLM's
// words naming the user, while a key without a user goes on; a raised budget lets them on.
func TestLiteLLMUserBudgetStopsItsKeys(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	u := litellmUserNew(t, s, `{"user_id":"dee","max_budget":0.02}`)
	k2 := litellmGenerate(t, s, `{"user_id":"dee","max_budget":1}`)
	free := litellmGenerate(t, s, `{}`)
	for i := range 2 { // $0.013 each: the second starts at 0.013 < 0.02
		if st, b := chatStatus(t, hs.URL, *u.Key, "openai/ok"); st != http.StatusOK {
			t.Fatalf("call %d of the user's first key: %d %s", i+1, st, b)
		}
	}
	st, b := chatStatus(t, hs.URL, k2.Key, "openai/ok")
	if st != http.StatusTooManyRequests || !strings.Contains(b, "Budget has been exceeded! User=dee Current cost: 0.026") || !strings.Contains(b, "Max budget: 0.02") {
		t.Fatalf("the user's second key over the user's budget: %d %s", st, b)
	}
	if vk := keyInfoOf(t, s, testKey, "/api/v1/keys/"+k2.Token); vk.Spend.Requests != 0 {
		t.Fatalf("the refused key's own account: %+v", vk.Spend)
	}
	if st, b := chatStatus(t, hs.URL, free.Key, "openai/ok"); st != http.StatusOK {
		t.Fatalf("a key of no user: %d %s", st, b)
	}
	if info := litellmUserInfoOf(t, s, "dee"); info.UserInfo.Spend < 0.0259 || len(info.Keys) != 2 {
		t.Fatalf("/user/info: %+v", info)
	}
	if r := do(t, s, "POST", "/user/update", testKey, `{"user_id":"dee","max_budget":1}`); r.status != http.StatusOK || !strings.Contains(r.raw, `"spend":0.026`) {
		t.Fatalf("/user/update: %d %s", r.status, r.raw)
	}
	if st, b := chatStatus(t, hs.URL, k2.Key, "openai/ok"); st != http.StatusOK {
		t.Fatalf("after the user's budget was raised: %d %s", st, b)
	}
	// max_budget 0 blocks the user's keys; models bound them.
	if r := do(t, s, "POST", "/user/update", testKey, `{"user_id":"dee","max_budget":0}`); r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	// A block is LiteLLM's 401 auth_error on /v1/, as a blocked key's and team's are.
	if st, b := chatStatus(t, hs.URL, k2.Key, "openai/ok"); st != http.StatusUnauthorized || !strings.Contains(b, "User=dee is blocked") {
		t.Fatalf("a blocked user's key: %d %s", st, b)
	}
	if r := do(t, s, "POST", "/user/update", testKey, `{"user_id":"dee","max_budget":null,"models":["openai/ok2"]}`); r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	if st, b := chatStatus(t, hs.URL, k2.Key, "openai/ok"); st != http.StatusUnauthorized {
		t.Fatalf("a model outside the user's: %d %s", st, b)
	}
	if st, b := chatStatus(t, hs.URL, k2.Key, "openai/ok2"); st != http.StatusOK {
		t.Fatalf("the user's model: %d %s", st, b)
	}
}

// TestLiteLLMTeamMembers: /team/member_add puts users in a team (making the one its
// address names), its answers and /team/info show members_with_roles and
// team_memberships; max_budget_in_team stops a member's keys of the team;
// /team/member_update changes the role and budget; /team/member_delete takes the member
// out. Unknown teams and members are 404s, bad fields 400s naming them.
func TestLiteLLMTeamMembers(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	litellmTeamNew(t, s, `{"team_id":"eng","max_budget":10}`)
	litellmUserNew(t, s, `{"user_id":"eve","auto_create_key":false}`)
	r := do(t, s, "POST", "/team/member_add", testKey, `{"team_id":"eng","member":[{"user_id":"eve","role":"admin"},{"user_email":"fay@example.com","role":"user"}],"max_budget_in_team":0.02}`)
	var added litellmMemberAdded
	if r.status != http.StatusOK || json.Unmarshal([]byte(r.raw), &added) != nil {
		t.Fatalf("/team/member_add: %d %s", r.status, r.raw)
	}
	if len(added.MembersWithRoles) != 2 || len(added.UpdatedUsers) != 2 || len(added.UpdatedTeamMemberships) != 2 ||
		added.UpdatedTeamMemberships[0].Budget.MaxBudget == nil || *added.UpdatedTeamMemberships[0].Budget.MaxBudget != 0.02 {
		t.Fatalf("/team/member_add: %s", r.raw)
	}
	fay := added.UpdatedUsers[1]
	if fay.UserEmail == nil || *fay.UserEmail != "fay@example.com" || len(fay.Teams) != 1 {
		t.Fatalf("the user made for an address: %+v", fay)
	}
	r = do(t, s, "GET", "/team/info?team_id=eng", testKey, "")
	var info litellmTeamInfo
	if r.status != http.StatusOK || json.Unmarshal([]byte(r.raw), &info) != nil || len(info.TeamInfo.MembersWithRoles) != 2 || len(info.TeamMemberships) != 2 {
		t.Fatalf("/team/info: %d %s", r.status, r.raw)
	}
	roles := map[string]string{}
	for _, m := range info.TeamInfo.MembersWithRoles {
		roles[m.UserID] = m.Role
	}
	if roles["eve"] != "admin" || roles[fay.UserID] != "user" {
		t.Fatalf("members_with_roles: %+v", info.TeamInfo.MembersWithRoles)
	}
	if r := do(t, s, "GET", "/team/list", testKey, ""); !strings.Contains(r.raw, `"members_with_roles":[{`) || !strings.Contains(r.raw, `"team_memberships":[{`) {
		t.Fatalf("/team/list: %s", r.raw)
	}
	if u := litellmUserInfoOf(t, s, "eve"); len(u.Teams) != 1 || u.Teams[0].TeamID != "eng" || len(u.UserInfo.Teams) != 1 {
		t.Fatalf("/user/info of a member: %+v", u)
	}
	// Refusals.
	for body, want := range map[string]struct {
		status int
		field  string
	}{
		`{"team_id":"eng","member":{"user_id":"eve","role":"admin"}}`: {http.StatusBadRequest, "already in team"},
		`{"team_id":"eng","member":{"user_id":"gus","role":"boss"}}`:  {http.StatusBadRequest, "member.role"},
		`{"team_id":"eng","member":{"role":"user"}}`:                  {http.StatusBadRequest, "user_id or user_email"},
		`{"team_id":"eng"}`:                                                                  {http.StatusBadRequest, "member"},
		`{"member":{"user_id":"gus","role":"user"}}`:                                         {http.StatusBadRequest, "team_id"},
		`{"team_id":"ops","member":{"user_id":"gus","role":"user"}}`:                         {http.StatusNotFound, "ops"},
		`{"team_id":"eng","member":{"user_id":"gus","role":"user"},"max_budget_in_team":-1}`: {http.StatusBadRequest, "max_budget_in_team"},
	} {
		wantLiteLLMError(t, do(t, s, "POST", "/team/member_add", testKey, body), want.status, want.field)
	}
	wantLiteLLMError(t, do(t, s, "GET", "/user/info?user_id=gus", testKey, ""), http.StatusNotFound, "gus")
	// A member's keys of the team stop at max_budget_in_team; its other keys do not.
	k := litellmGenerate(t, s, `{"user_id":"eve","team_id":"eng"}`)
	outside := litellmGenerate(t, s, `{"user_id":"eve"}`)
	for i := range 2 {
		if st, b := chatStatus(t, hs.URL, k.Key, "openai/ok"); st != http.StatusOK {
			t.Fatalf("call %d of the member's key: %d %s", i+1, st, b)
		}
	}
	if st, b := chatStatus(t, hs.URL, k.Key, "openai/ok"); st != http.StatusTooManyRequests || !strings.Contains(b, "User=eve in Team=eng") {
		t.Fatalf("over max_budget_in_team: %d %s", st, b)
	}
	if st, b := chatStatus(t, hs.URL, outside.Key, "openai/ok"); st != http.StatusOK {
		t.Fatalf("the member's key outside the team: %d %s", st, b)
	}
	r = do(t, s, "POST", "/team/member_update", testKey, `{"team_id":"eng","user_id":"eve","role":"user","max_budget_in_team":1}`)
	var upd litellmMemberUpdated
	if r.status != http.StatusOK || json.Unmarshal([]byte(r.raw), &upd) != nil || upd.Role != "user" || upd.MaxBudgetInTeam == nil || *upd.MaxBudgetInTeam != 1 {
		t.Fatalf("/team/member_update: %d %s", r.status, r.raw)
	}
	if st, b := chatStatus(t, hs.URL, k.Key, "openai/ok"); st != http.StatusOK {
		t.Fatalf("after max_budget_in_team was raised: %d %s", st, b)
	}
	wantLiteLLMError(t, do(t, s, "POST", "/team/member_update", testKey, `{"team_id":"eng","user_id":"eve","role":"owner"}`), http.StatusBadRequest, "role")
	wantLiteLLMError(t, do(t, s, "POST", "/team/member_update", testKey, `{"team_id":"eng","user_id":"ghost","role":"user"}`), http.StatusNotFound, "ghost")
	// Out of the team: its key of the team no longer draws on a membership.
	r = do(t, s, "POST", "/team/member_delete", testKey, `{"team_id":"eng","user_email":"fay@example.com"}`)
	if r.status != http.StatusOK || strings.Contains(r.raw, fay.UserID) {
		t.Fatalf("/team/member_delete: %d %s", r.status, r.raw)
	}
	wantLiteLLMError(t, do(t, s, "POST", "/team/member_delete", testKey, `{"team_id":"eng","user_email":"fay@example.com"}`), http.StatusNotFound, "not a member")
	wantLiteLLMError(t, do(t, s, "POST", "/team/member_delete", testKey, `{"team_id":"eng"}`), http.StatusBadRequest, "user_id")
	if u := litellmUserInfoOf(t, s, fay.UserID); len(u.UserInfo.Teams) != 0 {
		t.Fatalf("a member taken out still lists the team: %+v", u.UserInfo)
	}
}

// TestUserMembershipRecordsOnEveryBackend: a membership is stored under both its team and
// its user, and each way of ending it (/team/member_delete, deleting the team, deleting
// the user) removes both records and its account, on every store driver.
func TestUserMembershipRecordsOnEveryBackend(t *testing.T) {
	drivertest.ForEach(t, func(t *testing.T, d store.Driver) {
		st := store.New(d)
		_, s := keysServer(t, st, 0)
		count := func(c store.Collection) int {
			t.Helper()
			es, err := st.List(t.Context(), c, store.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			return len(es)
		}
		budgets := func(prefix string) int {
			t.Helper()
			es, err := st.List(t.Context(), store.Budgets, store.ListOptions{Prefix: prefix})
			if err != nil {
				t.Fatal(err)
			}
			return len(es)
		}
		want := func(members int) {
			t.Helper()
			if a, b, c := count(store.TeamMembers), count(store.UserTeams), budgets("member/"); a != members || b != members || c != members {
				t.Fatalf("memberships %d, by user %d, accounts %d; want %d each", a, b, c, members)
			}
		}
		litellmTeamNew(t, s, `{"team_id":"t1"}`)
		litellmTeamNew(t, s, `{"team_id":"t2"}`)
		litellmUserNew(t, s, `{"user_id":"a","auto_create_key":false,"teams":["t1","t2"]}`)
		litellmUserNew(t, s, `{"user_id":"b","auto_create_key":false,"teams":["t1"]}`)
		want(3)
		if r := do(t, s, "POST", "/team/member_delete", testKey, `{"team_id":"t2","user_id":"a"}`); r.status != http.StatusOK {
			t.Fatal(r.status, r.raw)
		}
		want(2)
		if r := do(t, s, "POST", "/team/member_add", testKey, `{"team_id":"t2","member":{"user_id":"b","role":"user"}}`); r.status != http.StatusOK {
			t.Fatal(r.status, r.raw)
		}
		want(3)
		if r := do(t, s, "POST", "/team/delete", testKey, `{"team_ids":["t2"]}`); r.status != http.StatusOK {
			t.Fatal(r.status, r.raw)
		}
		want(2)
		if r := do(t, s, "POST", "/user/delete", testKey, `{"user_ids":["a"]}`); r.status != http.StatusOK {
			t.Fatal(r.status, r.raw)
		}
		want(1)
		if n, b := count(store.Users), budgets("user/"); n != 1 || b != 1 {
			t.Fatalf("users %d, user accounts %d; want 1 each", n, b)
		}
	})
}
