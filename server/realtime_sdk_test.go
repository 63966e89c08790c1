package server

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"math"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/internal/npmtest"
	"github.com/switchyard-ai/switchyard/providers"
)

// TestRealtimeNodeSDK: the official OpenAI Node SDK's OpenAIRealtimeWS (which always dials
// wss://, so the server runs TLS here with its certificate given to node) holds a session
// through /v1/realtime with a virtual key: session.created, the echoed item, a response's
// events and its usage arrive as the SDK's typed events, the key is billed the response,
// and a wrong key's session fails at the handshake (the SDK's error event) without
// reaching the upstream; a client secret minted with the SDK's realtime.clientSecrets opens
// a session configured as asked, billed to the minting key. Skips, saying why, without node
// and npm.
func TestRealtimeNodeSDK(t *testing.T) {
	node, dir := npmtest.InstallAll(t, "the official OpenAI Node SDK's realtime client", "openai@5", "ws@8")
	up := &scriptedRealtime{endedCh: make(chan struct{}, 16)}
	ups := httptest.NewServer(up)
	t.Cleanup(ups.Close)
	reg := providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: ups.URL + "/v1", APIKey: "server-openai-key"}))
	plain, s := passThroughServerOver(t, reg)
	plain.Close()
	hs := httptest.NewTLSServer(s)
	t.Cleanup(hs.Close)
	ca := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: hs.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	vk := issue(t, s, `{"name":"voice","models":["openai/gpt-realtime"],"max_budget_usd":5}`)

	script, err := os.ReadFile("testdata/realtime_sdk_check.mjs")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "check.mjs")
	if err := os.WriteFile(path, script, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, path, hs.URL+"/v1", vk.Key, "gpt-realtime")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NODE_EXTRA_CA_CERTS="+ca)
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("node: %v\n%s\n%s", err, out, stderr)
	}
	type session struct {
		Events       []string       `json:"events"`
		Errors       []string       `json:"errors"`
		Usage        map[string]any `json:"usage"`
		Code         int            `json:"code"`
		Instructions string         `json:"instructions"`
	}
	var got struct {
		Good, Bad session
		Minted    struct {
			Prefix, Model, Error string
			ExpiresAt            int64
			Session              session
		}
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("node printed %s: %v", out, err)
	}
	if strings.Join(got.Good.Events, ",") != "session.created,echo,response.created,response.done" || len(got.Good.Errors) != 0 ||
		got.Good.Usage["input_tokens"] != float64(100) || got.Good.Usage["output_tokens"] != float64(50) || got.Good.Code != 1000 {
		t.Errorf("the SDK's session: %+v", got.Good)
	}
	if len(got.Bad.Events) != 0 || len(got.Bad.Errors) == 0 || !strings.Contains(got.Bad.Errors[0], "401") {
		t.Errorf("a wrong key through the SDK: %+v", got.Bad)
	}
	m := got.Minted
	if m.Error != "" || m.Prefix != "ek_" || m.Model != "gpt-realtime" || m.ExpiresAt <= time.Now().Unix() ||
		m.Session.Instructions != "Be brief." || len(m.Session.Errors) != 0 || m.Session.Code != 1000 || m.Session.Usage["input_tokens"] != float64(100) {
		t.Errorf("a client secret minted and used through the SDK: %+v", m)
	}
	if n := up.dialCount(); n != 2 {
		t.Errorf("the upstream was dialled %d times, want twice (the wrong key's session must not reach it)", n)
	}
	recs := realtimeRecords(t, s, vk.Key, 2)
	for _, rec := range recs {
		if cost := realtimeResponseCost(); math.Abs(rec.CostUSD-cost) > 1e-12 || rec.Model != "openai/gpt-realtime" {
			t.Errorf("recorded %+v, want one response at %v", rec, cost)
		}
	}
}

// TestRealtimeTranscriptionNodeSDK: the official OpenAI Node SDK opens transcription
// sessions through /v1/realtime (its realtime WebSocket clients with intent=transcription
// added to their URL, as its users do): with a virtual key, with a GA client secret minted
// by realtime.clientSecrets (session type transcription) and, with the beta protocol, with
// one minted by beta.realtime.transcriptionSessions; each session begins bound to the
// transcription model, its transcription arrives as the SDK's typed event, and it is billed
// and recorded at that model's rates. Skips, saying why, without node and npm.
func TestRealtimeTranscriptionNodeSDK(t *testing.T) {
	node, dir := npmtest.InstallAll(t, "the official OpenAI Node SDK's realtime client", "openai@5", "ws@8")
	up := &scriptedRealtime{endedCh: make(chan struct{}, 16)}
	ups := httptest.NewServer(up)
	t.Cleanup(ups.Close)
	reg := providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: ups.URL + "/v1", APIKey: "server-openai-key"}))
	plain, s := passThroughServerOver(t, reg)
	plain.Close()
	hs := httptest.NewTLSServer(s)
	t.Cleanup(hs.Close)
	ca := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: hs.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	vk := issue(t, s, `{"name":"stt","models":["gpt-4o-mini-transcribe"],"max_budget_usd":5}`)
	script, err := os.ReadFile("testdata/realtime_transcription_sdk_check.mjs")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "transcribe.mjs")
	if err := os.WriteFile(path, script, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, path, hs.URL+"/v1", vk.Key, "gpt-4o-mini-transcribe")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NODE_EXTRA_CA_CERTS="+ca)
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("node: %v\n%s\n%s", err, out, stderr)
	}
	type session struct {
		Events            []string
		Errors            []string
		Model, Transcript string
		Code              int
	}
	var got struct {
		Key session
		GA  struct {
			Type, Error string
			Session     session
		}
		Beta struct {
			Prefix, Error string
			Session       session
		}
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("node printed %s: %v", out, err)
	}
	const events = "input_audio_buffer.committed,conversation.item.input_audio_transcription.completed"
	for name, c := range map[string]struct {
		s     session
		first string
	}{"key": {got.Key, "session.created"}, "GA secret": {got.GA.Session, "session.created"}, "beta secret": {got.Beta.Session, "transcription_session.created"}} {
		if strings.Join(c.s.Events, ",") != c.first+","+events || len(c.s.Errors) != 0 || c.s.Model != "gpt-4o-mini-transcribe" || c.s.Transcript == "" || c.s.Code != 1000 {
			t.Errorf("the SDK's session with a %s: %+v", name, c.s)
		}
	}
	if got.GA.Error != "" || got.GA.Type != "transcription" || got.Beta.Error != "" || got.Beta.Prefix != "ek_" {
		t.Errorf("the secrets minted through the SDK: GA %+v, beta %+v", got.GA, got.Beta)
	}
	recs := realtimeRecords(t, s, vk.Key, 3)
	for _, rec := range recs {
		if cost := transcriptionCost("openai/gpt-4o-mini-transcribe", false); math.Abs(rec.CostUSD-cost) > 1e-12 || rec.Model != "openai/gpt-4o-mini-transcribe" {
			t.Errorf("recorded %+v, want one transcription at %v", rec, cost)
		}
	}
	if n := up.dialCount(); n != 3 {
		t.Errorf("the upstream was dialled %d times, want 3", n)
	}
}
