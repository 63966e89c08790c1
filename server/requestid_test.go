package server

import (
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// ourRequestID is the form of the ids the server makes.
var ourRequestID = regexp.MustCompile(`^req_[0-9a-f]{32}$`)

// postWithID posts body to url as key with the X-Request-Id header rid (none when "") and
// returns the answer's status, X-Request-Id and body (read whole: a stream to its end).
func postWithID(t *testing.T, url, key, rid, body string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	if rid != "" {
		req.Header.Set("X-Request-Id", rid)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("X-Request-Id"), string(b)
}

// usageRequestsByID reads the key's usage history and returns its entries by request_id.
func usageRequestsByID(t *testing.T, s *Server, key string) map[string]map[string]any {
	t.Helper()
	r := do(t, s, "GET", "/api/v1/usage/requests?limit=500", key, "")
	if r.status != http.StatusOK {
		t.Fatalf("usage requests: %d %s", r.status, r.raw)
	}
	var out struct{ Data []map[string]any }
	if err := json.Unmarshal([]byte(r.raw), &out); err != nil {
		t.Fatal(err)
	}
	by := map[string]map[string]any{}
	for _, d := range out.Data {
		if id, _ := d["request_id"].(string); id != "" {
			by[id] = d
		}
	}
	return by
}

// TestRequestIDOnGatewayAnswers: every gateway answer — success, stream, a failure
// upstream, a body the server refuses, a request the gateway refuses before any model —
// carries an x-request-id, and the usage history and /spend/logs hold the request under
// that id (its outcome an error for the failures).
func TestRequestIDOnGatewayAnswers(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	chat := hs.URL + "/v1/chat/completions"
	cases := []struct {
		name, url, body string
		status          int
		outcome         string
	}{
		{"success", chat, `{"model":"openai/ok","messages":[{"role":"user","content":"hi"}]}`, 200, "ok"},
		{"stream", chat, `{"model":"openai/ok","stream":true,"messages":[{"role":"user","content":"hi"}]}`, 200, "ok"},
		{"responses stream", hs.URL + "/v1/responses", `{"model":"openai/ok","stream":true,"input":"hi"}`, 200, "ok"},
		{"upstream failure", chat, `{"model":"openai/down","messages":[{"role":"user","content":"hi"}]}`, 0, "error"},
		{"body refused", chat, `{"model":"openai/ok","messages":"hi"}`, 400, "error"},
		{"refused by the gateway", chat, `{"model":"openai/ok","messages":[]}`, 400, "error"},
		{"refused on the native route", hs.URL + "/api/v1/completions", `{"models":["openai/ok"],"messages":[]}`, 422, "error"},
		{"embeddings refused", hs.URL + "/v1/embeddings", `{"model":"openai/ok"}`, 400, "error"},
	}
	ids := map[string]string{}
	for _, c := range cases {
		status, rid, body := postWithID(t, c.url, testKey, "", c.body)
		if c.status != 0 && status != c.status || c.status == 0 && status < 400 {
			t.Fatalf("%s: %d %s", c.name, status, body)
		}
		if !ourRequestID.MatchString(rid) {
			t.Fatalf("%s: x-request-id %q", c.name, rid)
		}
		if c.name == "stream" && !strings.Contains(body, "data: [DONE]") {
			t.Fatalf("stream: %s", body)
		}
		ids[c.name] = rid
	}
	history := usageRequestsByID(t, s, testKey)
	for _, c := range cases {
		id := ids[c.name]
		h := history[id]
		if h == nil {
			t.Errorf("%s: no request %s in the usage history", c.name, id)
			continue
		}
		if h["outcome"] != c.outcome {
			t.Errorf("%s: outcome %v, want %s", c.name, h["outcome"], c.outcome)
		}
		wantOp := ""
		if strings.HasSuffix(c.url, "/v1/embeddings") {
			wantOp = "embeddings"
		}
		if op, _ := h["operation"].(string); op != wantOp {
			t.Errorf("%s: operation %q", c.name, op)
		}
		rows := spendLogs(t, s, testKey, "request_id="+id)
		if len(rows) != 1 {
			t.Errorf("%s: /spend/logs?request_id=%s: %d rows", c.name, id, len(rows))
			continue
		}
		if sw, _ := rows[0].Metadata["switchyard"].(map[string]any); sw["request_id"] != id {
			t.Errorf("%s: row metadata %v", c.name, rows[0].Metadata)
		}
		if c.outcome == "error" && rows[0].Status != "failure" {
			t.Errorf("%s: row status %s", c.name, rows[0].Status)
		}
	}
	if len(history) != len(cases) {
		t.Errorf("%d requests in the history with an id, want %d (one each): %v", len(history), len(cases), history)
	}
	// Another key does not find them.
	if got := usageRequestsByID(t, s, completionsOtherKey); len(got) != 0 {
		t.Errorf("the other key sees %v", got)
	}
}

// TestRequestIDIncoming: a caller's sane X-Request-Id (up to 128 printable characters) is
// the request's id, answered and recorded; anything else is replaced by one of ours.
func TestRequestIDIncoming(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	chat := hs.URL + "/v1/chat/completions"
	body := `{"model":"openai/ok","messages":[{"role":"user","content":"hi"}]}`
	for _, rid := range []string{"trace-1.2_3:abc", strings.Repeat("a", 128), "req_0123456789abcdef"} {
		status, got, b := postWithID(t, chat, testKey, rid, body)
		if status != 200 || got != rid {
			t.Fatalf("X-Request-Id %q: %d, answered with %q: %s", rid, status, got, b)
		}
		if usageRequestsByID(t, s, testKey)[rid] == nil {
			t.Errorf("X-Request-Id %q: not in the usage history", rid)
		}
	}
	// The refused one too, on an error answer.
	if status, got, _ := postWithID(t, chat, testKey, "bad-body-1", `{"model":`); status != 400 || got != "bad-body-1" {
		t.Fatalf("refused body: %d, x-request-id %q", status, got)
	}
	for _, rid := range []string{strings.Repeat("a", 129), "has space", `quo"te`, "back\\slash", "caf\u00e9"} {
		status, got, _ := postWithID(t, chat, testKey, rid, body)
		if status != 200 || got == rid || !ourRequestID.MatchString(got) {
			t.Errorf("X-Request-Id %q: %d, answered with %q, want one of ours", rid, status, got)
		}
	}
	for _, rid := range []string{"", "a\x01b", "a\x7fb", strings.Repeat("x", 129)} {
		if saneRequestID(rid) {
			t.Errorf("saneRequestID(%q) = true", rid)
		}
	}
}
