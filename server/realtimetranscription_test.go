package server

import (
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
)

// transcriptionCost is the catalogue's price of one scripted transcription of model: its
// token usage (realtimeTranscriptionTokens), or 3 seconds when whisper.
func transcriptionCost(model string, whisper bool) float64 {
	u := providers.AudioUsage{InputTokens: 25, InputAudioTokens: 25, OutputTokens: 8}
	if whisper {
		u = providers.AudioUsage{Seconds: 3}
	}
	return providers.DefaultCatalog().AudioCost(model, u).TotalUSD
}

// sessionModelOf is the transcription model event msg's session names (GA:
// audio.input.transcription.model; beta: input_audio_transcription.model).
func sessionModelOf(t *testing.T, msg string) string {
	t.Helper()
	var ev map[string]any
	if err := json.Unmarshal([]byte(msg), &ev); err != nil {
		t.Fatalf("not an event: %s", msg)
	}
	sess, _ := ev["session"].(map[string]any)
	for _, p := range transcriptionModelPaths {
		if m, ok := getPath(sess, p).(string); ok {
			return m
		}
	}
	return ""
}

// TestRealtimeTranscriptionSession: GET /v1/realtime?intent=transcription opens a
// transcription-only session admitted against its transcription model (?model=; without
// one gpt-realtime-whisper): the upstream is dialled with intent=transcription and no
// model, the session bound to the model by a session.update of type transcription before
// the client's first event (session.created showing it), each transcription billed at that
// model's rates and the session recorded under it. The client's updates naming another
// model are held to the key's models: one outside them is refused with an error event
// (key_model_access_denied, naming the field and the client's event) and never reaches
// the upstream; one named by its gateway name is sent on by the provider's. A model outside
// the key's models is refused before the upgrade with LiteLLM's 401, as a realtime
// model's; a bad intent, or a model without realtime transcription, is a 400.
func TestRealtimeTranscriptionSession(t *testing.T) {
	hs, s, up := realtimeServer(t)
	vk := issue(t, s, `{"name":"stt","models":["gpt-4o-mini-transcribe"],"max_budget_usd":5}`)
	auth := http.Header{"Authorization": {"Bearer " + vk.Key}}

	// Refusals (recorded as a key's refused requests are) for a key of the same models.
	denied := issue(t, s, `{"name":"denied","models":["gpt-4o-mini-transcribe"]}`)
	for query, want := range map[string]int{
		"intent=transcription&model=gpt-4o-transcribe": http.StatusUnauthorized, // outside the key's models
		"intent=transcription":                         http.StatusUnauthorized, // gpt-realtime-whisper, outside them too
		"intent=transcription&model=gpt-realtime":      http.StatusBadRequest,   // no transcription model
		"intent=chat&model=gpt-4o-mini-transcribe":     http.StatusBadRequest,
	} {
		_, resp, err := dialRealtime(t, hs, query, http.Header{"Authorization": {"Bearer " + denied.Key}})
		if err == nil || resp == nil || resp.StatusCode != want {
			t.Errorf("%s: %v %v, want %d", query, err, resp, want)
			continue
		}
		var e struct {
			Error struct{ Type, Param string }
		}
		json.NewDecoder(resp.Body).Decode(&e)
		if want == http.StatusUnauthorized && (e.Error.Type != "key_model_access_denied" || e.Error.Param != "model") {
			t.Errorf("%s: refused with %+v, want LiteLLM's key_model_access_denied", query, e.Error)
		}
		if strings.HasPrefix(query, "intent=chat") && e.Error.Param != "intent" {
			t.Errorf("%s: refused naming %q, want intent", query, e.Error.Param)
		}
	}
	if n := up.dialCount(); n != 0 {
		t.Fatalf("the upstream was dialled %d times by refused sessions", n)
	}

	c, resp, err := dialRealtime(t, hs, "intent=transcription&model=gpt-4o-mini-transcribe", auth)
	if err != nil {
		t.Fatalf("dial: %v (%v)", err, resp)
	}
	defer c.CloseNow()
	typ, msg := readEvent(t, c)
	if typ != "session.created" || sessionModelOf(t, msg) != "gpt-4o-mini-transcribe" || !strings.Contains(msg, `"type":"transcription"`) {
		t.Errorf("first event %s, want the session.created of the bound transcription session", msg)
	}
	d := up.lastDial()
	if q := d.URL.Query(); q.Get("intent") != "transcription" || q.Has("model") {
		t.Errorf("upstream dialled %s, want intent=transcription without a model", d.URL)
	}
	if got := up.got(); len(got) != 1 || !strings.Contains(got[0], `"session.update"`) || sessionModelOf(t, got[0]) != "gpt-4o-mini-transcribe" {
		t.Errorf("the upstream got %q, want the binding session.update", got)
	}

	send(t, c, `{"type":"session.update","event_id":"ev_c1","session":{"type":"transcription","audio":{"input":{"transcription":{"model":"gpt-4o-transcribe"}}}}}`)
	typ, msg = readEvent(t, c)
	if typ != "error" || !strings.Contains(msg, `"key_model_access_denied"`) || !strings.Contains(msg, `"param":"session.audio.input.transcription.model"`) || !strings.Contains(msg, `"event_id":"ev_c1"`) {
		t.Errorf("a switch to a model outside the key's: %s, want key_model_access_denied", msg)
	}
	send(t, c, `{"type":"session.update","event_id":"ev_c2","session":{"type":"transcription","audio":{"input":{"transcription":{"model":"openai/gpt-4o-mini-transcribe","language":"en"}}}}}`)
	if typ, msg = readEvent(t, c); typ != "session.updated" || sessionModelOf(t, msg) != "gpt-4o-mini-transcribe" {
		t.Errorf("an update by the gateway's name: %s", msg)
	}
	for _, m := range up.got() {
		if strings.Contains(m, "ev_c1") || strings.Contains(m, "openai/") {
			t.Errorf("the upstream got %s", m)
		}
	}
	send(t, c, `{"type":"input_audio_buffer.commit"}`)
	readEvent(t, c) // committed
	if typ, _ = readEvent(t, c); typ != "conversation.item.input_audio_transcription.completed" {
		t.Fatalf("transcription: %q", typ)
	}
	cost := transcriptionCost("openai/gpt-4o-mini-transcribe", false)
	if cost <= 0 {
		t.Fatal("the catalogue does not price gpt-4o-mini-transcribe")
	}
	if info := keyInfoOf(t, s, testKey, "/api/v1/keys/"+vk.ID); math.Abs(info.Spend.CostUSD-cost) > 1e-12 {
		t.Errorf("key spend %v, want one transcription at %v", info.Spend.CostUSD, cost)
	}
	c.Close(websocket.StatusNormalClosure, "")
	recs := realtimeRecords(t, s, vk.Key, 1)
	if q := recs[0]; q.Outcome != "ok" || q.Model != "openai/gpt-4o-mini-transcribe" || math.Abs(q.CostUSD-cost) > 1e-12 || q.PromptTokens != 25 {
		t.Errorf("recorded %+v, want the transcription session at %v", q, cost)
	}

	// Without a model: gpt-realtime-whisper, for a key that may call it (the operator's).
	c, resp, err = dialRealtime(t, hs, "intent=transcription", http.Header{"Authorization": {"Bearer " + testKey}})
	if err != nil {
		t.Fatalf("dial without a model: %v (%v)", err, resp)
	}
	if _, msg := readEvent(t, c); sessionModelOf(t, msg) != "gpt-realtime-whisper" {
		t.Errorf("a session without a model began %s, want gpt-realtime-whisper", msg)
	}
	c.Close(websocket.StatusNormalClosure, "")
}

// TestRealtimeTranscriptionSessionBeta: a client of the beta protocol (OpenAI-Beta:
// realtime=v1) gets the beta transcription session: the upstream is bound with a
// transcription_session.update (input_audio_transcription.model), the client's first event
// is transcription_session.created showing it, a transcription_session.update naming a
// model outside the key's is refused, and whisper-1's seconds are billed.
func TestRealtimeTranscriptionSessionBeta(t *testing.T) {
	hs, s, up := realtimeServer(t)
	vk := issue(t, s, `{"name":"stt","models":["whisper-1"],"max_budget_usd":5}`)
	c, resp, err := dialRealtime(t, hs, "intent=transcription&model=whisper-1", http.Header{"Authorization": {"Bearer " + vk.Key}, "Openai-Beta": {"realtime=v1"}})
	if err != nil {
		t.Fatalf("dial: %v (%v)", err, resp)
	}
	defer c.CloseNow()
	if typ, msg := readEvent(t, c); typ != "transcription_session.created" || sessionModelOf(t, msg) != "whisper-1" {
		t.Errorf("first event %s", msg)
	}
	if got := up.got(); len(got) != 1 || !strings.Contains(got[0], `"transcription_session.update"`) || sessionModelOf(t, got[0]) != "whisper-1" {
		t.Errorf("the upstream got %q, want the binding transcription_session.update", got)
	}
	send(t, c, `{"type":"transcription_session.update","session":{"input_audio_transcription":{"model":"gpt-4o-transcribe"}}}`)
	if typ, msg := readEvent(t, c); typ != "error" || !strings.Contains(msg, `"param":"session.input_audio_transcription.model"`) {
		t.Errorf("a switch outside the key's models: %s", msg)
	}
	send(t, c, `{"type":"input_audio_buffer.commit","event_id":"whisper"}`)
	readEvent(t, c)
	readEvent(t, c)
	c.Close(websocket.StatusNormalClosure, "")
	cost := transcriptionCost("openai/whisper-1", true)
	recs := realtimeRecords(t, s, vk.Key, 1)
	if q := recs[0]; q.Outcome != "ok" || q.Model != "openai/whisper-1" || cost <= 0 || math.Abs(q.CostUSD-cost) > 1e-12 {
		t.Errorf("recorded %+v, want 3 s of whisper-1 at %v", q, cost)
	}
}

// TestRealtimeTranscriptionClientSecrets: a client secret of a transcription session —
// GA's POST /v1/realtime/client_secrets with session.type transcription, or the beta's POST
// /v1/realtime/transcription_sessions — is minted for a transcription model the key may
// call (401 for another, as a session's refusal) and answered in OpenAI's shapes; it opens
// transcription sessions of that model with its configuration applied (with or without
// ?intent=transcription; the beta secret with the beta protocol only), never a realtime
// session, nor a WebRTC call; a realtime secret opens no transcription session.
func TestRealtimeTranscriptionClientSecrets(t *testing.T) {
	hs, s, up := realtimeServer(t)
	vk := issue(t, s, `{"name":"stt","models":["gpt-4o-mini-transcribe","openai/gpt-realtime"]}`)

	sec, r := mintSecret(t, s, vk.Key, `{"session":{"type":"transcription","audio":{"input":{"transcription":{"model":"gpt-4o-mini-transcribe","language":"en"}}}}}`)
	if r.status != http.StatusOK {
		t.Fatalf("mint: %d %s", r.status, r.raw)
	}
	var answered map[string]any
	json.Unmarshal(sec.Session, &answered)
	if answered["type"] != "transcription" || answered["object"] != "realtime.transcription_session" || sessionModelOf(t, `{"session":`+string(sec.Session)+`}`) != "gpt-4o-mini-transcribe" || answered["model"] != nil {
		t.Errorf("the answered session %s", sec.Session)
	}
	if _, r := mintSecret(t, s, vk.Key, `{"session":{"type":"transcription","audio":{"input":{"transcription":{"model":"gpt-4o-transcribe"}}}}}`); r.status != http.StatusUnauthorized || !strings.Contains(r.raw, "key_model_access_denied") {
		t.Errorf("a secret of a model outside the key's: %d %s, want 401", r.status, r.raw)
	}
	for _, query := range []string{"intent=transcription", ""} {
		c, resp, err := dialRealtime(t, hs, query, nil, "realtime", "openai-insecure-api-key."+sec.Value)
		if err != nil {
			t.Fatalf("%q: dial with the secret: %v (%v)", query, err, resp)
		}
		if typ, msg := readEvent(t, c); typ != "session.created" || sessionModelOf(t, msg) != "gpt-4o-mini-transcribe" || !strings.Contains(msg, `"language":"en"`) {
			t.Errorf("%q: first event %s", query, msg)
		}
		if q := up.lastDial().URL.Query(); q.Get("intent") != "transcription" {
			t.Errorf("%q: upstream dialled %s", query, up.lastDial().URL)
		}
		c.Close(websocket.StatusNormalClosure, "")
	}
	if _, resp, err := dialRealtime(t, hs, "model=gpt-realtime", nil, "realtime", "openai-insecure-api-key."+sec.Value); err == nil || resp == nil || resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a transcription secret opening a realtime session: %v %v, want 400", err, resp)
	}
	if resp, body := placeCall(t, hs, sec.Value, "", "v=0", ""); resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "session.type") {
		t.Errorf("a transcription secret placing a call: %d %s, want 400 naming session.type", resp.StatusCode, body)
	}
	rt, r := mintSecret(t, s, vk.Key, `{"session":{"type":"realtime","model":"gpt-realtime"}}`)
	if r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	if _, resp, err := dialRealtime(t, hs, "intent=transcription", nil, "realtime", "openai-insecure-api-key."+rt.Value); err == nil || resp == nil || resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a realtime secret opening a transcription session: %v %v, want 400", err, resp)
	}

	// The beta API's.
	r = do(t, s, "POST", "/v1/realtime/transcription_sessions", vk.Key,
		`{"input_audio_transcription":{"model":"gpt-4o-mini-transcribe","prompt":"names"},"turn_detection":{"type":"server_vad"},"client_secret":{"expires_at":{"anchor":"created_at","seconds":60}}}`)
	var beta struct {
		ClientSecret struct {
			Value     string `json:"value"`
			ExpiresAt int64  `json:"expires_at"`
		} `json:"client_secret"`
		InputAudioTranscription struct{ Model, Prompt string } `json:"input_audio_transcription"`
		TurnDetection           map[string]any                 `json:"turn_detection"`
	}
	if r.status != http.StatusOK || json.Unmarshal([]byte(r.raw), &beta) != nil || !strings.HasPrefix(beta.ClientSecret.Value, "ek_") ||
		beta.InputAudioTranscription.Model != "gpt-4o-mini-transcribe" || beta.TurnDetection["type"] != "server_vad" || beta.ClientSecret.ExpiresAt == 0 {
		t.Fatalf("transcription_sessions: %d %s", r.status, r.raw)
	}
	if _, resp, err := dialRealtime(t, hs, "intent=transcription", nil, "realtime", "openai-insecure-api-key."+beta.ClientSecret.Value); err == nil || resp == nil || resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a beta secret without the beta protocol: %v %v, want 400", err, resp)
	}
	c, resp, err := dialRealtime(t, hs, "intent=transcription", nil, "realtime", "openai-insecure-api-key."+beta.ClientSecret.Value, realtimeBetaProtocol)
	if err != nil {
		t.Fatalf("dial with the beta secret: %v (%v)", err, resp)
	}
	if typ, msg := readEvent(t, c); typ != "transcription_session.created" || sessionModelOf(t, msg) != "gpt-4o-mini-transcribe" || !strings.Contains(msg, `"prompt":"names"`) {
		t.Errorf("the beta secret's session began %s", msg)
	}
	c.Close(websocket.StatusNormalClosure, "")
	for body, want := range map[string]int{
		`{"input_audio_transcription":{"model":"gpt-4o-transcribe"}}`:                     http.StatusUnauthorized,
		`{"input_audio_transcription":{"model":""}}`:                                      http.StatusBadRequest,
		`{"client_secret":{"expires_at":{"anchor":"created_at","seconds":1}}}`:            http.StatusBadRequest,
		`{"input_audio_transcription":{"model":"gpt-realtime"}}`:                          http.StatusBadRequest,
		`{"input_audio_transcription":"x","client_secret":{"expires_at":{"seconds":60}}}`: http.StatusBadRequest,
	} {
		if r := do(t, s, "POST", "/v1/realtime/transcription_sessions", vk.Key, body); r.status != want {
			t.Errorf("transcription_sessions %s: %d %s, want %d", body, r.status, r.raw, want)
		}
	}
}

// TestRealtimeTranscriptionModelGroup: a transcription session of a model group dials its
// members in order (one whose provider refuses the handshake passed over), is bound to the
// member that opened by its provider's name of the model, takes a client update naming
// the group as naming that model, and is recorded under the member.
func TestRealtimeTranscriptionModelGroup(t *testing.T) {
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, `{"error":{"message":"overloaded","type":"server_error"}}`)
	}))
	t.Cleanup(down.Close)
	up := &scriptedRealtime{endedCh: make(chan struct{}, 16)}
	ups := httptest.NewServer(up)
	t.Cleanup(ups.Close)
	hs, s := callsServerWith(t, Config{}, map[string]string{"down": down.URL + "/v1", "openai": ups.URL + "/v1"},
		map[string]completions.ModelGroup{"stt": {Models: []string{"down/gpt-4o-mini-transcribe", "openai/gpt-4o-mini-transcribe"}}})
	vk := issue(t, s, `{"name":"stt","models":["stt"]}`)
	c, resp, err := dialRealtime(t, hs, "intent=transcription&model=stt", http.Header{"Authorization": {"Bearer " + vk.Key}})
	if err != nil {
		t.Fatalf("dial: %v (%v)", err, resp)
	}
	defer c.CloseNow()
	if _, msg := readEvent(t, c); sessionModelOf(t, msg) != "gpt-4o-mini-transcribe" {
		t.Errorf("first event %s", msg)
	}
	send(t, c, `{"type":"session.update","session":{"type":"transcription","audio":{"input":{"transcription":{"model":"stt"}}}}}`)
	if typ, msg := readEvent(t, c); typ != "session.updated" || sessionModelOf(t, msg) != "gpt-4o-mini-transcribe" {
		t.Errorf("an update naming the group: %s", msg)
	}
	c.Close(websocket.StatusNormalClosure, "")
	recs := realtimeRecords(t, s, vk.Key, 1)
	if q := recs[0]; q.Outcome != "ok" || q.Model != "openai/gpt-4o-mini-transcribe" || len(q.Attempts) != 2 {
		t.Errorf("recorded %+v, want the second member after the first's refusal", q)
	}
}
