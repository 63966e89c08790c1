package server

import (
	"net/http"
	"testing"
)

// A key's own requests_per_minute refusing a request must not use up its team's shared
// rpm_limit: the team's other keys keep what the team has left.
func TestReview19cTeamRateNotTakenWhenKeyRefuses(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	litellmTeamNew(t, s, `{"team_id":"rl","rpm_limit":3}`)
	a := litellmGenerate(t, s, `{"team_id":"rl","rpm_limit":1}`)
	b := litellmGenerate(t, s, `{"team_id":"rl"}`)
	want := []int{http.StatusOK, http.StatusTooManyRequests, http.StatusTooManyRequests}
	for i, w := range want {
		if st, body := chatStatus(t, hs.URL, a.Key, "openai/ok"); st != w {
			t.Fatalf("key a request %d: %d %s, want %d", i+1, st, body, w)
		}
	}
	// The team answered one request: two of its three are left for key b.
	for i := range 2 {
		if st, body := chatStatus(t, hs.URL, b.Key, "openai/ok"); st != http.StatusOK {
			t.Fatalf("key b request %d within the team's rate: %d %s", i+1, st, body)
		}
	}
}

// A key's models are checked against its team's as the gateway resolves them: a model of
// a team's model group, or a bare name for the team's provider/model, is among the team's
// models; a model outside them is still refused naming models.
func TestReview19cKeyModelsWithinTeamGroupOrBareName(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	litellmTeamNew(t, s, `{"team_id":"grp","models":["pair"]}`)
	litellmTeamNew(t, s, `{"team_id":"full","models":["openai/ok"]}`)
	k := issue(t, s, `{"team_id":"grp","models":["openai/ok"]}`)
	if st, body := chatStatus(t, hs.URL, k.Key, "openai/ok"); st != http.StatusOK {
		t.Fatalf("a model of the team's group: %d %s", st, body)
	}
	issue(t, s, `{"team_id":"full","models":["ok"]}`)
	wantError(t, do(t, s, "POST", "/api/v1/keys", testKey, `{"team_id":"grp","models":["openai/other"]}`), http.StatusUnprocessableEntity, KindValidation, "models[0]")
}
