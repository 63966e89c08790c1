package server

import (
	"net/http"
	"strings"
	"testing"
)

// refusedRecorded fails unless the usage history (read as the operator's key) and
// /spend/logs hold request rid once, refused: outcome error, operation op, a failure row of
// the virtual key token (none: "") with its team and user.
func refusedRecorded(t *testing.T, s *Server, rid, op, token, team, user string) {
	t.Helper()
	h := usageRequestsByID(t, s, testKey)[rid]
	if h == nil {
		t.Fatalf("%s: not in the usage history", rid)
	}
	if h["outcome"] != "error" {
		t.Errorf("%s: outcome %v, want error", rid, h["outcome"])
	}
	if got, _ := h["operation"].(string); got != op {
		t.Errorf("%s: operation %q, want %q", rid, got, op)
	}
	if e, _ := h["error"].(string); !strings.Contains(e, "per minute") && !strings.Contains(e, "exceeds the limit") {
		t.Errorf("%s: error %q does not say why it was refused", rid, e)
	}
	rows := spendLogs(t, s, testKey, "request_id="+rid)
	if len(rows) != 1 {
		t.Fatalf("/spend/logs?request_id=%s: %d rows %+v", rid, len(rows), rows)
	}
	row := rows[0]
	if row.Status != "failure" || row.Spend != 0 || row.Metadata["error_information"] == nil {
		t.Errorf("%s: row %+v", rid, row)
	}
	if token != "" && row.APIKey != token {
		t.Errorf("%s: api_key %q, want the key's %q", rid, row.APIKey, token)
	}
	if team != "" && (row.TeamID == nil || *row.TeamID != team || row.Metadata["user_api_key_team_id"] != team) {
		t.Errorf("%s: team %v (metadata %v), want %s", rid, row.TeamID, row.Metadata["user_api_key_team_id"], team)
	}
	if user != "" && row.Metadata["user_api_key_user_id"] != user {
		t.Errorf("%s: user %v, want %s", rid, row.Metadata["user_api_key_user_id"], user)
	}
}

const refusedChat = `{"model":"openai/ok","messages":[{"role":"user","content":"hi"}]}`

// TestRateRefusalsRecorded: a request a virtual key's own rpm_limit, its team's or its
// organization's rpm_limit or the server's --requests-per-minute-per-key refuses (429, answered before the
// route's handler runs) is in the usage history and /spend/logs under its request id, as a
// refusal with the key, team and user of its caller, like the gateway's own refusals; on
// another route (/key/generate) the same bound's refusal is not a gateway request.
func TestRateRefusalsRecorded(t *testing.T) {
	t.Run("key rpm_limit", func(t *testing.T) {
		hs, s := keysServer(t, nil, 0)
		a := litellmGenerate(t, s, `{"rpm_limit":1,"user_id":"u-rl"}`)
		if st, _, body := postWithID(t, hs.URL+"/v1/chat/completions", a.Key, "myreq-1", refusedChat); st != http.StatusOK {
			t.Fatalf("first request: %d %s", st, body)
		}
		if st, _, body := postWithID(t, hs.URL+"/v1/chat/completions", a.Key, "myreq-2", refusedChat); st != http.StatusTooManyRequests {
			t.Fatalf("second request: %d %s, want 429", st, body)
		}
		if st, _, body := postWithID(t, hs.URL+"/v1/embeddings", a.Key, "myreq-3", `{"model":"openai/ok","input":"hi"}`); st != http.StatusTooManyRequests {
			t.Fatalf("embeddings: %d %s, want 429", st, body)
		}
		refusedRecorded(t, s, "myreq-2", "", a.Token, "", "u-rl")
		refusedRecorded(t, s, "myreq-3", "embeddings", a.Token, "", "u-rl")
	})
	t.Run("team rpm_limit", func(t *testing.T) {
		hs, s := keysServer(t, nil, 0)
		litellmTeamNew(t, s, `{"team_id":"rl","rpm_limit":1}`)
		a := litellmGenerate(t, s, `{"team_id":"rl"}`)
		b := litellmGenerate(t, s, `{"team_id":"rl"}`)
		if st, _, body := postWithID(t, hs.URL+"/v1/chat/completions", a.Key, "team-1", refusedChat); st != http.StatusOK {
			t.Fatalf("first request: %d %s", st, body)
		}
		if st, _, body := postWithID(t, hs.URL+"/v1/chat/completions", b.Key, "team-2", refusedChat); st != http.StatusTooManyRequests ||
			!strings.Contains(body, "team's rpm_limit") {
			t.Fatalf("the team's second request: %d %s, want the team's 429", st, body)
		}
		refusedRecorded(t, s, "team-2", "", b.Token, "rl", "")
	})
	t.Run("organization rpm_limit", func(t *testing.T) {
		hs, s := keysServer(t, nil, 0)
		org := litellmOrganizationNew(t, s, `{"organization_alias":"Acme","rpm_limit":1}`)
		litellmTeamNew(t, s, `{"team_id":"oa","organization_id":"`+org.OrganizationID+`"}`)
		a := litellmGenerate(t, s, `{"team_id":"oa","user_id":"u-org"}`)
		if st, _, body := postWithID(t, hs.URL+"/v1/chat/completions", a.Key, "org-1", refusedChat); st != http.StatusOK {
			t.Fatalf("first request: %d %s", st, body)
		}
		if st, _, body := postWithID(t, hs.URL+"/v1/chat/completions", a.Key, "org-2", refusedChat); st != http.StatusTooManyRequests ||
			!strings.Contains(body, "organization's rpm_limit") {
			t.Fatalf("second request: %d %s, want the organization's 429", st, body)
		}
		refusedRecorded(t, s, "org-2", "", a.Token, "oa", "u-org")
	})
	t.Run("requests-per-minute-per-key", func(t *testing.T) {
		hs, s := keysServer(t, nil, 1)
		a := litellmGenerate(t, s, `{}`) // the operator key's one POST of the minute
		if st, _, body := postWithID(t, hs.URL+"/key/generate", testKey, "admin-2", `{}`); st != http.StatusTooManyRequests {
			t.Fatalf("the operator key's second POST: %d %s, want 429", st, body)
		}
		if st, _, body := postWithID(t, hs.URL+"/v1/chat/completions", a.Key, "server-1", refusedChat); st != http.StatusOK {
			t.Fatalf("first request: %d %s", st, body)
		}
		if st, _, body := postWithID(t, hs.URL+"/v1/chat/completions", a.Key, "server-2", refusedChat); st != http.StatusTooManyRequests ||
			!strings.Contains(body, "--requests-per-minute-per-key") {
			t.Fatalf("second request: %d %s, want the server's 429", st, body)
		}
		// The operator's own key, counted apart from the keys it issued.
		if st, _, body := postWithID(t, hs.URL+"/api/v1/completions", testKey, "server-op", `{"models":["openai/ok"],"messages":[{"role":"user","content":"hi"}]}`); st != http.StatusTooManyRequests {
			t.Fatalf("the operator key's chat: %d %s, want 429", st, body)
		}
		refusedRecorded(t, s, "server-2", "", a.Token, "", "")
		refusedRecorded(t, s, "server-op", "", "", "", "")
		if usageRequestsByID(t, s, testKey)["admin-2"] != nil {
			t.Error("a refused POST /key/generate is in the usage history: not a gateway request")
		}
		if rows := spendLogs(t, s, testKey, "request_id=admin-2"); len(rows) != 0 {
			t.Errorf("a refused POST /key/generate is in /spend/logs: %+v", rows)
		}
	})
}

// TestBodyTooLargeRecorded: a gateway request whose Content-Length is over the body limit
// (413, answered before the route's handler runs) is in the usage history and /spend/logs
// under its request id with its key.
func TestBodyTooLargeRecorded(t *testing.T) {
	hs, s := keysServerWith(t, nil, &fakeOpenAIUpstream{}, Config{APIKeys: []string{testKey, completionsOtherKey}, MaxBodyBytes: 512})
	a := litellmGenerate(t, s, `{"user_id":"u-big"}`)
	big := `{"model":"openai/ok","messages":[{"role":"user","content":"` + strings.Repeat("x", 600) + `"}]}`
	if st, _, body := postWithID(t, hs.URL+"/v1/chat/completions", a.Key, "big-1", big); st != http.StatusRequestEntityTooLarge {
		t.Fatalf("%d %s, want 413", st, body)
	}
	refusedRecorded(t, s, "big-1", "", a.Token, "", "u-big")
}
