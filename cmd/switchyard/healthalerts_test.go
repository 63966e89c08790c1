package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/alerting"
	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
)

// TestHealthBreakerOutageAlertsOnce: with --model-health-breaker (the monitor opening and
// closing breakers) and outage alerts, a model whose background check fails as an outage
// would and then passes sends one deployment_down and one deployment_recovered — the
// breaker's, not the check's as well — and the passing check closes the breaker at once.
// A model whose check fails for a bad key (no breaker opens) still alerts from the check.
func TestHealthBreakerOutageAlertsOnce(t *testing.T) {
	var down atomic.Bool
	ok := fakeOpenAIUpstream(t)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch {
		case strings.Contains(string(body), `"gpt-denied"`) && down.Load():
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"error":{"message":"bad key","type":"invalid_request_error"}}`)
		case down.Load():
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, `{"error":{"message":"overloaded","type":"server_error"}}`)
		default:
			r.Body = io.NopCloser(strings.NewReader(string(body)))
			ok.Config.Handler.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(up.Close)
	rec := newFakeAlertReceiver(t)
	log := slog.New(slog.DiscardHandler)
	al, err := newAlerts(alertFlags{Webhooks: []string{rec.serve.URL}, Format: "json", Events: "outage"}, nil, log)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"OPENAI_API_KEY": "sk", "OPENAI_BASE_URL": up.URL + "/v1"}
	opts := completions.Options{Providers: providers.FromEnv(func(k string) string { return env[k] }, providers.Options{}),
		Prices: providers.DefaultCatalog(), Breaker: completions.BreakerOptions{Cooldown: time.Hour},
		ModelGroups: map[string]completions.ModelGroup{"smart": {Models: []string{"openai/gpt-4o-mini", "openai/gpt-denied"}}}}
	al.hook(&opts)
	g, err := completions.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	m, err := completions.NewHealthMonitor(g, completions.HealthMonitorOptions{Interval: time.Hour, OpenBreakers: true,
		OnChange: al.healthChanges(), Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	down.Store(true)
	m.Check(context.Background())
	m.Check(context.Background()) // still down: no change, no alert
	if st := g.BreakerStates()["openai/gpt-4o-mini"]; st != completions.BreakerOpen {
		t.Fatalf("breaker %q after failing checks, want open", st)
	}
	down.Store(false)
	m.Check(context.Background())
	if st, open := g.BreakerStates()["openai/gpt-4o-mini"]; open {
		t.Fatalf("breaker %q after a passing check, want closed at once (the cooldown is an hour)", st)
	}
	if err := al.alerter.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range rec.all() {
		var e alerting.Event
		if err := json.Unmarshal(a.body, &e); err != nil {
			t.Fatal(err)
		}
		source := e.Details["source"]
		if source == "" {
			source = "breaker"
		}
		got = append(got, e.Subject+" "+e.Type+" "+source)
	}
	want := map[string]int{
		"openai/gpt-4o-mini deployment_down breaker":          1,
		"openai/gpt-4o-mini deployment_recovered breaker":     1,
		"openai/gpt-denied deployment_down health_check":      1,
		"openai/gpt-denied deployment_recovered health_check": 1,
	}
	counts := map[string]int{}
	for _, s := range got {
		counts[s]++
	}
	if len(counts) != len(want) || len(got) != 4 {
		t.Fatalf("alerts %q, want one each of %v", got, want)
	}
	for k, n := range want {
		if counts[k] != n {
			t.Fatalf("alerts %q, want one each of %v", got, want)
		}
	}
}
