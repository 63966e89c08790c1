package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/alerting"
)

// TestModelHealthIntervalDownAtStart: with --model-health-interval, serve checks its model
// group's member at start-up; failing, it is unhealthy in /health (answered without another
// upstream call, with checked_at), 0 on switchyard_gateway_deployment_healthy, and one
// deployment_down alert from the health check is sent however often /health is read.
func TestModelHealthIntervalDownAtStart(t *testing.T) {
	var calls atomic.Int64
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, `{"error":{"message":"overloaded","type":"server_error"}}`)
	}))
	t.Cleanup(up.Close)
	groups := filepath.Join(t.TempDir(), "groups.json")
	if err := os.WriteFile(groups, []byte(`{"smart": {"models": ["openai/gpt-4o-mini"]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	rec := newFakeAlertReceiver(t)
	base, stop := serveUntil(t, up.URL, "--model-groups", groups, "--model-health-interval", "1h", "--alert-webhook", rec.serve.URL)
	var text string
	for deadline := time.Now().Add(20 * time.Second); ; {
		_, text = scrapeMetrics(t, base+"/metrics", "")
		if strings.Contains(text, `switchyard_gateway_deployment_healthy{gen_ai_request_model="openai/gpt-4o-mini",model_group="smart"} 0`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the start-up check never showed on the metrics:\n%s", text)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(text, "switchyard_gateway_deployment_health_checked_timestamp_seconds") {
		t.Errorf("no check time on the metrics")
	}
	made := calls.Load()
	if made < 1 {
		t.Fatalf("%d upstream calls after the start-up check", made)
	}
	for range 3 {
		code, h := get(t, base+"/health", "k")
		if code != 200 || h["unhealthy_count"] != 1.0 || h["healthy_count"] != 0.0 || h["checked_at"] == nil {
			t.Fatalf("/health: %d %v", code, h)
		}
	}
	if n := calls.Load(); n != made {
		t.Errorf("/health made %d upstream calls, want none (the background round's answer)", n-made)
	}
	stop() // drains the alerts
	var downs int
	for _, a := range rec.all() {
		var e alerting.Event
		if err := json.Unmarshal(a.body, &e); err != nil {
			t.Fatal(err)
		}
		if e.Details["source"] == alerting.SourceHealthCheck {
			if e.Type != alerting.EventDeploymentDown || e.Subject != "openai/gpt-4o-mini" || e.Details["model_names"] != "smart" {
				t.Errorf("health alert %s", a.body)
			}
			downs++
		}
	}
	if downs != 1 {
		t.Errorf("%d health check alerts, want one deployment_down", downs)
	}
}

// TestModelHealthFlagsChecked: a negative interval, one under the 5s floor (a check of
// every deployment, billed, many times a second) and --model-health-breaker without an
// interval are refused before anything starts, naming the flag; 5s itself is taken. So is
// a --max-body-bytes of 0 or less (it meant the 10 MiB default without a word: h33f), and
// every other number out of range; each exits 2, a command line error (they exited 1).
func TestModelHealthFlagsChecked(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--model-health-interval", "-1s"}, "--model-health-interval must be 0 (off) or at least 5s"},
		{[]string{"--model-health-interval", "1s"}, "--model-health-interval must be 0 (off) or at least 5s"},
		{[]string{"--model-health-interval", "4999ms"}, "got 4.999s"},
		{[]string{"--model-health-breaker"}, "--model-health-breaker needs --model-health-interval"},
		{[]string{"--max-body-bytes", "-1"}, "--max-body-bytes must be at least 1, got -1"},
		{[]string{"--max-body-bytes", "0"}, "--max-body-bytes must be at least 1, got 0"},
		// Other numbers out of range (h33f: --workers -3 exited 1, as a failure to start).
		{[]string{"--workers", "-3"}, "--workers must be 0 or more, got -3"},
		{[]string{"--workers", "0"}, "--workers must be at least 1 with the bbolt store"},
		{[]string{"--max-connections", "-1"}, "--max-connections must be 0 (no bound) or positive, got -1"},
		{[]string{"--requests-per-minute-per-key", "-5"}, "--requests-per-minute-per-key must be 0 (no bound) or positive"},
		{[]string{"--shutdown-timeout", "-1s"}, "--shutdown-timeout must be 0 or positive, got -1s"},
		{[]string{"--request-timeout", "-1m"}, "--request-timeout must be 0 or positive"},
		{[]string{"--realtime-call-idle-timeout", "-1m"}, "--realtime-call-idle-timeout must be 0 or positive"},
		{[]string{"--realtime-call-max-duration", "-1h"}, "--realtime-call-max-duration must be 0 or positive"},
		{[]string{"--realtime-session-idle-timeout", "-1m"}, "--realtime-session-idle-timeout must be 0 or positive"},
		{[]string{"--realtime-session-max-duration", "-1h"}, "--realtime-session-max-duration must be 0 or positive"},
		{[]string{"--max-budget-usd", "-10"}, "--max-budget-usd must be 0 (no bound) or positive, got -10"},
		{[]string{"--model-health-concurrency", "0"}, "--model-health-concurrency must be at least 1, got 0"},
		{[]string{"--log-format", "yaml"}, "--log-format must be text or json"},
		{[]string{"--sandbox", "docker"}, "--sandbox must be auto, process or wasm"},
		{[]string{"--trusted-proxies", "nonsense"}, "--trusted-proxies"},
	} {
		stderr := &syncBuffer{}
		code := run(t.Context(), append([]string{"serve", "--addr", "127.0.0.1:0", "--data", t.TempDir()}, c.args...), &syncBuffer{}, stderr)
		if code != 2 || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%v: exit %d, %s; want %q", c.args, code, stderr.String(), c.want)
		}
	}
	// The floor itself starts (nothing to check: no model groups).
	_, stop := serveUntil(t, "http://127.0.0.1:1", "--model-health-interval", "5s")
	stop()
}
