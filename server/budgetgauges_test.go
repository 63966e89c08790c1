package server

import (
	"context"
	"net/http"
	"testing"
)

// TestBudgetAccountExists: the existence check the LiteLLM budget gauges drop deleted keys
// and teams by answers true for a stored virtual key and team of the owner, false once
// /key/delete and /team/delete took them away (and for another owner's), and true for an
// account of another kind.
func TestBudgetAccountExists(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	exists := BudgetAccountExists(s.cfg.Store)
	ctx := context.Background()
	owner := ownerOfKey(t, testKey)
	k := litellmGenerate(t, s, `{}`)
	litellmTeamNew(t, s, `{"team_id":"eng"}`)
	check := func(kind, owner, id string, want bool) {
		t.Helper()
		if got, err := exists(ctx, kind, owner, id); err != nil || got != want {
			t.Errorf("%s %s of %q: %v, %v; want %v", kind, id, owner, got, err, want)
		}
	}
	check("key", owner, k.Token, true)
	check("team", owner, "eng", true)
	check("key", "someone-else", k.Token, false)
	check("user", owner, "ann", true)
	if r := do(t, s, "POST", "/key/delete", testKey, `{"keys":["`+k.Token+`"]}`); r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	if r := do(t, s, "POST", "/team/delete", testKey, `{"team_ids":["eng"]}`); r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	check("key", owner, k.Token, false)
	check("team", owner, "eng", false)
}
