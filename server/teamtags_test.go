package server

import (
	"net/http"
	"slices"
	"strings"
	"testing"
)

// TestTeamTags: a team's metadata.tags (LiteLLM's team-level tags) are added to every
// request of the team's keys after the key's own, as LiteLLM's proxy merges them: the
// usage log records them, tag routing follows them (here a tag no member of the group
// carries: LiteLLM's 401), and /team/update applies at once; a team's bad tags are refused
// naming metadata.tags.
func TestTeamTags(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	litellmTeamNew(t, s, `{"team_id":"search","metadata":{"tags":["team:search"],"owner":"ann"}}`)
	k := litellmGenerate(t, s, `{"team_id":"search","tags":["env:prod","team:search"]}`)
	if st, b := tagChat(t, hs.URL, k.Key, `"feature:summary"`, ""); st != http.StatusOK {
		t.Fatal(st, b)
	}
	rows := spendLogs(t, s, testKey, "api_key="+k.Token)
	if len(rows) != 1 || !slices.Equal(rows[0].RequestTags, []string{"feature:summary", "env:prod", "team:search"}) {
		t.Fatalf("the request's tags: %+v", rows)
	}
	if r := do(t, s, "POST", "/team/update", testKey, `{"team_id":"search","metadata":{"tags":["team:ads"]}}`); r.status != http.StatusOK {
		t.Fatalf("/team/update: %d %s", r.status, r.raw)
	}
	if st, b := tagChat(t, hs.URL, k.Key, "", ""); st != http.StatusOK {
		t.Fatal(st, b)
	}
	rows = spendLogs(t, s, testKey, "api_key="+k.Token)
	if len(rows) != 2 || !slices.ContainsFunc(rows, func(r spendLogRowT) bool {
		return slices.Equal(r.RequestTags, []string{"env:prod", "team:search", "team:ads"})
	}) {
		t.Fatalf("the request's tags after /team/update: %+v", rows)
	}

	// Bad tags on a team.
	if r := do(t, s, "POST", "/team/new", testKey, `{"metadata":{"tags":"team:x"}}`); r.status < 400 || r.status >= 500 || !strings.Contains(r.raw, "metadata.tags") {
		t.Fatalf("a team's tags as a string: %d %s", r.status, r.raw)
	}
	if r := do(t, s, "POST", "/team/update", testKey, `{"team_id":"search","metadata":{"tags":["has space"]}}`); r.status < 400 || r.status >= 500 || !strings.Contains(r.raw, "the team's tags") {
		t.Fatalf("a bad team tag: %d %s", r.status, r.raw)
	}
}

// TestTeamTagsRouting: a team's tags select a tag-filtered group's members for its keys'
// requests: one no member carries is LiteLLM's 401 (on /v1/messages and count_tokens alike),
// and after /team/update to a member's tag the request reaches it.
func TestTeamTagsRouting(t *testing.T) {
	s, call := tagGroupServer(t)
	litellmTeamNew(t, s, `{"team_id":"c","metadata":{"tags":["teamC"]}}`)
	k := litellmGenerate(t, s, `{"team_id":"c"}`)
	const messages = `{"model":"gpt-4","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`
	const refused = "Not allowed to access model due to tags configuration. Passed model=gpt-4 and tags=['teamC']"
	for _, path := range []string{"/v1/messages", "/v1/messages/count_tokens"} {
		if st, b := call(k.Key, path, "", messages); st != http.StatusUnauthorized || !strings.Contains(b, refused) {
			t.Errorf("%s, the key of a team tagged teamC: %d %s; want LiteLLM's 401", path, st, b)
		}
	}
	if r := do(t, s, "POST", "/team/update", testKey, `{"team_id":"c","metadata":{"tags":["teamA"]}}`); r.status != http.StatusOK {
		t.Fatalf("/team/update: %d %s", r.status, r.raw)
	}
	if st, b := call(k.Key, "/v1/messages", "", messages); st != http.StatusOK {
		t.Errorf("the key of a team tagged teamA: %d %s; want 200", st, b)
	}
}
