package server

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/completions"
)

// FuzzRouterSettings: any router_settings body either decodes into settings that are in
// bounds and survive a round trip, or is refused naming router_settings; applying them to
// a scope never panics.
func FuzzRouterSettings(f *testing.F) {
	for _, seed := range []string{`{"num_retries":2,"timeout":30,"fallbacks":[{"a/b":["c/d"]}]}`, `{"max_retries":"3"}`, `{"timeout":"0.5"}`,
		`{"routing_strategy":""}`, `{"fallbacks":[{"*":["x"]},{"y":[]}]}`, `null`, `[]`, `{"timeout":1e309}`, `{"num_retries":-0}`,
		`{"context_window_fallbacks":[{"a/b":["c/d"]}],"fallbacks":[]}`} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		var rs routerSettings
		err := json.Unmarshal([]byte(body), &rs)
		if err != nil {
			return
		}
		if checkRouterSettings(nil, &routerSettings{NumRetries: rs.NumRetries, Timeout: rs.Timeout}) == nil {
			if rs.NumRetries != nil && (*rs.NumRetries < 0 || *rs.NumRetries > maxRouterRetries) {
				t.Fatalf("num_retries %d out of bounds passed from %s", *rs.NumRetries, body)
			}
			if rs.Timeout != nil && (!(*rs.Timeout > 0) || *rs.Timeout > maxRouterTimeoutSeconds) {
				t.Fatalf("timeout %v out of bounds passed from %s", *rs.Timeout, body)
			}
		}
		var sc completions.Scope
		rs.normalized().applyTo(&sc)
		out, err := json.Marshal(&rs)
		if err != nil {
			t.Fatal(err)
		}
		var back routerSettings
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("%s does not read back: %v", out, err)
		}
	})
}

// FuzzRealtimeMeterEvents: the realtime meter's readers of server events never panic, and
// what they read is never negative.
func FuzzRealtimeMeterEvents(f *testing.F) {
	for _, seed := range []string{`{"type":"conversation.item.input_audio_transcription.completed","usage":{"type":"tokens","input_tokens":3,"output_tokens":1}}`,
		`{"type":"conversation.item.input_audio_transcription.completed","usage":{"type":"duration","seconds":2.5}}`,
		`{"type":"session.updated","session":{"audio":{"input":{"transcription":{"model":"whisper-1"}}}}}`,
		`{"type":"transcription_session.updated","session":{"input_audio_transcription":null}}`,
		`{"type":"response.done","response":{"usage":{"input_tokens":1}}}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		sessionTranscriber(msg)
		responseDoneUsage(msg)
		u, _, ok := transcriptionUsage(msg)
		if ok && (u.Seconds < 0 || u.InputTokens < 0 || u.OutputTokens < 0) && u.InputTokens+u.OutputTokens <= 0 && u.Seconds <= 0 {
			t.Fatalf("billed nothing or less from %s: %+v", msg, u)
		}
	})
}

// TestStoredRouterSettingsReadOutOfBounds: settings a key was stored with are read whatever
// the bounds are now (a key must not stop working when they are tightened); the bounds
// are the request checks'.
func TestStoredRouterSettingsReadOutOfBounds(t *testing.T) {
	var rs routerSettings
	if err := json.Unmarshal([]byte(`{"num_retries":50,"timeout":7200}`), &rs); err != nil || *rs.NumRetries != 50 || *rs.Timeout != 7200 {
		t.Fatalf("stored settings not read: %+v %v", rs, err)
	}
	if err := checkRouterSettings(nil, &rs); err == nil || !strings.Contains(err.Error(), "router_settings.num_retries") {
		t.Fatalf("a request's num_retries 50: %v", err)
	}
	rs.NumRetries = nil
	if err := checkRouterSettings(nil, &rs); err == nil || !strings.Contains(err.Error(), "router_settings.timeout") {
		t.Fatalf("a request's timeout 7200: %v", err)
	}
}
