package server

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/telemetry"
)

// brokenStreamUpstream is a fake OpenAI-format upstream that streams two text fragments,
// then drops the connection without finishing the answer.
type brokenStreamUpstream struct{}

func (brokenStreamUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/event-stream")
	for _, frag := range []string{"The answer", " is forty"} {
		io.WriteString(w, `data: {"id":"c3","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":"`+frag+`"},"finish_reason":null}]}`+"\n\n")
	}
	w.(http.Flusher).Flush()
	conn, _, err := w.(http.Hijacker).Hijack()
	if err == nil {
		conn.Close()
	}
}

// TestTracePartialStreamAnswer: a streamed chat whose upstream breaks mid-answer keeps, on
// its chat span, what the client was sent as the output, marked finish reason "error".
func TestTracePartialStreamAnswer(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tr := telemetry.NewTracing(exp, "test", true, telemetry.TracingOptions{CaptureContent: true})
	up := httptest.NewServer(brokenStreamUpstream{})
	t.Cleanup(up.Close)
	reg := providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "up", BaseURL: up.URL + "/v1", APIKey: "k"}))
	st := newTestStore(t)
	g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog(), Store: st, Observer: tr})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Store: st, APIKeys: []string{testKey}, Middleware: []func(http.Handler) http.Handler{tr.Middleware(RoutePattern, RequestID, LogPath)}}, Completions(g))
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	_, body := post(t, hs.URL+"/v1/chat/completions", testKey, `{"model":"up/m","stream":true,"max_retries":0,"messages":[{"role":"user","content":"What is six times seven?"}]}`)
	if !strings.Contains(string(body), " is forty") {
		t.Fatalf("the client was not sent the fragments: %s", body)
	}
	var chat *tracetest.SpanStub
	for _, sp := range exp.GetSpans() {
		if strings.HasPrefix(sp.Name, "chat ") {
			chat = &sp
		}
	}
	if chat == nil {
		t.Fatalf("no chat span in %v", exp.GetSpans())
	}
	if got := attr(chat.Attributes, "gen_ai.response.finish_reasons"); got != `["error"]` {
		t.Errorf("finish_reasons %s", got)
	}
	var out []struct {
		FinishReason string `json:"finish_reason"`
		Parts        []struct {
			Content string `json:"content"`
		} `json:"parts"`
	}
	if err := json.Unmarshal([]byte(attr(chat.Attributes, "gen_ai.output.messages")), &out); err != nil || len(out) != 1 ||
		out[0].FinishReason != "error" || len(out[0].Parts) != 1 || out[0].Parts[0].Content != "The answer is forty" {
		t.Errorf("output %v: %s", err, attr(chat.Attributes, "gen_ai.output.messages"))
	}
	if chat.Status.Code != codes.Error {
		t.Errorf("status %+v", chat.Status)
	}
}
