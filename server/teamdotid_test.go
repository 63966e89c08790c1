package server

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/store"
)

// TestTeamDotIDsRefused: a team id "." or ".." cannot be reached through
// /api/v1/teams/{team_id} nor its members' routes (a URL path cleans those segments
// away), so no route makes such a team: 422 naming team_id on POST /api/v1/teams, 400 on
// LiteLLM's /team/new; nothing is stored. A team of such an id an earlier build made stays
// reachable where it was (LiteLLM's routes, which take the id in the query or body, and
// a key's team_id). An id with dots among other characters stays good.
func TestTeamDotIDsRefused(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	for _, id := range []string{".", ".."} {
		wantError(t, do(t, s, "POST", "/api/v1/teams", testKey, `{"team_id":"`+id+`"}`), http.StatusUnprocessableEntity, KindValidation, "team_id")
		wantStatusMessage(t, do(t, s, "POST", "/team/new", testKey, `{"team_id":"`+id+`"}`), http.StatusBadRequest, "team_id: ")
	}
	if n := countStored(t, s, store.Teams); n != 0 {
		t.Fatalf("%d teams stored", n)
	}
	nativeUserDo(t, s, "POST", "/api/v1/teams", `{"team_id":"a..b"}`, http.StatusCreated, nil)
	nativeUserDo(t, s, "GET", "/api/v1/teams/a..b", "", http.StatusOK, nil)

	// A team "." stored by an earlier build, beside the operator's team a..b.
	ctx := context.Background()
	es, err := s.cfg.Store.List(ctx, store.Teams, store.ListOptions{})
	if err != nil || len(es) != 1 {
		t.Fatalf("teams stored: %v %v", es, err)
	}
	owner := strings.TrimSuffix(es[0].Key, "/a..b")
	old := team{TeamID: ".", Object: "team", CreatedAt: time.Now().UTC()}
	if err := s.cfg.Store.Update(ctx, func(tx store.Tx) error {
		if err := completions.PutSharedBudget(ctx, tx, teamBudgetID(owner, "."), completions.BudgetLimits{}); err != nil {
			return err
		}
		return store.PutJSON(ctx, tx, store.Teams, owner+"/.", storedTeam{team: old, Owner: owner})
	}); err != nil {
		t.Fatal(err)
	}
	if r := do(t, s, "GET", "/team/info?team_id=.", testKey, ""); r.status != http.StatusOK {
		t.Fatalf("/team/info of an earlier build's team \".\": %d %s", r.status, r.raw)
	}
	if r := do(t, s, "POST", "/team/update", testKey, `{"team_id":".","team_alias":"dot"}`); r.status != http.StatusOK {
		t.Fatalf("/team/update of an earlier build's team \".\": %d %s", r.status, r.raw)
	}
	var vk virtualKey
	nativeUserDo(t, s, "POST", "/api/v1/keys", `{"team_id":"."}`, http.StatusCreated, &vk)
	if vk.TeamID != "." {
		t.Fatalf("a key of team \".\": %+v", vk)
	}
}
