package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/telemetry"
	"github.com/switchyard-ai/switchyard/usagelog"
)

// realtimeMetricsServer is realtimeServer with the gateway's metrics (LiteLLM's names on)
// beside its request history, and its http.Server not started: the caller registers what
// it needs on hs.Config (RegisterOnShutdown) and starts it.
func realtimeMetricsServer(t *testing.T) (*httptest.Server, *Server, *telemetry.Metrics, *scriptedRealtime) {
	t.Helper()
	up := &scriptedRealtime{endedCh: make(chan struct{}, 16)}
	ups := httptest.NewServer(up)
	t.Cleanup(ups.Close)
	reg := providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: ups.URL + "/v1", APIKey: "server-openai-key"}))
	st := newTestStore(t)
	rec := usagelog.New(usagelog.Options{})
	m := telemetry.New(telemetry.Options{StatusOf: ErrorStatus})
	m.EnableLiteLLM(telemetry.LiteLLMOptions{StatusOf: ErrorStatus})
	g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog(), Store: st, Observer: completions.Observers{rec, m}})
	if err != nil {
		t.Fatal(err)
	}
	s := testServer(t, Config{Store: st}, nil)
	for _, o := range []Option{Completions(g), Usage(rec)} {
		if err := o(s); err != nil {
			t.Fatal(err)
		}
	}
	hs := httptest.NewUnstartedServer(s)
	t.Cleanup(hs.Close)
	return hs, s, m, up
}

// TestRealtimeSessionCutAtShutdown: a realtime session open across the http.Server's
// graceful shutdown (serve registers CloseRealtimeSessions with RegisterOnShutdown) is
// closed on both sides with 1001 and was recorded cancelled, as a client that left; the
// server ended it, so it is now recorded cut (outcome cut, its error the server's reason,
// its usage billed) and counted a failure in LiteLLM's proxy counters (exception_status 503,
// status_code 200: the session had opened), its deployment no failure.
func TestRealtimeSessionCutAtShutdown(t *testing.T) {
	hs, s, m, up := realtimeMetricsServer(t)
	hs.Config.RegisterOnShutdown(s.CloseRealtimeSessions)
	hs.Start()
	c, resp, err := dialRealtime(t, hs, "model=gpt-realtime", http.Header{"Authorization": {"Bearer " + testKey}})
	if err != nil {
		t.Fatalf("dial: %v (%v)", err, resp)
	}
	defer c.CloseNow()
	readEvent(t, c) // session.created
	send(t, c, `{"type":"response.create"}`)
	readEvent(t, c) // response.created
	readEvent(t, c) // response.done: billed
	shut := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		shut <- hs.Config.Shutdown(ctx)
	}()
	_, _, err = c.Read(context.Background())
	if code := websocket.CloseStatus(err); code != websocket.StatusGoingAway {
		t.Fatalf("client read %v, want 1001", err)
	}
	<-up.endedCh
	if err := <-shut; err != nil {
		t.Errorf("shutdown: %v", err)
	}
	recs := realtimeRecords(t, s, testKey, 1)
	if q := recs[0]; q.Outcome != usagelog.OutcomeCut || !strings.Contains(q.Error, "shutting down") || strings.Contains(q.Error, "context canceled") ||
		q.PromptTokens != 100 || q.CostUSD <= 0 {
		t.Errorf("recorded %+v, want outcome cut saying the server shut it, with its response billed", q)
	}
	if f := series(t, m, "litellm_proxy_failed_requests_metric_total", map[string]string{"exception_status": "503", "exception_class": "ServiceUnavailableError"}); f.GetCounter().GetValue() != 1 {
		t.Errorf("litellm_proxy_failed_requests_metric_total = %v, want 1", f.GetCounter().GetValue())
	}
	if f := series(t, m, "litellm_proxy_total_requests_metric_total", map[string]string{"status_code": "503"}); f.GetCounter().GetValue() != 1 {
		t.Errorf("litellm_proxy_total_requests_metric_total{status_code=503} = %v, want 1 (the failure's status, as LiteLLM labels it)", f.GetCounter().GetValue())
	}
	if n := seriesCount(t, m, "litellm_deployment_failure_responses_total"); n != 0 {
		t.Errorf("litellm_deployment_failure_responses_total has %d series: the deployment did not fail", n)
	}
}

// TestRealtimeSessionRefusedAtShutdown: a session asked for once the shutdown began is
// refused (503) before any dial and recorded cut, a 503 failure in LiteLLM's counters.
func TestRealtimeSessionRefusedAtShutdown(t *testing.T) {
	hs, s, m, up := realtimeMetricsServer(t)
	hs.Start()
	s.CloseRealtimeSessions()
	_, resp, err := dialRealtime(t, hs, "model=gpt-realtime", http.Header{"Authorization": {"Bearer " + testKey}})
	if err == nil || resp == nil || resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("a session asked for at shutdown: %v %v", err, resp)
	}
	if n := up.dialCount(); n != 0 {
		t.Errorf("%d dials upstream, want none", n)
	}
	if q := realtimeRecords(t, s, testKey, 1)[0]; q.Outcome != usagelog.OutcomeCut || !strings.Contains(q.Error, "shutting down") {
		t.Errorf("recorded %+v, want outcome cut", q)
	}
	if f := series(t, m, "litellm_proxy_total_requests_metric_total", map[string]string{"status_code": "503"}); f.GetCounter().GetValue() != 1 {
		t.Errorf("litellm_proxy_total_requests_metric_total{status_code=503} = %v, want 1", f.GetCounter().GetValue())
	}
}

// seriesCount is the number of series of the family name.
func seriesCount(t *testing.T, m *telemetry.Metrics, name string) int {
	t.Helper()
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() == name {
			return len(f.GetMetric())
		}
	}
	return 0
}
