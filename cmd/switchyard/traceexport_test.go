package main

import (
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// fakeOTLPCollector is a test's OTLP/HTTP trace receiver: it decodes the protobuf export
// requests serve sends to /v1/traces and keeps their spans.
type fakeOTLPCollector struct {
	mu    sync.Mutex
	spans []*tracepb.Span
	srv   *httptest.Server
}

func newFakeOTLPCollector(t *testing.T) *fakeOTLPCollector {
	c := &fakeOTLPCollector{}
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var req coltrace.ExportTraceServiceRequest
		if r.URL.Path != "/v1/traces" || proto.Unmarshal(raw, &req) != nil {
			http.Error(w, "bad export", http.StatusBadRequest)
			return
		}
		c.mu.Lock()
		for _, rs := range req.GetResourceSpans() {
			for _, ss := range rs.GetScopeSpans() {
				c.spans = append(c.spans, ss.GetSpans()...)
			}
		}
		c.mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	t.Cleanup(c.srv.Close)
	return c
}

func (c *fakeOTLPCollector) named(name string) []*tracepb.Span {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*tracepb.Span
	for _, s := range c.spans {
		if s.GetName() == name {
			out = append(out, s)
		}
	}
	return out
}

// TestServeTracesUpstreamCallsWithTraceparent: with tracing on, a completion whose first
// model fails and whose fallback answers is exported over OTLP/HTTP as the caller's trace
// (its traceparent continued), and each upstream call carries a traceparent of that trace
// whose parent is an exported HTTP client span of the call (status code, server address;
// the 500's an error) under its attempt's span, under the "chat smart" span (the GenAI
// attributes: the group asked, the model that answered, the provider's well-known name),
// under the request's span; the caller's baggage is not passed on to
// the provider, and no span names the provider's key.
func TestServeTracesUpstreamCallsWithTraceparent(t *testing.T) {
	const traceID, callerSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	var mu sync.Mutex
	var sent []http.Header
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		mu.Lock()
		sent = append(sent, r.Header.Clone())
		mu.Unlock()
		if strings.Contains(string(raw), `"model":"gpt-4o"`) {
			http.Error(w, `{"error":{"message":"boom"}}`, http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":7,"completion_tokens":3,"total_tokens":10}}`)
	}))
	defer up.Close()
	col := newFakeOTLPCollector(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", col.srv.URL)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
	groups := filepath.Join(t.TempDir(), "groups.json")
	if err := os.WriteFile(groups, []byte(`{"smart":{"models":["openai/gpt-4o"],"fallbacks":["openai/gpt-4o-mini"]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	base, stop := serveUntil(t, up.URL, "--model-groups", groups)
	req, _ := http.NewRequest("POST", base+"/v1/chat/completions", strings.NewReader(`{"model":"smart","messages":[{"role":"user","content":"hello"}]}`))
	req.Header.Set("Authorization", "Bearer k")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("traceparent", "00-"+traceID+"-"+callerSpan+"-01")
	req.Header.Set("baggage", "tenant=acme")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	stop() // flushes the spans
	server := col.named("POST /v1/chat/completions")
	calls := col.named("POST")
	mu.Lock()
	defer mu.Unlock()
	if len(server) != 1 || len(sent) < 2 || len(calls) != len(sent) {
		t.Fatalf("exported %d request spans and %d upstream call spans for %d calls, want 1 and one per call (at least 2)", len(server), len(calls), len(sent))
	}
	if got := hex.EncodeToString(server[0].GetTraceId()); got != traceID || hex.EncodeToString(server[0].GetParentSpanId()) != callerSpan {
		t.Errorf("request span in trace %s under %x: the caller's traceparent was not continued", got, server[0].GetParentSpanId())
	}
	byID := map[string]*tracepb.Span{}
	col.mu.Lock()
	for _, sp := range col.spans {
		byID[string(sp.GetSpanId())] = sp
	}
	col.mu.Unlock()
	callSpans := map[string]*tracepb.Span{}
	for _, s := range calls {
		callSpans[hex.EncodeToString(s.GetSpanId())] = s
	}
	for i, h := range sent {
		tp := strings.Split(h.Get("traceparent"), "-")
		if len(tp) != 4 || tp[1] != traceID {
			t.Fatalf("upstream call %d: traceparent %q, want one of trace %s", i, h.Get("traceparent"), traceID)
		}
		s := callSpans[tp[2]]
		if s == nil {
			t.Fatalf("upstream call %d: traceparent's parent %s is no exported span", i, tp[2])
		}
		// request → chat → attempt → POST: the call's span is under its attempt's.
		wantAttempt := "attempt openai/gpt-4o"
		if i == len(sent)-1 {
			wantAttempt = "attempt openai/gpt-4o-mini"
		}
		attempt, chat := byID[string(s.GetParentSpanId())], (*tracepb.Span)(nil)
		if attempt != nil {
			chat = byID[string(attempt.GetParentSpanId())]
		}
		if s.GetKind() != tracepb.Span_SPAN_KIND_CLIENT || attempt.GetName() != wantAttempt || chat.GetName() != "chat smart" ||
			string(chat.GetParentSpanId()) != string(server[0].GetSpanId()) {
			t.Errorf("upstream call %d: span kind %v under %q under %q, want a client span under %q under \"chat smart\" under the request's",
				i, s.GetKind(), attempt.GetName(), chat.GetName(), wantAttempt)
		}
		if chat != nil {
			got := map[string]string{}
			for _, a := range chat.GetAttributes() {
				got[a.GetKey()] = a.GetValue().GetStringValue()
			}
			if got["gen_ai.request.model"] != "smart" || got["gen_ai.response.model"] != "gpt-4o-mini" || got["gen_ai.provider.name"] != "openai" {
				t.Errorf("chat span: request model %q, response model %q, provider %q", got["gen_ai.request.model"], got["gen_ai.response.model"], got["gen_ai.provider.name"])
			}
		}
		attrs := map[string]string{}
		for _, a := range s.GetAttributes() {
			attrs[a.GetKey()] = fmt.Sprint(a.GetValue().GetValue())
		}
		last := i == len(sent)-1
		wantStatus := "500"
		if last {
			wantStatus = "200"
		}
		if !strings.Contains(attrs["http.response.status_code"], wantStatus) || attrs["server.address"] == "" {
			t.Errorf("upstream call %d: attributes %v, want status %s and server.address", i, attrs, wantStatus)
		}
		if (s.GetStatus().GetCode() == tracepb.Status_STATUS_CODE_ERROR) == last {
			t.Errorf("upstream call %d: span status %v", i, s.GetStatus())
		}
		if h.Get("baggage") != "" {
			t.Errorf("upstream call %d: the caller's baggage %q went to the provider", i, h.Get("baggage"))
		}
	}
	col.mu.Lock()
	defer col.mu.Unlock()
	for _, s := range col.spans {
		if strings.Contains(s.String(), "sk-fake") {
			t.Errorf("span %s names the provider's key", s.GetName())
		}
	}
}
