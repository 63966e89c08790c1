package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestLiteLLMUserListLiteLLMParams: /user/list takes the parameters LiteLLM's admin UI and
// SDK send: sort_by and sort_order order the users by the fields held here, user_email
// matches part of an address in any case, sso_user_ids (which no user here has) and
// organization_ids naming organizations no user is in match none; a bad sort or a
// parameter LiteLLM does not have is a 400 naming it.
func TestLiteLLMUserListLiteLLMParams(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	for _, body := range []string{
		`{"user_id":"u1","user_email":"zed@example.com","user_alias":"b","auto_create_key":false}`,
		`{"user_id":"u3","user_email":"amy@example.com","user_role":"proxy_admin","auto_create_key":false}`,
		`{"user_id":"u2","user_alias":"a","auto_create_key":false}`,
	} {
		litellmUserNew(t, s, body)
	}
	list := func(q string) (litellmUserList, string) {
		t.Helper()
		r := do(t, s, "GET", "/user/list"+q, testKey, "")
		var out litellmUserList
		if r.status != http.StatusOK || json.Unmarshal([]byte(r.raw), &out) != nil {
			t.Fatalf("/user/list%s: %d %s", q, r.status, r.raw)
		}
		var ids []string
		for _, u := range out.Users {
			ids = append(ids, u.UserID)
		}
		return out, strings.Join(ids, ",")
	}
	for q, want := range map[string]string{
		"":                                       "u1,u3,u2",
		"?sort_order=desc":                       "u2,u3,u1",
		"?sort_by=user_id":                       "u1,u2,u3",
		"?sort_by=user_id&sort_order=DESC":       "u3,u2,u1",
		"?sort_by=user_email&sort_order=asc":     "u3,u1,u2", // no address last
		"?sort_by=user_email&sort_order=desc":    "u1,u3,u2",
		"?sort_by=user_alias":                    "u2,u1,u3",
		"?sort_by=user_role&sort_order=desc":     "u3,u1,u2",
		"?sort_by=created_at&sort_order=desc":    "u2,u3,u1",
		"?sort_by=spend":                         "u1,u3,u2", // all 0: oldest first
		"?sort_by=user_id&page=2&page_size=2":    "u3",
		"?user_email=EXAMPLE.COM":                "u1,u3",
		"?user_email=amy":                        "u3",
		"?sso_user_ids=":                         "u1,u3,u2",
		"?sso_user_ids=sso-1":                    "",
		"?organization_ids=org-1,org-2":          "",
		"?organization_ids=&sort_by=user_id":     "u1,u2,u3",
		"?team=&user_ids=u2,%20u1&sort_by=spend": "u1,u2",
	} {
		if l, got := list(q); got != want {
			t.Errorf("/user/list%s: %s, want %s (%+v)", q, got, want, l)
		}
	}
	if l, _ := list("?organization_ids=org-1"); l.Total != 0 || l.TotalPages != 0 {
		t.Fatalf("organization_ids: %+v", l)
	}
	for q, field := range map[string]string{"?sort_by=age": "sort_by", "?sort_order=up": "sort_order", "?organization_id=org-1": "organization_id", "?sort=user_id": "sort"} {
		wantLiteLLMError(t, do(t, s, "GET", "/user/list"+q, testKey, ""), http.StatusBadRequest, field)
	}
}

// TestLiteLLMUserInfoWithoutUserID: an operator key asking /user/info without user_id is
// LiteLLM's proxy admin: user_id and user_info null, every virtual key and every team of
// the key, the teams with their members.
func TestLiteLLMUserInfoWithoutUserID(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	litellmTeamNew(t, s, `{"team_id":"eng"}`)
	litellmTeamNew(t, s, `{"team_id":"ops"}`)
	litellmUserNew(t, s, `{"user_id":"ann","teams":["eng"]}`)
	litellmUserNew(t, s, `{"user_id":"bob"}`)
	r := do(t, s, "GET", "/user/info", testKey, "")
	if r.status != http.StatusOK || r.body["user_id"] != nil || r.body["user_info"] != nil {
		t.Fatalf("/user/info without user_id: %d %s", r.status, r.raw)
	}
	var out litellmUserInfo
	if err := json.Unmarshal([]byte(r.raw), &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Keys) != 2 || len(out.Teams) != 2 {
		t.Fatalf("keys and teams of the key: %s", r.raw)
	}
	for _, tm := range out.Teams {
		if tm.TeamID == "eng" && (len(tm.MembersWithRoles) != 1 || tm.MembersWithRoles[0].UserID != "ann") {
			t.Fatalf("team eng's members: %+v", tm.MembersWithRoles)
		}
	}
	if r := do(t, s, "GET", "/user/info?user_id=nobody", testKey, ""); r.status != http.StatusNotFound {
		t.Fatalf("unknown user: %d %s", r.status, r.raw)
	}
}

// TestLiteLLMUserInfoTeamsHaveMembers: /user/info's teams list their members_with_roles
// as /team/info does.
func TestLiteLLMUserInfoTeamsHaveMembers(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	litellmTeamNew(t, s, `{"team_id":"eng"}`)
	litellmUserNew(t, s, `{"user_id":"ann","user_email":"ann@example.com","auto_create_key":false}`)
	if r := do(t, s, "POST", "/team/member_add", testKey, `{"team_id":"eng","member":[{"user_id":"ann","role":"admin"},{"user_id":"cy","role":"user"}]}`); r.status != http.StatusOK {
		t.Fatalf("/team/member_add: %d %s", r.status, r.raw)
	}
	info := litellmUserInfoOf(t, s, "ann")
	if info.UserID == nil || *info.UserID != "ann" || info.UserInfo == nil || len(info.Teams) != 1 {
		t.Fatalf("/user/info: %+v", info)
	}
	roles := map[string]string{}
	for _, m := range info.Teams[0].MembersWithRoles {
		roles[m.UserID] = m.Role
		if m.UserID == "ann" && (m.UserEmail == nil || *m.UserEmail != "ann@example.com") {
			t.Fatalf("ann's address: %+v", m)
		}
	}
	if len(roles) != 2 || roles["ann"] != "admin" || roles["cy"] != "user" {
		t.Fatalf("members_with_roles: %+v", info.Teams[0].MembersWithRoles)
	}
}

// TestLiteLLMMemberAddTakenAddressNamesTheMember: a member whose user_email another user
// has already is a 400 naming the member's user_email (member.user_email, or
// member[i].user_email in a list), not /user/new's user_email; nothing is stored.
func TestLiteLLMMemberAddTakenAddressNamesTheMember(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	litellmTeamNew(t, s, `{"team_id":"eng"}`)
	litellmUserNew(t, s, `{"user_id":"ann","user_email":"ann@example.com","auto_create_key":false}`)
	for body, field := range map[string]string{
		`{"team_id":"eng","member":{"user_id":"new1","user_email":"ANN@example.com","role":"user"}}`:                                    "member.user_email",
		`{"team_id":"eng","member":[{"user_id":"new2","role":"user"},{"user_id":"new3","user_email":"ann@example.com","role":"user"}]}`: "member[1].user_email",
	} {
		wantLiteLLMError(t, do(t, s, "POST", "/team/member_add", testKey, body), http.StatusBadRequest, field)
	}
	if l := do(t, s, "GET", "/user/list", testKey, ""); l.body["total"] != 1.0 {
		t.Fatalf("users stored by a refused member_add: %s", l.raw)
	}
}
