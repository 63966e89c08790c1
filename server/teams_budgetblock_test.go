package server

import (
	"encoding/json"
	"net/http"
	"testing"
)

// TestTeamUpdateBlockedTrueKeepsBlock: /team/update naming blocked true with a new
// max_budget keeps a team made blocked by max_budget 0 blocked, and the block, now asked
// for outright, is not lifted by a later max_budget (as for end users).
func TestTeamUpdateBlockedTrueKeepsBlock(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	litellmTeamNew(t, s, `{"team_id":"ops","max_budget":0}`)
	blocked := func() bool {
		t.Helper()
		r := do(t, s, "GET", "/team/info?team_id=ops", testKey, "")
		var info litellmTeamInfo
		if r.status != http.StatusOK || json.Unmarshal([]byte(r.raw), &info) != nil {
			t.Fatalf("/team/info: %d %s", r.status, r.raw)
		}
		return info.TeamInfo.Blocked
	}
	if !blocked() {
		t.Fatal("max_budget 0 did not block the team")
	}
	if r := do(t, s, "POST", "/team/update", testKey, `{"team_id":"ops","max_budget":5,"blocked":true}`); r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	if !blocked() {
		t.Fatal("blocked true on /team/update unblocked the team")
	}
	if r := do(t, s, "POST", "/team/update", testKey, `{"team_id":"ops","max_budget":7}`); r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	if !blocked() {
		t.Fatal("a max_budget lifted a block asked for outright")
	}
}
