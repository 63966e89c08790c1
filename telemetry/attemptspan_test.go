package telemetry

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/switchyard-ai/switchyard/completions"
)

// TestHTTPSpansNestUnderAttempts: an upstream call made in the context TraceAttempt gave
// its attempt has its HTTP client span under that attempt's span, which ObserveRequest
// records later under the chat span: request → chat → attempt → POST, one trace. A call
// made without it stays under the request's span.
func TestHTTPSpansNestUnderAttempts(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("{}")) }))
	defer up.Close()
	exp := tracetest.NewInMemoryExporter()
	tr := NewTracing(exp, "test", true, TracingOptions{})
	client := &http.Client{Transport: tr.Transport(nil)}
	call := func(ctx context.Context) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, up.URL+"/v1/chat/completions", nil)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}

	ctx, root := tr.tracer.Start(context.Background(), "POST /v1/chat/completions")
	start := time.Now()
	r := groupRecord()
	r.Start = start
	for i := range r.Attempts {
		actx, id := tr.TraceAttempt(ctx)
		if id == ([8]byte{}) {
			t.Fatal("no span id reserved under a request's span")
		}
		call(actx)
		r.Attempts[i].Started, r.Attempts[i].SpanID = start, id
	}
	call(ctx) // outside any attempt
	tr.ObserveRequest(ctx, r)
	root.End()

	spans := exp.GetSpans()
	chat := spanNamed(t, spans, "chat smart")
	var posts []tracetest.SpanStub
	for _, sp := range spans {
		if sp.Name == http.MethodPost {
			posts = append(posts, sp)
		}
	}
	if len(posts) != 3 {
		t.Fatalf("%d HTTP client spans, want 3: %v", len(posts), spanNames(spans))
	}
	for i, a := range r.Attempts {
		as := spanNamed(t, spans, "attempt "+a.Model)
		if as.SpanContext.SpanID() != [8]byte(a.SpanID) || as.Parent.SpanID() != chat.SpanContext.SpanID() {
			t.Errorf("attempt %d: span %s parent %s, want the reserved id under the chat span %s", i+1, as.SpanContext.SpanID(), as.Parent.SpanID(), chat.SpanContext.SpanID())
		}
		if posts[i].Parent.SpanID() != as.SpanContext.SpanID() || posts[i].SpanContext.TraceID() != chat.SpanContext.TraceID() {
			t.Errorf("attempt %d: its HTTP span's parent is %s, not the attempt's span %s", i+1, posts[i].Parent.SpanID(), as.SpanContext.SpanID())
		}
	}
	if posts[2].Parent.SpanID() != root.SpanContext().SpanID() {
		t.Errorf("a call outside any attempt: parent %s, want the request's span", posts[2].Parent.SpanID())
	}
	if _, id := tr.TraceAttempt(context.Background()); id != ([8]byte{}) {
		t.Error("an id reserved without a span to nest under")
	}
	var off *Tracing
	if c, id := off.TraceAttempt(ctx); c != ctx || id != ([8]byte{}) {
		t.Error("tracing off: TraceAttempt changed the context")
	}
}

// TestLostHedgeIsNoLiteLLMCall: a hedged start that lost the race is recorded with its start
// (so its call is traced), but LiteLLM's deployment series count only the calls LiteLLM
// would make: the loser adds no request of its deployment.
func TestLostHedgeIsNoLiteLLMCall(t *testing.T) {
	m := New(Options{})
	m.EnableLiteLLM(LiteLLMOptions{})
	now := time.Now()
	m.ObserveRequest(context.Background(), completions.RequestRecord{Outcome: completions.RequestOK, Model: "openai/fast", Provider: "openai", ModelGroup: "g",
		Attempts: []completions.Attempt{
			{Model: "openai/fast", Outcome: completions.OutcomeOK, Started: now},
			{Model: "openai/slow", Outcome: completions.OutcomeCancelled, Kind: "hedged", Started: now},
		}})
	body := scrape(t, m.Handler(""), "")
	if !strings.Contains(body, `litellm_model_name="openai/fast"`) || strings.Contains(body, `litellm_model_name="openai/slow"`) {
		t.Errorf("deployment series:\n%s", grepLines(body, "litellm_deployment_total_requests"))
	}
}
