package server

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/telemetry"
)

func attr(attrs []attribute.KeyValue, key string) string {
	for _, a := range attrs {
		if string(a.Key) == key {
			return a.Value.Emit()
		}
	}
	return ""
}

// TestTracesAndMetricsOfARequest runs a completion that falls back from a failing model
// through a server with tracing (the SDK's in-memory exporter) and metrics, and checks the
// spans (request → chat → one per attempt, GenAI attributes, the request id) and the
// scraped series.
func TestTracesAndMetricsOfARequest(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tr := telemetry.NewTracing(exp, "test", true, telemetry.TracingOptions{})
	m := telemetry.New(telemetry.Options{})
	up := httptest.NewServer(&fakeOpenAIUpstream{})
	t.Cleanup(up.Close)
	st := store.New(m.Store(newTestDriver(t)))
	reg := providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "up", BaseURL: up.URL + "/v1", APIKey: "sk-up",
		HTTPClient: &http.Client{Transport: tr.Transport(nil)}}))
	g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog(), Store: st,
		Observer: completions.Observers{m, tr}, TraceAttempt: tr.TraceAttempt, Backoff: completions.Backoff{Initial: time.Millisecond, Max: 2 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Store: st, APIKeys: []string{testKey},
		Middleware: []func(http.Handler) http.Handler{tr.Middleware(RoutePattern, RequestID, LogPath), m.Middleware(RoutePattern)}},
		Completions(g), MetricsEndpoint(m.Handler("")))
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)

	resp, body := post(t, hs.URL+"/api/v1/completions", testKey, `{"models":["up/down"],"fallback_models":["up/ok"],"maxRetries":0,"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`)
	if resp.StatusCode != 200 {
		t.Fatalf("completion: %d %s", resp.StatusCode, body)
	}
	rid := resp.Header.Get("X-Request-Id")
	spans := exp.GetSpans()
	byName := map[string]tracetest.SpanStub{}
	var calls []tracetest.SpanStub // the upstream calls' HTTP client spans
	for _, sp := range spans {
		byName[sp.Name] = sp
		if sp.Name == http.MethodPost {
			calls = append(calls, sp)
		}
	}
	// The chat span is named by the model asked for; the one that answered is its
	// gen_ai.response.model.
	root, chat := byName["POST /api/v1/completions"], byName["chat up/down"]
	down, ok := byName["attempt up/down"], byName["attempt up/ok"]
	if root.Name == "" || chat.Name == "" || down.Name == "" || ok.Name == "" {
		names := []string{}
		for _, sp := range spans {
			names = append(names, sp.Name)
		}
		t.Fatalf("spans %v", names)
	}
	if attr(root.Attributes, "switchyard.request_id") != rid || attr(root.Attributes, "http.response.status_code") != "200" ||
		attr(chat.Attributes, "switchyard.request_id") != rid {
		t.Errorf("request id %s not on the spans: %v / %v", rid, root.Attributes, chat.Attributes)
	}
	if chat.Parent.SpanID() != root.SpanContext.SpanID() || down.Parent.SpanID() != chat.SpanContext.SpanID() || ok.Parent.SpanID() != chat.SpanContext.SpanID() {
		t.Error("spans are not nested request → chat → attempts")
	}
	// Each upstream call's span is its attempt's child: request → chat → attempt → POST.
	if len(calls) != 2 || calls[0].Parent.SpanID() != down.SpanContext.SpanID() || calls[1].Parent.SpanID() != ok.SpanContext.SpanID() {
		t.Errorf("%d HTTP client spans, not under their attempts' spans", len(calls))
	}
	if attr(ok.Attributes, "gen_ai.provider.name") != "up" || attr(ok.Attributes, "gen_ai.request.model") != "ok" ||
		attr(chat.Attributes, "gen_ai.request.model") != "up/down" || attr(chat.Attributes, "gen_ai.response.model") != "ok" ||
		attr(down.Attributes, "error.type") == "" || attr(chat.Attributes, "gen_ai.usage.output_tokens") != "3" {
		t.Errorf("GenAI attributes: chat %v, ok %v, down %v", chat.Attributes, ok.Attributes, down.Attributes)
	}
	if down.StartTime.After(ok.StartTime) || ok.EndTime.After(chat.EndTime.Add(time.Millisecond)) {
		t.Error("attempt spans are not in order inside the chat span")
	}

	// An artifact URL's token (its credential) is not on the span.
	exp.Reset()
	if r, err := http.Get(hs.URL + "/api/v1/artifacts/0123456789abcdef0123456789abcdef/agent.py"); err == nil {
		r.Body.Close()
	}
	for _, sp := range exp.GetSpans() {
		if p := attr(sp.Attributes, "url.path"); strings.Contains(p, "0123456789abcdef") {
			t.Errorf("span %s has url.path %s", sp.Name, p)
		}
	}

	mresp, err := http.Get(hs.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(mresp.Body)
	mresp.Body.Close()
	text := string(raw)
	for _, want := range []string{
		`switchyard_gateway_requests_total{error_type="",gen_ai_operation_name="chat",gen_ai_provider_name="up",gen_ai_request_model="up/ok",outcome="ok",requested_model="up/down",stream="false"} 1`,
		`switchyard_gateway_fallbacks_total{gen_ai_request_model="up/ok"} 1`,
		`switchyard_gateway_attempts_total{error_type="overloaded",gen_ai_provider_name="up",gen_ai_request_model="up/down",outcome="error"} 1`,
		`switchyard_http_requests_total{code="200",route="POST /api/v1/completions"} 1`,
		`switchyard_store_operation_duration_seconds_count{operation="update",outcome="ok"}`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	// Unset, tracing is off: TracingFromEnv returns nil and its middleware is a no-op.
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	if off, err := telemetry.TracingFromEnv(context.Background(), "x", telemetry.TracingOptions{}); off != nil || err != nil {
		t.Fatalf("TracingFromEnv without an endpoint = %v, %v", off, err)
	}
}
