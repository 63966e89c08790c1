package server

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/switchyard-ai/switchyard/store"
)

// mintSecret asks for a client secret with key and body, returning the answer.
func mintSecret(t *testing.T, s *Server, key, body string) (RealtimeClientSecret, reply) {
	t.Helper()
	r := do(t, s, "POST", "/v1/realtime/client_secrets", key, body)
	var out RealtimeClientSecret
	if r.status == http.StatusOK {
		if err := json.Unmarshal([]byte(r.raw), &out); err != nil {
			t.Fatalf("answer %s: %v", r.raw, err)
		}
	}
	return out, r
}

// TestRealtimeClientSecret: a key mints an ephemeral client secret bound to a model and a
// session configuration; a browser opens a session with it alone (the subprotocol, no
// model in the query), which starts with the configuration applied (session.created shows
// it; the upstream got it as a session.update, without the model) and is billed to the
// minting key; the secret opens nothing else, no other model, nothing once expired or
// once its key is gone.
func TestRealtimeClientSecret(t *testing.T) {
	hs, s, up := realtimeServer(t)
	vk := issue(t, s, `{"name":"voice","models":["openai/gpt-realtime"],"max_budget_usd":5}`)
	before := time.Now()
	sec, r := mintSecret(t, s, vk.Key, `{"expires_after":{"anchor":"created_at","seconds":60},"session":{"type":"realtime","model":"gpt-realtime","instructions":"Be brief."}}`)
	if r.status != http.StatusOK {
		t.Fatalf("mint: %d %s", r.status, r.raw)
	}
	var answered map[string]any
	json.Unmarshal(sec.Session, &answered)
	if !strings.HasPrefix(sec.Value, "ek_") || len(sec.Value) < 32 || sec.ExpiresAt < before.Add(59*time.Second).Unix() || sec.ExpiresAt > time.Now().Add(61*time.Second).Unix() ||
		answered["model"] != "gpt-realtime" || answered["instructions"] != "Be brief." || answered["type"] != "realtime" {
		t.Fatalf("secret %+v (%s)", sec, sec.Session)
	}
	if strings.Contains(r.raw, vk.Key) {
		t.Fatal("the answer holds the minting key")
	}

	c, resp, err := dialRealtime(t, hs, "", nil, "realtime", realtimeKeyProtocol+sec.Value)
	if err != nil {
		t.Fatalf("dial with the secret: %v (%v)", err, resp)
	}
	defer c.CloseNow()
	typ, msg := readEvent(t, c)
	if typ != "session.created" || !strings.Contains(msg, `"instructions":"Be brief."`) {
		t.Fatalf("first event %s, want session.created with the configured instructions", msg)
	}
	dial := up.lastDial()
	if dial.URL.Query().Get("model") != "gpt-realtime" || dial.Header.Get("Authorization") != "Bearer server-openai-key" || strings.Contains(dial.Header.Get("Sec-Websocket-Protocol"), "ek_") {
		t.Errorf("upstream dial %s %v", dial.URL, dial.Header)
	}
	send(t, c, `{"type":"response.create"}`)
	for {
		if typ, _ := readEvent(t, c); typ == "response.done" {
			break
		}
	}
	c.Close(websocket.StatusNormalClosure, "")
	recs := realtimeRecords(t, s, vk.Key, 1)
	if recs[0].CostUSD <= 0 {
		t.Errorf("the session's record %+v: want it billed to the minting key", recs[0])
	}

	// Nothing but realtime sessions, of its model.
	if r := do(t, s, "POST", "/v1/chat/completions", sec.Value, `{"model":"openai/gpt-realtime","messages":[{"role":"user","content":"hi"}]}`); r.status != http.StatusUnauthorized || !strings.Contains(r.raw, "realtime sessions") {
		t.Errorf("the secret on chat: %d %s, want 401", r.status, r.raw)
	}
	if _, resp, err := dialRealtime(t, hs, "model=gpt-realtime-mini", http.Header{"Authorization": {"Bearer " + sec.Value}}); err == nil || resp == nil || resp.StatusCode != http.StatusBadRequest {
		t.Errorf("the secret with another model: %v %v, want 400", err, resp)
	}
	// Its model by another name of it (as SDKs put the model in the URL): accepted.
	c2, resp, err := dialRealtime(t, hs, "model=openai/gpt-realtime", http.Header{"Authorization": {"Bearer " + sec.Value}})
	if err != nil {
		t.Fatalf("the secret with openai/gpt-realtime: %v (%v)", err, resp)
	}
	c2.Close(websocket.StatusNormalClosure, "")
	realtimeRecords(t, s, vk.Key, 3) // the two sessions and the refused one
	// The upstream refusing the configuration: a 400 before the upgrade.
	bad, r := mintSecret(t, s, vk.Key, `{"session":{"type":"realtime","model":"gpt-realtime","instructions":"refuse me"}}`)
	if r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	if _, resp, err := dialRealtime(t, hs, "", http.Header{"Authorization": {"Bearer " + bad.Value}}); err == nil || resp == nil || resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a configuration the upstream refuses: %v %v, want 400", err, resp)
	}
	// Expired: refused.
	id := secretID(sec.Value)
	rec, err := store.GetJSON[realtimeSecretRecord](context.Background(), s.cfg.Store, store.RealtimeSecrets, id)
	if err != nil {
		t.Fatal(err)
	}
	rec.ExpiresAt = time.Now().Add(-time.Second)
	if err := store.PutJSON(context.Background(), s.cfg.Store, store.RealtimeSecrets, id, rec); err != nil {
		t.Fatal(err)
	}
	if _, resp, err := dialRealtime(t, hs, "", nil, "realtime", realtimeKeyProtocol+sec.Value); err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("an expired secret: %v %v, want 401", err, resp)
	}
	// Its key revoked: refused.
	other, r := mintSecret(t, s, vk.Key, `{"session":{"type":"realtime","model":"gpt-realtime"}}`)
	if r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	if r := do(t, s, "DELETE", "/api/v1/keys/"+vk.ID, testKey, ""); r.status/100 != 2 {
		t.Fatalf("revoke: %d %s", r.status, r.raw)
	}
	if _, resp, err := dialRealtime(t, hs, "", http.Header{"Authorization": {"Bearer " + other.Value}}); err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a secret of a revoked key: %v %v, want 401", err, resp)
	}
}

// TestRealtimeClientSecretBadInput: each wrong field is a 400 naming it; a model the key
// may not call a 403; nothing is minted.
func TestRealtimeClientSecretBadInput(t *testing.T) {
	_, s, _ := realtimeServer(t)
	vk := issue(t, s, `{"name":"voice","models":["openai/gpt-realtime"]}`)
	for body, param := range map[string]string{
		`{}`:              "session",
		`{"session":"x"}`: "session",
		`{"session":{"type":"transcription","model":"gpt-realtime"}}`:                                                "session.model",
		`{"session":{"type":"transcription","audio":{"input":{"transcription":{"model":"gpt-realtime"}}}}}`:          "session.audio.input.transcription.model",
		`{"session":{"type":"translation","model":"gpt-realtime"}}`:                                                  "session.type",
		`{"session":{"model":"gpt-realtime"}}`:                                                                       "session.type",
		`{"session":{"type":"realtime"}}`:                                                                            "session.model",
		`{"session":{"type":"realtime","model":"gpt-4o"}}`:                                                           "session.model",
		`{"expires_after":{"anchor":"created_at","seconds":5},"session":{"type":"realtime","model":"gpt-realtime"}}`: "expires_after.seconds",
		`{"expires_after":{"anchor":"now","seconds":60},"session":{"type":"realtime","model":"gpt-realtime"}}`:       "expires_after.anchor",
	} {
		_, r := mintSecret(t, s, vk.Key, body)
		var e struct {
			Error struct{ Param string }
		}
		json.Unmarshal([]byte(r.raw), &e)
		if r.status != http.StatusBadRequest || e.Error.Param != param {
			t.Errorf("%s: %d %s, want 400 naming %s", body, r.status, r.raw, param)
		}
	}
	if _, r := mintSecret(t, s, vk.Key, `{"session":{"type":"realtime","model":"gpt-realtime-mini"}}`); r.status != http.StatusUnauthorized {
		t.Errorf("a model outside the key's: %d %s, want 401", r.status, r.raw)
	}
	if _, r := mintSecret(t, s, "", `{"session":{"type":"realtime","model":"gpt-realtime"}}`); r.status != http.StatusUnauthorized {
		t.Errorf("no key: %d %s, want 401", r.status, r.raw)
	}
	if _, r := mintSecret(t, s, "ek_0123456789abcdef0123456789abcdef", `{"session":{"type":"realtime","model":"gpt-realtime"}}`); r.status != http.StatusUnauthorized || !strings.Contains(r.raw, "invalid API key") {
		t.Errorf("an unknown secret: %d %s, want 401", r.status, r.raw)
	}
	entries, err := s.cfg.Store.List(context.Background(), store.RealtimeSecrets, store.ListOptions{})
	if err != nil || len(entries) != 0 {
		t.Errorf("%d secrets stored (%v), want none", len(entries), err)
	}
}

// TestOperatorKeyLookingLikeASecret: an operator's key that happens to start with ek_ is
// still a key everywhere.
func TestOperatorKeyLookingLikeASecret(t *testing.T) {
	s := testServer(t, Config{Store: newTestStore(t), APIKeys: []string{"ek_operator-chosen-key"}}, nil)
	// An unknown path under /api/ answers 401 without a valid key, 404 with one.
	if r := do(t, s, "GET", "/api/v1/nothing-here", "ek_operator-chosen-key", ""); r.status != http.StatusNotFound {
		t.Errorf("an ek_ operator key: %d %s, want authenticated (404)", r.status, r.raw)
	}
	if r := do(t, s, "GET", "/api/v1/nothing-here", "ek_someone-else", ""); r.status != http.StatusUnauthorized {
		t.Errorf("an unknown ek_ key: %d %s, want 401", r.status, r.raw)
	}
}
