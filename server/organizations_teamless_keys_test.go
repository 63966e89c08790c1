package server

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// TestOrganizationTeamlessKeyBudgets: /key/generate takes organization_id without team_id
// (as LiteLLM's does): the key is the organization's, answered with its organization_id,
// its spend is the organization's too (past the organization's max_budget its keys are
// refused naming it), its user's max_budget_in_organization bounds it, a blocked
// organization refuses it, and its models must be within the organization's.
func TestOrganizationTeamlessKeyBudgets(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	acme := litellmOrganizationNew(t, s, `{"organization_id":"acme","organization_alias":"Acme","models":["openai/ok"],"max_budget":0.03}`)
	if r := do(t, s, "POST", "/organization/member_add", testKey, `{"organization_id":"acme","member":{"user_id":"ann","role":"internal_user"},"max_budget_in_organization":0.02}`); r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	ann := litellmGenerate(t, s, `{"organization_id":"acme","user_id":"ann"}`)
	plain := litellmGenerate(t, s, `{"organization_id":"acme"}`)
	var info struct {
		Info litellmKeyInfo `json:"info"`
	}
	if r := do(t, s, "GET", "/key/info?key="+ann.Token, testKey, ""); r.status != http.StatusOK || json.Unmarshal([]byte(r.raw), &info) != nil ||
		info.Info.OrganizationID == nil || *info.Info.OrganizationID != "acme" || info.Info.TeamID != nil {
		t.Fatalf("/key/info of an organization's key: %d %s", r.status, r.raw)
	}

	for i := range 2 { // $0.013 each: the second starts at 0.013 < 0.02
		if st, b := chatStatus(t, hs.URL, ann.Key, "openai/ok"); st != http.StatusOK {
			t.Fatalf("ann's call %d: %d %s", i+1, st, b)
		}
	}
	if st, b := chatStatus(t, hs.URL, ann.Key, "openai/ok"); st != http.StatusTooManyRequests || !strings.Contains(b, "User=ann in Organization=acme") {
		t.Fatalf("ann's key past max_budget_in_organization: %d %s", st, b)
	}
	if st, b := chatStatus(t, hs.URL, plain.Key, "openai/ok"); st != http.StatusOK { // 0.026 < 0.03
		t.Fatalf("another key of the organization: %d %s", st, b)
	}
	if st, b := chatStatus(t, hs.URL, plain.Key, "openai/ok"); st != http.StatusTooManyRequests || !strings.Contains(b, "Organization=acme") {
		t.Fatalf("a key past the organization's max_budget: %d %s", st, b)
	}
	if got := litellmOrganizationInfo(t, s, acme.OrganizationID); got.Spend < 0.039 {
		t.Fatalf("the organization's spend: %v, want its keys' 0.039", got.Spend)
	}
	wantParam(t, do(t, s, "POST", "/key/generate", testKey, `{"organization_id":"acme","models":["openai/ok2"]}`), http.StatusBadRequest, "models", "organization acme")

	// A blocked organization refuses its keys.
	litellmOrganizationNew(t, s, `{"organization_id":"blk","organization_alias":"Blk"}`)
	kb := litellmGenerate(t, s, `{"organization_id":"blk"}`)
	if st, b := chatStatus(t, hs.URL, kb.Key, "openai/ok"); st != http.StatusOK {
		t.Fatalf("a key of an open organization: %d %s", st, b)
	}
	if r := do(t, s, "PATCH", "/organization/update", testKey, `{"organization_id":"blk","blocked":true}`); r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	if st, b := chatStatus(t, hs.URL, kb.Key, "openai/ok"); st == http.StatusOK || !strings.Contains(b, "Organization=blk is blocked") {
		t.Fatalf("a key of a blocked organization: %d %s", st, b)
	}
	// Narrowing the organization's models under its key is refused naming the key.
	litellmOrganizationNew(t, s, `{"organization_id":"wide","organization_alias":"Wide"}`)
	kw := litellmGenerate(t, s, `{"organization_id":"wide","models":["openai/ok2"]}`)
	wantParam(t, do(t, s, "PATCH", "/organization/update", testKey, `{"organization_id":"wide","models":["openai/ok"]}`), http.StatusBadRequest, "models", kw.Token)
}

// TestOrganizationTeamlessKeyListAndPermissions: GET /key/list?organization_id= lists an
// organization's own keys beside those of its teams; a key is made in an organization
// only by an operator key that has it (another's is a 404 naming organization_id, a
// virtual key a 403), and a team_id beside organization_id must be a team of that
// organization (400 naming organization_id). /key/update moves a key into and out of an
// organization.
func TestOrganizationTeamlessKeyListAndPermissions(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	litellmOrganizationNew(t, s, `{"organization_id":"acme","organization_alias":"Acme"}`)
	litellmTeamNew(t, s, `{"team_id":"eng","organization_id":"acme"}`)
	litellmTeamNew(t, s, `{"team_id":"ops"}`)
	own := litellmGenerate(t, s, `{"organization_id":"acme"}`)
	team := litellmGenerate(t, s, `{"team_id":"eng","organization_id":"acme"}`)
	other := litellmGenerate(t, s, `{}`)

	listed := func() []string {
		t.Helper()
		r := do(t, s, "GET", "/key/list?organization_id=acme", testKey, "")
		var out struct {
			Keys []string `json:"keys"`
		}
		if r.status != http.StatusOK || json.Unmarshal([]byte(r.raw), &out) != nil {
			t.Fatalf("GET /key/list?organization_id=acme: %d %s", r.status, r.raw)
		}
		slices.Sort(out.Keys)
		return out.Keys
	}
	want := []string{own.Token, team.Token}
	slices.Sort(want)
	if got := listed(); !slices.Equal(got, want) {
		t.Fatalf("the keys of organization acme: %v, want %v", got, want)
	}

	wantParam(t, do(t, s, "POST", "/key/generate", testKey, `{"team_id":"ops","organization_id":"acme"}`), http.StatusBadRequest, "organization_id", "team ops")
	wantParam(t, do(t, s, "POST", "/key/generate", testKey, `{"organization_id":"nope"}`), http.StatusNotFound, "organization_id", "nope")
	// Another operator's organization is not this one's.
	if r := do(t, s, "POST", "/key/generate", completionsOtherKey, `{"organization_id":"acme"}`); r.status != http.StatusNotFound || !strings.Contains(r.raw, "organization_id") {
		t.Fatalf("another operator's organization: %d %s", r.status, r.raw)
	}
	if r := do(t, s, "POST", "/key/generate", own.Key, `{"organization_id":"acme"}`); r.status != http.StatusForbidden {
		t.Fatalf("a virtual key making an organization's key: %d %s", r.status, r.raw)
	}

	// /key/update: into the organization, then out of it.
	if r := do(t, s, "POST", "/key/update", testKey, `{"key":"`+other.Token+`","organization_id":"acme"}`); r.status != http.StatusOK || !strings.Contains(r.raw, `"organization_id":"acme"`) {
		t.Fatalf("/key/update into the organization: %d %s", r.status, r.raw)
	}
	if got := listed(); len(got) != 3 || !slices.Contains(got, other.Token) {
		t.Fatalf("after /key/update into the organization: %v", got)
	}
	if r := do(t, s, "POST", "/key/update", testKey, `{"key":"`+other.Token+`","organization_id":null}`); r.status != http.StatusOK || !strings.Contains(r.raw, `"organization_id":null`) {
		t.Fatalf("/key/update out of the organization: %d %s", r.status, r.raw)
	}
	if got := listed(); !slices.Equal(got, want) {
		t.Fatalf("after /key/update out of the organization: %v, want %v", got, want)
	}
}

// TestOrganizationDeleteRevokesTeamlessKeys: DELETE /organization/delete revokes the
// organization's own keys with its teams' (as it deletes the teams and their keys): they
// stop working at once and /key/info no longer finds them; a key of another organization
// stays.
func TestOrganizationDeleteRevokesTeamlessKeys(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	litellmOrganizationNew(t, s, `{"organization_id":"acme","organization_alias":"Acme"}`)
	litellmOrganizationNew(t, s, `{"organization_id":"beta","organization_alias":"Beta"}`)
	k := litellmGenerate(t, s, `{"organization_id":"acme"}`)
	kb := litellmGenerate(t, s, `{"organization_id":"beta"}`)
	if st, b := chatStatus(t, hs.URL, k.Key, "openai/ok"); st != http.StatusOK {
		t.Fatalf("before the delete: %d %s", st, b)
	}
	if r := do(t, s, "DELETE", "/organization/delete", testKey, `{"organization_ids":["acme"]}`); r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	if st, b := chatStatus(t, hs.URL, k.Key, "openai/ok"); st != http.StatusUnauthorized {
		t.Fatalf("a key of a deleted organization: %d %s", st, b)
	}
	if r := do(t, s, "GET", "/key/info?key="+k.Token, testKey, ""); r.status != http.StatusNotFound {
		t.Fatalf("/key/info of a key of a deleted organization: %d %s", r.status, r.raw)
	}
	if st, b := chatStatus(t, hs.URL, kb.Key, "openai/ok"); st != http.StatusOK {
		t.Fatalf("a key of another organization: %d %s", st, b)
	}
}

// TestOrganizationKeyOfNonMember: a key's user_id need not be a member of its organization
// (LiteLLM's /key/generate does not ask it): an organization's key, and a key of one of its
// teams, made for a user who is in no membership are made and spend through the
// organization's account, no membership is made for the user, and an org_admin
// membership elsewhere gives the user's key nothing here.
func TestOrganizationKeyOfNonMember(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	litellmOrganizationNew(t, s, `{"organization_id":"acme","organization_alias":"Acme"}`)
	litellmOrganizationNew(t, s, `{"organization_id":"beta","organization_alias":"Beta"}`)
	litellmTeamNew(t, s, `{"team_id":"eng","organization_id":"acme"}`)
	if r := do(t, s, "POST", "/organization/member_add", testKey, `{"organization_id":"beta","member":{"user_id":"zed","role":"org_admin"}}`); r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	for _, body := range []string{`{"organization_id":"acme","user_id":"zed"}`, `{"team_id":"eng","user_id":"zed"}`} {
		k := litellmGenerate(t, s, body)
		if st, b := chatStatus(t, hs.URL, k.Key, "openai/ok"); st != http.StatusOK {
			t.Fatalf("%s: %d %s", body, st, b)
		}
		if r := do(t, s, "GET", "/organization/info?organization_id=acme", k.Key, ""); r.status != http.StatusForbidden {
			t.Fatalf("%s: a non-member's key reading acme: %d %s", body, r.status, r.raw)
		}
	}
	info := litellmOrganizationInfo(t, s, "acme")
	if len(info.Members) != 0 || info.Spend < 0.025 {
		t.Fatalf("acme after two non-member keys' calls: members %+v spend %v", info.Members, info.Spend)
	}
}
