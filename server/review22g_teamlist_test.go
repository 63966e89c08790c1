package server

import (
	"encoding/json"
	"net/http"
	"testing"
)

// LiteLLM's /team/list answers each team with its keys as key objects (token, key_alias,
// spend, …) and its team_memberships: a script listing a team's keys' aliases or spend
// reads keys[i]["token"], which a list of bare tokens breaks.
func TestReview22gTeamListKeysAreObjects(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	litellmTeamNew(t, s, `{"team_id":"eng"}`)
	g := litellmGenerate(t, s, `{"team_id":"eng","key_alias":"ci-bot","max_budget":3}`)
	r := do(t, s, "GET", "/team/list", testKey, "")
	if r.status != http.StatusOK {
		t.Fatalf("GET /team/list: %d %s", r.status, r.raw)
	}
	var teams []struct {
		TeamID          string           `json:"team_id"`
		Keys            []map[string]any `json:"keys"`
		TeamMemberships []any            `json:"team_memberships"`
	}
	if err := json.Unmarshal([]byte(r.raw), &teams); err != nil {
		t.Fatalf("GET /team/list %s: %v", r.raw, err)
	}
	if len(teams) != 1 || len(teams[0].Keys) != 1 || teams[0].TeamMemberships == nil {
		t.Fatalf("GET /team/list %s: want one team with one key object and team_memberships", r.raw)
	}
	k := teams[0].Keys[0]
	if k["token"] != g.Token || k["key_alias"] != "ci-bot" || k["max_budget"] != 3.0 || k["team_id"] != "eng" {
		t.Fatalf("team key %v: want token %s, key_alias ci-bot, max_budget 3, team_id eng", k, g.Token)
	}
}
