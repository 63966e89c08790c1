package server

import (
	"net/http"
	"strings"
	"testing"
)

// TestKeyIntoTeamNeedsUserMember: a key with a user_id moved into a team its user is not a
// member of is refused with LiteLLM's 403 (validate_key_team_change: "User=… is not a
// member of the team=…") naming team_id, on /key/update and PATCH /api/v1/keys/{id}, with
// the key left where it was; the user added with /team/member_add, the same move goes
// through; a key without user_id moves freely, and a change that gives a key a user and a
// team at once checks the new user. /key/generate by an operator key with team_id and a
// user_id not in the team is allowed, as LiteLLM's proxy admin's is.
func TestKeyIntoTeamNeedsUserMember(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	litellmTeamNew(t, s, `{"team_id":"eng"}`)
	litellmUserNew(t, s, `{"user_id":"ann"}`)
	litellmUserNew(t, s, `{"user_id":"bob"}`)
	ann := litellmGenerate(t, s, `{"user_id":"ann"}`)
	teamOf := func(token string) string {
		if id := litellmKeyInfoOf(t, s, token).TeamID; id != nil {
			return *id
		}
		return ""
	}

	r := do(t, s, "POST", "/key/update", testKey, `{"key":"`+ann.Token+`","team_id":"eng"}`)
	wantOrgRefusal(t, "ann's key into eng", r, http.StatusForbidden, "team_id", "User=ann is not a member of the team=eng")
	if r := do(t, s, "PATCH", "/api/v1/keys/"+ann.Token, testKey, `{"team_id":"eng"}`); r.status != http.StatusForbidden || !strings.Contains(r.raw, "team_id: User=ann is not a member of the team=eng") {
		t.Fatalf("PATCH ann's key into eng: %d %s", r.status, r.raw)
	}
	if got := teamOf(ann.Token); got != "" {
		t.Fatalf("ann's key after the refused moves: team_id %q, want none", got)
	}

	anon := litellmGenerate(t, s, `{}`)
	if r := do(t, s, "POST", "/key/update", testKey, `{"key":"`+anon.Token+`","team_id":"eng"}`); r.status != http.StatusOK {
		t.Fatalf("a key without user_id into eng: %d %s", r.status, r.raw)
	}
	if r := do(t, s, "POST", "/team/member_add", testKey, `{"team_id":"eng","member":{"user_id":"ann","role":"user"}}`); r.status != http.StatusOK {
		t.Fatalf("member_add: %d %s", r.status, r.raw)
	}
	if r := do(t, s, "POST", "/key/update", testKey, `{"key":"`+ann.Token+`","team_id":"eng"}`); r.status != http.StatusOK || !strings.Contains(r.raw, `"team_id":"eng"`) {
		t.Fatalf("ann's key into eng, ann a member: %d %s", r.status, r.raw)
	}

	// The key's user after the change is the one checked.
	bob := litellmGenerate(t, s, `{"user_id":"bob"}`)
	if r := do(t, s, "POST", "/key/update", testKey, `{"key":"`+bob.Token+`","team_id":"eng","user_id":"ann"}`); r.status != http.StatusOK {
		t.Fatalf("bob's key given to ann and put into eng: %d %s", r.status, r.raw)
	}
	anon2 := litellmGenerate(t, s, `{}`)
	r = do(t, s, "POST", "/key/update", testKey, `{"key":"`+anon2.Token+`","team_id":"eng","user_id":"bob"}`)
	wantOrgRefusal(t, "a key given to bob and put into eng", r, http.StatusForbidden, "team_id", "User=bob is not a member")
	if got := teamOf(bob.Token); got != "eng" {
		t.Fatalf("bob's key given to ann: team_id %q, want eng", got)
	}

	// An operator's /key/generate is not held to it (LiteLLM's proxy admin is not).
	if r := do(t, s, "POST", "/key/generate", testKey, `{"team_id":"eng","user_id":"bob"}`); r.status != http.StatusOK {
		t.Fatalf("operator /key/generate for bob in eng: %d %s", r.status, r.raw)
	}
}
