package telemetry

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/switchyard-ai/switchyard/completions"
)

// BenchmarkObserve is the gateway Observer's cost per request, without and with the metrics
// under LiteLLM's names (EnableLiteLLM), of a key in a team with budgets.
func BenchmarkObserve(b *testing.B) {
	for _, litellm := range []bool{false, true} {
		name := "litellm=off"
		if litellm {
			name = "litellm=on"
		}
		b.Run(name, func(b *testing.B) {
			m := New(Options{})
			if litellm {
				m.EnableLiteLLM(LiteLLMOptions{})
			}
			r := completions.RequestRecord{Provider: "openai", Model: "openai/gpt-4o-mini", ModelGroup: "gpt-4o-mini", KeyID: "vk_1", TeamID: "team-1",
				Outcome: "ok", Latency: time.Millisecond, TTFT: time.Millisecond,
				Attempts: []completions.Attempt{{Model: "openai/gpt-4o-mini", Outcome: "ok", Started: time.Now(), LatencyMS: 1}},
				Usage:    completions.Usage{PromptTokens: 10, CompletionTokens: 5, Costs: completions.Costs{TotalTokensCost: 0.001}},
				// The key's and its team's accounts after the charge (LiteLLM's budget gauges).
				Accounts: []completions.AccountState{{MaxCostUSD: 10, SpentUSD: 1}, {Name: "team-1", MaxCostUSD: 100, SpentUSD: 1}}}
			b.ReportAllocs()
			for b.Loop() {
				m.ObserveRequest(context.Background(), r)
			}
		})
	}
}

// BenchmarkMiddleware is the HTTP middleware's cost per request (its handler does nothing).
func BenchmarkMiddleware(b *testing.B) {
	m := New(Options{})
	h := m.Middleware(func(*http.Request) string { return "POST /api/v1/completions" })(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(200) }))
	req := httptest.NewRequest("POST", "/api/v1/completions", nil)
	w := httptest.NewRecorder()
	b.ReportAllocs()
	for b.Loop() {
		h.ServeHTTP(w, req)
	}
}

// BenchmarkTraceChat is the tracer's cost for an answered chat request (a system prompt,
// an image, a tool call and its result, an answer with a tool call; spans to a no-op
// exporter), without and with content capture.
func BenchmarkTraceChat(b *testing.B) {
	for _, capture := range []bool{false, true} {
		name := "content=off"
		if capture {
			name = "content=on"
		}
		b.Run(name, func(b *testing.B) {
			tr := NewTracing(tracetest.NewNoopExporter(), "bench", true, TracingOptions{CaptureContent: capture})
			r := chatRecord()
			b.ReportAllocs()
			for b.Loop() {
				tr.ObserveRequest(context.Background(), r)
			}
		})
	}
}
