package server

import (
	"net/http"
	"strings"
	"testing"
)

// TestKeyIntoTeamRatesWithinTeams: a key moved into a team with a tpm_limit or rpm_limit
// above the team's is refused with a 403 naming the field, as LiteLLM's
// validate_key_team_change refuses ("Key=… has a tpm_limit=… which is greater than the
// team's tpm_limit=…"), on /key/update (tpm_limit, rpm_limit) and PATCH /api/v1/keys/{id}
// (tokens_per_minute), the key left where it was; lowered in the same request, or equal to
// the team's, or into a team without the bound, the move goes through; a key without a
// bound moves freely.
func TestKeyIntoTeamRatesWithinTeams(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	litellmTeamNew(t, s, `{"team_id":"eng","tpm_limit":50,"rpm_limit":10}`)
	litellmTeamNew(t, s, `{"team_id":"open"}`)
	teamOf := func(token string) string {
		if id := litellmKeyInfoOf(t, s, token).TeamID; id != nil {
			return *id
		}
		return ""
	}
	update := func(body string) reply { return do(t, s, "POST", "/key/update", testKey, body) }

	fast := litellmGenerate(t, s, `{"tpm_limit":100}`)
	wantOrgRefusal(t, "a key of tpm 100 into eng (50)", update(`{"key":"`+fast.Token+`","team_id":"eng"}`), http.StatusForbidden, "tpm_limit",
		"tpm_limit: Key="+fast.Token+" has a limit of 100 tokens per minute, which is greater than the 50 of team=eng")
	if r := do(t, s, "PATCH", "/api/v1/keys/"+fast.Token, testKey, `{"team_id":"eng"}`); r.status != http.StatusForbidden || !strings.Contains(r.raw, `tokens_per_minute: Key=`) {
		t.Fatalf("PATCH a key of tpm 100 into eng: %d %s", r.status, r.raw)
	}
	if got := teamOf(fast.Token); got != "" {
		t.Fatalf("the key after the refused moves: team_id %q, want none", got)
	}
	chatty := litellmGenerate(t, s, `{"rpm_limit":11}`)
	wantOrgRefusal(t, "a key of rpm 11 (no tpm) into eng (10)", update(`{"key":"`+chatty.Token+`","team_id":"eng"}`), http.StatusForbidden, "rpm_limit", "11 requests per minute, which is greater than the 10 of team=eng")

	for _, c := range []struct{ what, key, body string }{
		{"lowered with the move", fast.Token, `"team_id":"eng","tpm_limit":40`},
		{"equal to the team's", chatty.Token, `"team_id":"eng","rpm_limit":10`},
		{"no bound", litellmGenerate(t, s, `{}`).Token, `"team_id":"eng"`},
		{"a team without bounds", litellmGenerate(t, s, `{"tpm_limit":1000,"rpm_limit":1000}`).Token, `"team_id":"open"`},
	} {
		if r := update(`{"key":"` + c.key + `",` + c.body + `}`); r.status != http.StatusOK || !strings.Contains(r.raw, `"team_id":`) {
			t.Errorf("%s: %d %s", c.what, r.status, r.raw)
		}
	}
	if got := teamOf(fast.Token); got != "eng" {
		t.Fatalf("the key lowered with the move: team_id %q, want eng", got)
	}
}
