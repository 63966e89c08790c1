package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// orgOfKey reads the organization_id /key/info shows for the key with token ("" for null).
func orgOfKey(t *testing.T, s *Server, token string) string {
	t.Helper()
	r := do(t, s, "GET", "/key/info?key="+token, testKey, "")
	var info struct {
		Info litellmKeyInfo `json:"info"`
	}
	if r.status != http.StatusOK || json.Unmarshal([]byte(r.raw), &info) != nil {
		t.Fatalf("GET /key/info: %d %s", r.status, r.raw)
	}
	if info.Info.OrganizationID == nil {
		return ""
	}
	return *info.Info.OrganizationID
}

// TestTeamKeyShowsTeamOrganization: a key of a team in an organization shows that
// organization as its organization_id (it spends through it) on /key/info, /key/list's
// full objects, /team/info and /key/generate's answer, though /key/generate named only
// the team; a key of a team in no organization shows null.
func TestTeamKeyShowsTeamOrganization(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	litellmOrganizationNew(t, s, `{"organization_id":"acme","organization_alias":"Acme"}`)
	litellmTeamNew(t, s, `{"team_id":"eng","organization_id":"acme"}`)
	litellmTeamNew(t, s, `{"team_id":"ops"}`)
	r := do(t, s, "POST", "/key/generate", testKey, `{"team_id":"eng"}`)
	if r.status != http.StatusOK || !strings.Contains(r.raw, `"organization_id":"acme"`) {
		t.Fatalf("/key/generate of a team in acme: %d %s", r.status, r.raw)
	}
	var eng litellmGenerated
	if err := json.Unmarshal([]byte(r.raw), &eng); err != nil {
		t.Fatal(err)
	}
	ops := litellmGenerate(t, s, `{"team_id":"ops"}`)
	if got := orgOfKey(t, s, eng.Token); got != "acme" {
		t.Fatalf("/key/info of a key of team eng (in acme): organization_id %q", got)
	}
	if got := orgOfKey(t, s, ops.Token); got != "" {
		t.Fatalf("/key/info of a key of team ops (in none): organization_id %q", got)
	}
	r = do(t, s, "GET", "/key/list?return_full_object=true&team_id=eng", testKey, "")
	if r.status != http.StatusOK || !strings.Contains(r.raw, eng.Token) || !strings.Contains(r.raw, `"organization_id":"acme"`) {
		t.Fatalf("/key/list of team eng's keys: %d %s", r.status, r.raw)
	}
	r = do(t, s, "GET", "/team/info?team_id=eng", testKey, "")
	var ti struct {
		Keys []litellmKeyInfo `json:"keys"`
	}
	if r.status != http.StatusOK || json.Unmarshal([]byte(r.raw), &ti) != nil || len(ti.Keys) != 1 ||
		ti.Keys[0].OrganizationID == nil || *ti.Keys[0].OrganizationID != "acme" {
		t.Fatalf("/team/info of eng: %d %s", r.status, r.raw)
	}
}

// TestKeyLeavingTeamStaysInOrganization: /key/update with team_id null takes a key out
// of its team but keeps it in the team's organization, whose budget it goes on drawing
// on (past it the key is refused naming the organization), unless organization_id: null
// comes with it; the native PATCH /api/v1/keys/{key_id} reads null team_id and
// organization_id as "" (out of them) rather than leaving them.
func TestKeyLeavingTeamStaysInOrganization(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	litellmOrganizationNew(t, s, `{"organization_id":"acme","organization_alias":"Acme","max_budget":0.02}`)
	litellmTeamNew(t, s, `{"team_id":"eng","organization_id":"acme"}`)
	k := litellmGenerate(t, s, `{"team_id":"eng"}`)
	for i := range 2 { // $0.013 each: the second starts at 0.013 < 0.02
		if st, b := chatStatus(t, hs.URL, k.Key, "openai/ok"); st != http.StatusOK {
			t.Fatalf("call %d in team eng: %d %s", i+1, st, b)
		}
	}
	r := do(t, s, "POST", "/key/update", testKey, `{"key":"`+k.Token+`","team_id":null}`)
	if r.status != http.StatusOK || !strings.Contains(r.raw, `"team_id":null`) || !strings.Contains(r.raw, `"organization_id":"acme"`) {
		t.Fatalf("/key/update team_id null: %d %s", r.status, r.raw)
	}
	if st, b := chatStatus(t, hs.URL, k.Key, "openai/ok"); st != http.StatusTooManyRequests || !strings.Contains(b, "Organization=acme") {
		t.Fatalf("a key out of its team, past its organization's budget: %d %s", st, b)
	}

	// Out of both at once.
	litellmTeamNew(t, s, `{"team_id":"web","organization_id":"acme"}`)
	k2 := litellmGenerate(t, s, `{"team_id":"web"}`)
	r = do(t, s, "POST", "/key/update", testKey, `{"key":"`+k2.Token+`","team_id":null,"organization_id":null}`)
	if r.status != http.StatusOK || !strings.Contains(r.raw, `"organization_id":null`) {
		t.Fatalf("/key/update team_id and organization_id null: %d %s", r.status, r.raw)
	}
	if st, b := chatStatus(t, hs.URL, k2.Key, "openai/ok"); st != http.StatusOK {
		t.Fatalf("a key out of its team and organization: %d %s", st, b)
	}

	// Native PATCH: null clears.
	k3 := litellmGenerate(t, s, `{"organization_id":"acme"}`)
	if r := do(t, s, "PATCH", "/api/v1/keys/"+k3.Token, testKey, `{"organization_id":null}`); r.status != http.StatusOK || strings.Contains(r.raw, `"organization_id"`) {
		t.Fatalf("PATCH organization_id null: %d %s", r.status, r.raw)
	}
	if got := orgOfKey(t, s, k3.Token); got != "" {
		t.Fatalf("after PATCH organization_id null: organization_id %q", got)
	}
	k4 := litellmGenerate(t, s, `{"team_id":"web"}`)
	if r := do(t, s, "PATCH", "/api/v1/keys/"+k4.Token, testKey, `{"team_id":null}`); r.status != http.StatusOK || strings.Contains(r.raw, `"team_id"`) ||
		!strings.Contains(r.raw, `"organization_id":"acme"`) {
		t.Fatalf("PATCH team_id null: %d %s", r.status, r.raw)
	}
}

// TestSpendLogsNameKeyOrganization: /spend/logs rows carry LiteLLM's
// metadata.user_api_key_org_id, the organization the key spends through: a team-less
// organization key's own, a team key's team's; a key in none has no such label.
func TestSpendLogsNameKeyOrganization(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	litellmOrganizationNew(t, s, `{"organization_id":"acme","organization_alias":"Acme"}`)
	litellmTeamNew(t, s, `{"team_id":"eng","organization_id":"acme"}`)
	keys := map[string]litellmGenerated{
		"acme/own":  litellmGenerate(t, s, `{"organization_id":"acme"}`),
		"acme/team": litellmGenerate(t, s, `{"team_id":"eng"}`),
		"":          litellmGenerate(t, s, `{}`),
	}
	for name, k := range keys {
		chatOK(t, hs.URL, k.Key, "openai/ok", "")
		rows := spendLogs(t, s, testKey, "api_key="+k.Token)
		if len(rows) != 1 {
			t.Fatalf("%q: %d rows", name, len(rows))
		}
		org, has := rows[0].Metadata["user_api_key_org_id"]
		want, _, _ := strings.Cut(name, "/")
		if (want == "") == has || (has && org != want) {
			t.Fatalf("%q: metadata.user_api_key_org_id %v (given %v), want %q", name, org, has, want)
		}
	}
}

// TestKeyIntoTeamTakesTeamOrganization: /key/update (and the native PATCH) putting a key
// into a team puts it in the team's organization, whichever it was in, without
// organization_id: null in the same update (LiteLLM gives a team's key its team's
// organization_id): an organization's own key moved into a team in no organization spends
// outside the organization (its block no longer refuses it), one moved into another
// organization's team is in that one; an organization_id sent beside the team that is not
// the team's is still a 400 naming organization_id, and the key stays as it was.
func TestKeyIntoTeamTakesTeamOrganization(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	litellmOrganizationNew(t, s, `{"organization_id":"acme","organization_alias":"Acme"}`)
	litellmOrganizationNew(t, s, `{"organization_id":"beta","organization_alias":"Beta"}`)
	litellmTeamNew(t, s, `{"team_id":"eng","organization_id":"acme"}`)
	litellmTeamNew(t, s, `{"team_id":"ops"}`)
	litellmTeamNew(t, s, `{"team_id":"web","organization_id":"beta"}`)
	own := litellmGenerate(t, s, `{"organization_id":"acme"}`)
	if r := do(t, s, "PATCH", "/organization/update", testKey, `{"organization_id":"acme","blocked":true}`); r.status != http.StatusOK {
		t.Fatalf("blocking acme: %d %s", r.status, r.raw)
	}
	if st, b := chatStatus(t, hs.URL, own.Key, "openai/ok"); st == http.StatusOK {
		t.Fatalf("a key of blocked acme: %d %s", st, b)
	}

	r := do(t, s, "POST", "/key/update", testKey, `{"key":"`+own.Token+`","team_id":"ops","organization_id":"acme"}`)
	if r.status != http.StatusBadRequest || r.body["error"].(map[string]any)["param"] != "organization_id" {
		t.Fatalf("team ops beside organization_id acme: %d %s", r.status, r.raw)
	}
	if got := orgOfKey(t, s, own.Token); got != "acme" {
		t.Fatalf("after the refused update: organization_id %q, want acme", got)
	}
	if r := do(t, s, "POST", "/key/update", testKey, `{"key":"`+own.Token+`","team_id":"ops"}`); r.status != http.StatusOK || !strings.Contains(r.raw, `"team_id":"ops"`) {
		t.Fatalf("acme's key into team ops: %d %s", r.status, r.raw)
	}
	if got := orgOfKey(t, s, own.Token); got != "" {
		t.Fatalf("acme's key in team ops: organization_id %q, want none", got)
	}
	if st, b := chatStatus(t, hs.URL, own.Key, "openai/ok"); st != http.StatusOK {
		t.Fatalf("the key out of blocked acme, in team ops: %d %s", st, b)
	}
	if info := litellmOrganizationInfo(t, s, "acme"); len(info.Keys) != 0 {
		t.Fatalf("acme's own keys after the move: %v", info.Keys)
	}

	// Into another organization's team: LiteLLM's and the native route.
	own2 := litellmGenerate(t, s, `{"organization_id":"acme"}`)
	if r := do(t, s, "POST", "/key/update", testKey, `{"key":"`+own2.Token+`","team_id":"web"}`); r.status != http.StatusOK {
		t.Fatalf("acme's key into beta's team web: %d %s", r.status, r.raw)
	}
	if got := orgOfKey(t, s, own2.Token); got != "beta" {
		t.Fatalf("acme's key in team web: organization_id %q, want beta", got)
	}
	own3 := litellmGenerate(t, s, `{"organization_id":"acme"}`)
	if r := do(t, s, "PATCH", "/api/v1/keys/"+own3.Token, testKey, `{"team_id":"ops"}`); r.status != http.StatusOK || strings.Contains(r.raw, `"organization_id"`) {
		t.Fatalf("PATCH team_id ops of acme's key: %d %s", r.status, r.raw)
	}
	team := litellmGenerate(t, s, `{"team_id":"eng"}`)
	if r := do(t, s, "POST", "/key/update", testKey, `{"key":"`+team.Token+`","team_id":"web"}`); r.status != http.StatusOK {
		t.Fatalf("eng's key into web: %d %s", r.status, r.raw)
	}
	if got := orgOfKey(t, s, team.Token); got != "beta" {
		t.Fatalf("eng's key in team web: organization_id %q, want beta", got)
	}
}
