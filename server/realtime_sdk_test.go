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
// reaching the upstream. Skips, saying why, without node and npm.
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
		Events []string       `json:"events"`
		Errors []string       `json:"errors"`
		Usage  map[string]any `json:"usage"`
		Code   int            `json:"code"`
	}
	var got struct{ Good, Bad session }
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
	if n := up.dialCount(); n != 1 {
		t.Errorf("the upstream was dialled %d times, want once (the wrong key's session must not reach it)", n)
	}
	recs := realtimeRecords(t, s, vk.Key, 1)
	if cost := realtimeResponseCost(); math.Abs(recs[0].CostUSD-cost) > 1e-12 || recs[0].Model != "openai/gpt-realtime" {
		t.Errorf("recorded %+v, want one response at %v", recs[0], cost)
	}
}
