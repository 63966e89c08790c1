package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/alerting"
)

// TestServeLiteLLMProxyBudget: a LiteLLM config's litellm_settings.max_budget becomes the
// proxy-wide budget: once the requests spent it, the next one is refused with a 429 in
// LiteLLM's words and the upstream is not called; the account's 85% and 100% alerts go to
// --alert-webhook once each, naming the proxy's account.
func TestServeLiteLLMProxyBudget(t *testing.T) {
	up, upURL := newScripted(t, "a", false)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	os.WriteFile(cfg, []byte(fmt.Sprintf(`
model_list:
  - model_name: gpt-4o
    litellm_params: {model: openai/gpt-4o, api_base: %q, api_key: key-a}
litellm_settings:
  max_budget: 0.00005
  budget_duration: 30d
general_settings:
  master_key: sk-budget-master-0123456789
`, upURL)), 0o600)
	t.Setenv("SWITCHYARD_API_KEYS", "")
	t.Setenv("SWITCHYARD_LITELLM_CONFIG", cfg)
	rec := newFakeAlertReceiver(t)
	t.Setenv("SWITCHYARD_ALERT_WEBHOOK", rec.serve.URL)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, _, _, done := startServeWith(t, ctx, filepath.Join(dir, "data"))
	base := "http://" + addr
	refused := ""
	for i := range 10 {
		code, text := chatAs(t, base, "sk-budget-master-0123456789", "gpt-4o")
		if code == http.StatusTooManyRequests {
			refused = text
			break
		}
		if code != http.StatusOK {
			t.Fatalf("call %d: %d %s", i, code, text)
		}
	}
	if !strings.Contains(refused, "Budget has been exceeded!") || !strings.Contains(refused, "Max budget: 5e-05") && !strings.Contains(refused, "Max budget: 0.00005") {
		t.Fatalf("no refusal in LiteLLM's words within 10 calls of ~$0.00003: %q", refused)
	}
	calls := up.count("gpt-4o")
	if code, _ := chatAs(t, base, "sk-budget-master-0123456789", "gpt-4o"); code != http.StatusTooManyRequests || up.count("gpt-4o") != calls {
		t.Errorf("after the budget: %d, upstream calls %d → %d; want 429 and no call", code, calls, up.count("gpt-4o"))
	}
	cancel()
	<-done // the alerts are delivered before serve returns
	// The proxy budget's 85% and 100% alerts, each once, naming the proxy's account.
	var thresholds []string
	for _, a := range rec.all() {
		var e alerting.Event
		if err := json.Unmarshal(a.body, &e); err != nil {
			t.Fatal(err)
		}
		if e.Subject != "litellm-proxy-budget" || e.Details["subject_kind"] != "proxy" {
			t.Errorf("alert %s, want the proxy budget's", a.body)
		}
		thresholds = append(thresholds, e.Type)
	}
	slices.Sort(thresholds)
	want := []string{alerting.EventBudgetNear, alerting.EventBudgetReached}
	slices.Sort(want)
	if !slices.Equal(thresholds, want) {
		t.Errorf("alert thresholds %q, want 85%% and 100%% once each", thresholds)
	}
}
