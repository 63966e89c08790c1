package server

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/internal/npmtest"
	"github.com/switchyard-ai/switchyard/routing"
)

// notDiamondSDK is Not Diamond's official TypeScript SDK, pinned; its HTTP client is axios.
const notDiamondSDK = "notdiamond@1.1.4"

// TestNotDiamondTypeScriptSDK: the official SDK's routing calls — createPreferenceId,
// modelSelect (whose body always carries timeout, and prices, context lengths and
// is_custom per provider), feedback — work against Switchyard at the paths the SDK uses
// (/v2/preferences/userPreferenceCreate, /v2/modelRouter/modelSelect,
// /v2/report/metrics/feedback). The SDK's LLM-calling part (LangChain, about 200 MB of
// dependencies) is not installed: its imports resolve to empty classes.
func TestNotDiamondTypeScriptSDK(t *testing.T) {
	node, dir := npmtest.InstallAll(t, "Not Diamond's TypeScript SDK", "axios@1.12.2", "dotenv@16.4.5")
	npmtest.Unpack(t, dir, notDiamondSDK, "notdiamond")
	for from, to := range map[string]string{
		"testdata/notdiamond_sdk_check.mjs":      "check.mjs",
		"testdata/notdiamond_langchain_stub.mjs": "langchain-stub.mjs",
	} {
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, to), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	register := "import { register } from 'node:module';\nregister('./langchain-stub.mjs', import.meta.url);\n"
	if err := os.WriteFile(filepath.Join(dir, "register.mjs"), []byte(register), 0o644); err != nil {
		t.Fatal(err)
	}

	st := newTestStore(t)
	t.Cleanup(func() { st.Close() })
	quiet := slog.New(slog.DiscardHandler)
	srv, err := New(Config{Store: st, APIKeys: []string{testKey}, Logger: quiet}, ModelSelection(routing.NewSelector(routing.Options{Store: st, Logger: quiet})))
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--import", "./register.mjs", "check.mjs", hs.URL, testKey)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("node: %v\n%s\n%s", err, out, stderr)
	}
	type selection struct {
		Providers []struct {
			Provider    string `json:"provider"`
			Model       string `json:"model"`
			ScoreSource string `json:"score_source"`
		} `json:"providers"`
		SessionID string `json:"session_id"`
		Detail    string `json:"detail"`
	}
	var got struct {
		PreferenceID string    `json:"preferenceId"`
		Selected     selection `json:"selected"`
		Feedback     struct {
			SessionID    string `json:"session_id"`
			Personalized bool   `json:"personalized"`
		} `json:"feedback"`
		Cheap selection `json:"cheap"`
		Bad   selection `json:"bad"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("node printed %s: %v", out, err)
	}
	if !strings.HasPrefix(got.PreferenceID, routing.PreferencePrefix) {
		t.Errorf("createPreferenceId gave %q", got.PreferenceID)
	}
	if len(got.Selected.Providers) != 3 || !strings.HasPrefix(got.Selected.SessionID, "sess_") {
		t.Errorf("modelSelect under the preference: %s", out)
	}
	for _, p := range got.Selected.Providers {
		if p.Provider == "acme" && p.ScoreSource != routing.SourceUnknown {
			t.Errorf("the custom model was scored by %s, want unknown: %s", p.ScoreSource, out)
		}
	}
	if got.Feedback.SessionID != got.Selected.SessionID || !got.Feedback.Personalized {
		t.Errorf("feedback: %s", out)
	}
	// on an easy question the cost tradeoff takes the model whose inputPrice/outputPrice are lower
	if len(got.Cheap.Providers) == 0 || got.Cheap.Providers[0].Model != "gpt-4o-mini" {
		t.Errorf("modelSelect with tradeoff cost and the SDK's prices: %s", out)
	}
	// a refusal reaches the SDK as its error answer
	if got.Bad.Detail == "" || got.Bad.SessionID != "" {
		t.Errorf("a bad tradeoff should be refused: %s", out)
	}
}
