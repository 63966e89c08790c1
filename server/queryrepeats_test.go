package server

import (
	"net/http"
	"strings"
	"testing"
)

// TestRepeatedQueryParameters: a scalar query parameter given more than once takes its
// last value on the LiteLLM-compatible routes (as FastAPI does), where the handlers read
// the first before; on the native /api/v1 routes it is a 422 naming it; a list parameter
// (a listing's status) keeps every value on either.
func TestRepeatedQueryParameters(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	litellmTeamNew(t, s, `{"team_id":"search"}`)

	if r := do(t, s, "GET", "/team/info?team_id=nope&team_id=search", testKey, ""); r.status != http.StatusOK || !strings.Contains(r.raw, `"team_id":"search"`) {
		t.Fatalf("/team/info with the team last: %d %s", r.status, r.raw)
	}
	if r := do(t, s, "GET", "/team/info?team_id=search&team_id=nope", testKey, ""); r.status != http.StatusNotFound {
		t.Fatalf("/team/info with another team last: %d %s", r.status, r.raw)
	}
	// An empty value first no longer hides the one after it.
	if r := do(t, s, "GET", "/team/info?team_id=&team_id=search", testKey, ""); r.status != http.StatusOK || !strings.Contains(r.raw, `"team_id":"search"`) {
		t.Fatalf("/team/info with an empty value first: %d %s", r.status, r.raw)
	}

	r := do(t, s, "GET", "/api/v1/teams/search?x=1&x=2", testKey, "")
	if msg, _ := r.body["message"].(string); r.status != http.StatusUnprocessableEntity || msg != "query parameter x is given more than once (give it once)" {
		t.Fatalf("native, repeated: %d %s", r.status, r.raw)
	}
	r = do(t, s, "GET", "/api/v1/conversations?limit=5&limit=10", testKey, "")
	if msg, _ := r.body["message"].(string); r.status != http.StatusUnprocessableEntity || !strings.Contains(msg, "query parameter limit is given more than once") {
		t.Fatalf("native list, repeated limit: %d %s", r.status, r.raw)
	}
	if r := do(t, s, "GET", "/api/v1/conversations?limit=5&cursor=", testKey, ""); r.status != http.StatusOK {
		t.Fatalf("native list, once each: %d %s", r.status, r.raw)
	}

	// status is a list: repeated, every value is read (the second one is checked too).
	e := routersServer(t)
	if got := ids(t, do(t, e.h, "GET", "/api/v1/routers/train/jobs?status=queued&status=failed", testKey, ""), "training_job_id"); len(got) != 0 {
		t.Fatalf("status repeated: %v", got)
	}
	wantError(t, do(t, e.h, "GET", "/api/v1/routers/train/jobs?status=queued&status=sleeping", testKey, ""), http.StatusUnprocessableEntity, KindValidation, "status")
}
