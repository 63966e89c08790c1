package server

import (
	"encoding/json"
	"net/http"
	"testing"
)

// TestOrganizationInfoListsTeamlessKeys: /organization/info, the deprecated POST form and
// /organization/list show an organization's own keys (made with organization_id and no
// team, which no team lists) in keys, not its teams' keys (in their teams' keys) nor keys
// of another organization or of none; an organization without such keys shows [].
func TestOrganizationInfoListsTeamlessKeys(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	litellmOrganizationNew(t, s, `{"organization_id":"acme","organization_alias":"Acme"}`)
	litellmOrganizationNew(t, s, `{"organization_id":"beta","organization_alias":"Beta"}`)
	litellmTeamNew(t, s, `{"team_id":"eng","organization_id":"acme"}`)
	own := litellmGenerate(t, s, `{"organization_id":"acme"}`)
	team := litellmGenerate(t, s, `{"team_id":"eng"}`)
	litellmGenerate(t, s, `{}`)

	type org struct {
		OrganizationID string   `json:"organization_id"`
		Keys           []string `json:"keys"`
		Teams          []struct {
			Keys []string `json:"keys"`
		} `json:"teams"`
	}
	check := func(where string, o org) {
		t.Helper()
		switch o.OrganizationID {
		case "acme":
			if len(o.Keys) != 1 || o.Keys[0] != own.Token || len(o.Teams) != 1 || len(o.Teams[0].Keys) != 1 || o.Teams[0].Keys[0] != team.Token {
				t.Errorf("%s: acme %+v, want keys [%s] and team eng's [%s]", where, o, own.Token, team.Token)
			}
		case "beta":
			if o.Keys == nil || len(o.Keys) != 0 {
				t.Errorf("%s: beta's keys %#v, want []", where, o.Keys)
			}
		}
	}
	var one org
	r := do(t, s, "GET", "/organization/info?organization_id=acme", testKey, "")
	if r.status != http.StatusOK || json.Unmarshal([]byte(r.raw), &one) != nil {
		t.Fatalf("/organization/info: %d %s", r.status, r.raw)
	}
	check("GET /organization/info", one)
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/organization/list", ""},
		{"POST", "/organization/info", `{"organizations":["acme","beta"]}`},
	} {
		var many []org
		r := do(t, s, c.method, c.path, testKey, c.body)
		if r.status != http.StatusOK || json.Unmarshal([]byte(r.raw), &many) != nil || len(many) != 2 {
			t.Fatalf("%s %s: %d %s", c.method, c.path, r.status, r.raw)
		}
		for _, o := range many {
			check(c.method+" "+c.path, o)
		}
	}
}
