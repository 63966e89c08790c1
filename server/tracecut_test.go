package server

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/telemetry"
)

// silentUpstream is a fake upstream that answers nothing: it tells entered of each call
// and holds it until the caller leaves.
type silentUpstream struct{ entered chan struct{} }

func (u silentUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body) // read whole, so the server sees the caller close (the context ends)
	u.entered <- struct{}{}
	<-r.Context().Done()
}

// TestTraceOfAnAttemptCutByTheCaller: a request whose caller leaves while its upstream call
// is under way records that attempt (cancelled, client_gone), so the exported trace is
// whole: the call's HTTP client span has its attempt's span as parent, which was missing
// when the cut attempt went unrecorded. Streamed or not.
func TestTraceOfAnAttemptCutByTheCaller(t *testing.T) {
	for _, stream := range []bool{false, true} {
		exp := tracetest.NewInMemoryExporter()
		tr := telemetry.NewTracing(exp, "test", true, telemetry.TracingOptions{})
		up := silentUpstream{entered: make(chan struct{}, 4)}
		ups := httptest.NewServer(up)
		reg := providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "up", BaseURL: ups.URL + "/v1", APIKey: "sk-up",
			HTTPClient: &http.Client{Transport: tr.Transport(nil)}}))
		st := newTestStore(t)
		g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog(), Store: st, Observer: tr, TraceAttempt: tr.TraceAttempt})
		if err != nil {
			t.Fatal(err)
		}
		s, err := New(Config{Store: st, APIKeys: []string{testKey}, Middleware: []func(http.Handler) http.Handler{tr.Middleware(RoutePattern, RequestID, LogPath)}}, Completions(g))
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(s)

		ctx, cancel := context.WithCancel(context.Background())
		body := `{"model":"up/m","max_retries":0,"stream":` + map[bool]string{true: "true", false: "false"}[stream] + `,"messages":[{"role":"user","content":"hi"}]}`
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, hs.URL+"/v1/chat/completions", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+testKey)
		req.Header.Set("Content-Type", "application/json")
		done := make(chan struct{})
		go func() {
			defer close(done)
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		}()
		<-up.entered
		cancel() // the caller leaves while the upstream call is under way
		<-done

		var spans tracetest.SpanStubs
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			spans = exp.GetSpans()
			if spanIn(spans, "POST /v1/chat/completions") != nil && spanIn(spans, "chat up/m") != nil && spanIn(spans, http.MethodPost) != nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("stream %v: spans %v", stream, spanNamesOf(spans))
			}
		}
		ids := map[[8]byte]bool{}
		for _, sp := range spans {
			ids[sp.SpanContext.SpanID()] = true
		}
		for _, sp := range spans {
			if sp.Parent.IsValid() && !ids[sp.Parent.SpanID()] {
				t.Errorf("stream %v: span %q has a parent %s that was never exported: %v", stream, sp.Name, sp.Parent.SpanID(), spanNamesOf(spans))
			}
		}
		call, attempt := spanIn(spans, http.MethodPost), spanIn(spans, "attempt up/m")
		switch {
		case attempt == nil:
			t.Errorf("stream %v: no attempt span: %v", stream, spanNamesOf(spans))
		case call.Parent.SpanID() != attempt.SpanContext.SpanID():
			t.Errorf("stream %v: the HTTP span's parent is not the attempt's span", stream)
		case attempt.Status.Code != codes.Error || attr(attempt.Attributes, "switchyard.outcome") != completions.OutcomeCancelled ||
			attr(attempt.Attributes, "error.type") != "client_gone":
			t.Errorf("stream %v: attempt span %+v %v", stream, attempt.Status, attempt.Attributes)
		}
		hs.Close()
		ups.Close()
	}
}

func spanIn(spans tracetest.SpanStubs, name string) *tracetest.SpanStub {
	for i := range spans {
		if spans[i].Name == name {
			return &spans[i]
		}
	}
	return nil
}

func spanNamesOf(spans tracetest.SpanStubs) []string {
	var out []string
	for _, sp := range spans {
		out = append(out, sp.Name)
	}
	return out
}
