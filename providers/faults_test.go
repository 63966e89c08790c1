package providers_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// The scripted upstream: each handler plays one failure mode. Timeouts in these tests are
// short so stalls resolve quickly; assertions are on kinds and counts, never on durations.

var allFormats = []providers.Format{providers.FormatOpenAI, providers.FormatAnthropic, providers.FormatGemini}

// faultFormats are the formats the format-neutral fault tests run against: allFormats
// (server-sent events) and Bedrock (AWS event streams; see bedrock_test.go for its streams).
var faultFormats = append(allFormats[:len(allFormats):len(allFormats)], providers.FormatBedrock)

func newProvider(t *testing.T, format providers.Format, baseURL string, mod func(*providers.Config)) providers.Provider {
	t.Helper()
	cfg := providers.Config{Name: "test-" + string(format), BaseURL: baseURL, APIKey: testKey}
	if format == providers.FormatOpenAI {
		cfg.BaseURL += "/v1"
	}
	if mod != nil {
		mod(&cfg)
	}
	p, err := providers.New(format, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func hello(model string) *providers.Request {
	return &providers.Request{Model: model, Messages: []providers.Message{{Role: "user", Content: "Hello"}}}
}

// partialStream is a well-formed start of a stream with text "Hel" and no end marker.
func partialStream(f providers.Format) string {
	switch f {
	case providers.FormatBedrock:
		return bedrockPartialStream()
	case providers.FormatAnthropic:
		return "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\n" +
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hel\"}}\n\n"
	case providers.FormatGemini:
		return "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"Hel\"}],\"role\":\"model\"}}]}\n\n"
	}
	return "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n"
}

// streamEnd completes partialStream with "lo", usage and the end marker.
func streamEnd(f providers.Format) string {
	switch f {
	case providers.FormatBedrock:
		return bedrockStreamEnd()
	case providers.FormatAnthropic:
		return "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"lo\"}}\n\n" +
			"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":2}}\n\n" +
			"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
	case providers.FormatGemini:
		return "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"lo\"}],\"role\":\"model\"},\"finishReason\":\"STOP\"}],\"usageMetadata\":{\"promptTokenCount\":3,\"candidatesTokenCount\":2}}\n\n"
	}
	return "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo\"},\"finish_reason\":\"stop\"}]}\n\n" +
		"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":2}}\n\n" +
		"data: [DONE]\n\n"
}

func malformedChunk(f providers.Format) string {
	if f == providers.FormatBedrock {
		return bedrockCorruptFrame()
	}
	if f == providers.FormatAnthropic {
		return "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"delta\":{\"text\n\n"
	}
	return "data: {\"choices\": [{\"delta\": \n\n"
}

func flush(w http.ResponseWriter) {
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// resetConn hijacks the connection and closes it with a TCP RST.
func resetConn(w http.ResponseWriter) {
	conn, buf, err := w.(http.Hijacker).Hijack()
	if err != nil {
		panic(err)
	}
	buf.Flush()
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	conn.Close()
}

// drain reads a stream to its end and returns the text and the terminal error.
func drain(s providers.Stream) (string, error) {
	defer s.Close()
	var b strings.Builder
	for {
		c, err := s.Recv()
		if err != nil {
			return b.String(), err
		}
		b.WriteString(c.Text)
	}
}

func TestStreamFaults(t *testing.T) {
	type scenario struct {
		name     string
		handler  func(f providers.Format, done <-chan struct{}) http.HandlerFunc
		cfg      func(*providers.Config)
		wantKind providers.ErrorKind
		wantText string // text delivered before the failure ("" for a clean stream: EOF expected)
	}
	sse := func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
	}
	scenarios := []scenario{
		{name: "complete", wantText: "Hello", handler: func(f providers.Format, _ <-chan struct{}) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) { sse(w); io.WriteString(w, partialStream(f)+streamEnd(f)) }
		}},
		{name: "cut before end marker", wantKind: providers.KindStreamBroken, wantText: "Hel", handler: func(f providers.Format, _ <-chan struct{}) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) { sse(w); io.WriteString(w, partialStream(f)) }
		}},
		{name: "connection reset mid-stream", wantKind: providers.KindStreamBroken, wantText: "Hel", handler: func(f providers.Format, _ <-chan struct{}) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				sse(w)
				io.WriteString(w, partialStream(f))
				flush(w)
				resetConn(w)
			}
		}},
		{name: "malformed chunk", wantKind: providers.KindStreamBroken, wantText: "Hel", handler: func(f providers.Format, _ <-chan struct{}) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				sse(w)
				io.WriteString(w, partialStream(f)+malformedChunk(f)+streamEnd(f))
			}
		}},
		{name: "stall", wantKind: providers.KindTimeout, wantText: "Hel",
			cfg: func(c *providers.Config) { c.IdleTimeout = 100 * time.Millisecond },
			handler: func(f providers.Format, done <-chan struct{}) http.HandlerFunc {
				return func(w http.ResponseWriter, r *http.Request) {
					sse(w)
					io.WriteString(w, partialStream(f))
					flush(w)
					select {
					case <-r.Context().Done():
					case <-done:
					}
				}
			}},
		{name: "no response headers", wantKind: providers.KindTimeout,
			cfg: func(c *providers.Config) { c.ResponseTimeout = 100 * time.Millisecond },
			handler: func(f providers.Format, done <-chan struct{}) http.HandlerFunc {
				return func(w http.ResponseWriter, r *http.Request) {
					select {
					case <-r.Context().Done():
					case <-done:
					}
				}
			}},
		{name: "reset before response", wantKind: providers.KindConnection, handler: func(f providers.Format, _ <-chan struct{}) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) { resetConn(w) }
		}},
	}
	for _, sc := range scenarios {
		for _, f := range faultFormats {
			t.Run(sc.name+"/"+string(f), func(t *testing.T) {
				done := make(chan struct{})
				srv := httptest.NewServer(sc.handler(f, done))
				defer srv.Close()
				defer close(done)
				p := newProvider(t, f, srv.URL, sc.cfg)
				s, err := p.Stream(context.Background(), hello("m-1"))
				text := ""
				if err == nil {
					text, err = drain(s)
				}
				if sc.wantKind == providers.KindUnknown {
					if err != io.EOF {
						t.Fatalf("clean stream ended with %v, want io.EOF", err)
					}
				} else {
					var pe *providers.Error
					if !errors.As(err, &pe) || pe.Kind != sc.wantKind {
						t.Fatalf("err = %v (kind %s), want kind %s", err, providers.KindOf(err), sc.wantKind)
					}
					if !pe.Retryable() {
						t.Errorf("%s should be retryable", pe.Kind)
					}
				}
				if text != sc.wantText {
					t.Errorf("text = %q, want %q", text, sc.wantText)
				}
			})
		}
	}
}

func TestCompleteDeadlineAndStall(t *testing.T) {
	for _, f := range faultFormats {
		t.Run(string(f), func(t *testing.T) {
			done := make(chan struct{})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("X-Mode") == "stall-body" {
					w.WriteHeader(200)
					io.WriteString(w, `{"partial":`)
					flush(w)
				}
				select {
				case <-r.Context().Done():
				case <-done:
				}
			}))
			defer srv.Close()
			defer close(done)

			// The caller's deadline passes before any response.
			p := newProvider(t, f, srv.URL, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			_, err := p.Complete(ctx, hello("m-1"))
			if providers.KindOf(err) != providers.KindTimeout {
				t.Errorf("deadline: err = %v, want timeout", err)
			}

			// The body stalls after the headers.
			p = newProvider(t, f, srv.URL, func(c *providers.Config) {
				c.IdleTimeout = 100 * time.Millisecond
				c.Headers = map[string]string{"X-Mode": "stall-body"}
			})
			_, err = p.Complete(context.Background(), hello("m-1"))
			if providers.KindOf(err) != providers.KindTimeout {
				t.Errorf("stalled body: err = %v, want timeout", err)
			}

			// Caller cancellation is reported as such, not as an upstream fault.
			ctx, cancel2 := context.WithCancel(context.Background())
			go func() { time.Sleep(20 * time.Millisecond); cancel2() }()
			_, err = newProvider(t, f, srv.URL, nil).Complete(ctx, hello("m-1"))
			if !errors.Is(err, context.Canceled) {
				t.Errorf("cancelled: err = %v, want context.Canceled in the chain", err)
			}
		})
	}
}

func TestConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	for _, f := range faultFormats {
		p := newProvider(t, f, "http://"+addr, nil)
		_, err := p.Complete(context.Background(), hello("m-1"))
		if providers.KindOf(err) != providers.KindConnection {
			t.Errorf("%s: err = %v, want connection", f, err)
		}
		_, err = p.Stream(context.Background(), hello("m-1"))
		if providers.KindOf(err) != providers.KindConnection {
			t.Errorf("%s stream: err = %v, want connection", f, err)
		}
	}
}

func TestStatusClassification(t *testing.T) {
	httpDate := time.Now().Add(30 * time.Second).UTC().Format(http.TimeFormat)
	tests := []struct {
		name       string
		status     int
		header     map[string]string
		body       map[providers.Format]string // default: a generic message
		wantKind   providers.ErrorKind
		wantAfter  time.Duration // exact, or with afterRange a lower bound
		afterRange bool
	}{
		{name: "429 seconds", status: 429, header: map[string]string{"Retry-After": "7"}, wantKind: providers.KindRateLimited, wantAfter: 7 * time.Second},
		{name: "429 http-date", status: 429, header: map[string]string{"Retry-After": httpDate}, wantKind: providers.KindRateLimited, wantAfter: 20 * time.Second, afterRange: true},
		{name: "429 without retry-after", status: 429, wantKind: providers.KindRateLimited},
		{name: "429 retry delay in the body", status: 429, body: map[providers.Format]string{
			providers.FormatOpenAI:    `{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"37s"}]}}`,
			providers.FormatAnthropic: `{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"37s"}]}}`,
			providers.FormatGemini:    `{"error":{"code":429,"message":"You exceeded your current quota.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[]},{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"37s"}]}}`,
		}, wantKind: providers.KindRateLimited, wantAfter: 37 * time.Second},
		{name: "500", status: 500, wantKind: providers.KindOverloaded},
		{name: "502", status: 502, wantKind: providers.KindOverloaded},
		{name: "503 with retry-after", status: 503, header: map[string]string{"Retry-After": "2"}, wantKind: providers.KindOverloaded, wantAfter: 2 * time.Second},
		{name: "529 overloaded", status: 529, body: map[providers.Format]string{
			providers.FormatAnthropic: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`}, wantKind: providers.KindOverloaded},
		{name: "400", status: 400, wantKind: providers.KindBadRequest},
		{name: "404", status: 404, wantKind: providers.KindModelNotFound},
		{name: "422", status: 422, wantKind: providers.KindBadRequest},
		{name: "401", status: 401, wantKind: providers.KindAuth},
		{name: "403", status: 403, wantKind: providers.KindAuth},
		{name: "context length", status: 400, body: map[providers.Format]string{
			providers.FormatOpenAI:    `{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 210000 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}`,
			providers.FormatAnthropic: `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}`,
			providers.FormatGemini:    `{"error":{"code":400,"message":"The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}`,
		}, wantKind: providers.KindContextLength},
		{name: "context limit with max_tokens", status: 400, body: map[providers.Format]string{
			providers.FormatOpenAI:    `{"error":{"message":"input length and max_tokens exceed context limit: 197000 + 8192 > 200000","type":"invalid_request_error"}}`,
			providers.FormatAnthropic: `{"type":"error","error":{"type":"invalid_request_error","message":"input length and ` + "`max_tokens`" + ` exceed context limit: 197000 + 8192 > 200000, decrease input length or ` + "`max_tokens`" + ` and try again"}}`,
			providers.FormatGemini:    `{"error":{"code":400,"message":"input length and max_tokens exceed context limit","status":"INVALID_ARGUMENT"}}`,
		}, wantKind: providers.KindContextLength},
		{name: "quota spent", status: 429, body: map[providers.Format]string{
			providers.FormatOpenAI:    `{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`,
			providers.FormatAnthropic: `{"type":"error","error":{"type":"invalid_request_error","message":"Your credit balance is too low to access the Anthropic API."}}`,
			providers.FormatGemini:    `{"error":{"code":429,"message":"Your credit balance is too low.","status":"RESOURCE_EXHAUSTED"}}`,
		}, wantKind: providers.KindQuotaExceeded},
		{name: "content filter 400", status: 400, body: map[providers.Format]string{
			providers.FormatOpenAI:    `{"error":{"message":"The response was filtered due to the prompt triggering Azure OpenAI's content management policy.","type":null,"code":"content_filter"}}`,
			providers.FormatAnthropic: `{"type":"error","error":{"type":"invalid_request_error","message":"Output blocked by content filtering policy"}}`,
			providers.FormatGemini:    `{"error":{"code":400,"message":"blocked by content filter","status":"INVALID_ARGUMENT"}}`,
		}, wantKind: providers.KindContentFilter},
		{name: "content policy 400", status: 400, body: map[providers.Format]string{
			providers.FormatOpenAI:    `{"error":{"message":"Your request was rejected as a result of our safety system.","type":"invalid_request_error","param":null,"code":"content_policy_violation"}}`,
			providers.FormatAnthropic: `{"type":"error","error":{"type":"invalid_request_error","message":"content_policy_violation: request refused"}}`,
			providers.FormatGemini:    `{"error":{"code":400,"message":"content_policy_violation","status":"INVALID_ARGUMENT"}}`,
		}, wantKind: providers.KindContentFilter},
		{name: "model not found", status: 404, body: map[providers.Format]string{
			providers.FormatOpenAI:    `{"error":{"message":"The model 'gpt-9' does not exist or you do not have access to it.","type":"invalid_request_error","param":null,"code":"model_not_found"}}`,
			providers.FormatAnthropic: `{"type":"error","error":{"type":"not_found_error","message":"model: claude-9"}}`,
			providers.FormatGemini:    `{"error":{"code":404,"message":"models/gemini-9 is not found","status":"NOT_FOUND"}}`,
		}, wantKind: providers.KindModelNotFound},
	}
	for _, tc := range tests {
		for _, f := range allFormats {
			for _, stream := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%s/stream=%v", tc.name, f, stream), func(t *testing.T) {
					srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
						for k, v := range tc.header {
							w.Header().Set(k, v)
						}
						w.Header().Set("Content-Type", "application/json")
						w.WriteHeader(tc.status)
						body := tc.body[f]
						if body == "" {
							body = `{"error":{"message":"upstream says no"}}`
						}
						io.WriteString(w, body)
					}))
					defer srv.Close()
					p := newProvider(t, f, srv.URL, nil)
					var err error
					if stream {
						_, err = p.Stream(context.Background(), hello("m-1"))
					} else {
						_, err = p.Complete(context.Background(), hello("m-1"))
					}
					var pe *providers.Error
					if !errors.As(err, &pe) {
						t.Fatalf("err = %v, want *providers.Error", err)
					}
					if pe.Kind != tc.wantKind || pe.StatusCode != tc.status {
						t.Errorf("kind/status = %s/%d, want %s/%d (%v)", pe.Kind, pe.StatusCode, tc.wantKind, tc.status, pe)
					}
					if tc.afterRange {
						if pe.RetryAfter < tc.wantAfter || pe.RetryAfter > 31*time.Second {
							t.Errorf("RetryAfter = %v, want about 30s", pe.RetryAfter)
						}
					} else if pe.RetryAfter != tc.wantAfter {
						t.Errorf("RetryAfter = %v, want %v", pe.RetryAfter, tc.wantAfter)
					}
					if pe.Message == "" {
						t.Error("empty message")
					}
				})
			}
		}
	}
}

func TestErrorsNeverCarryTheKey(t *testing.T) {
	for _, f := range faultFormats {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// A hostile upstream echoes every header it got, plus a huge body.
			w.WriteHeader(401)
			fmt.Fprintf(w, `{"error":{"message":"bad key %s %s %s"}} %s`, r.Header.Get("Authorization"), r.Header.Get("X-Api-Key"), r.Header.Get("X-Goog-Api-Key"), strings.Repeat("x", 1<<20))
		}))
		p := newProvider(t, f, srv.URL, nil)
		_, err := p.Complete(context.Background(), hello("m-1"))
		srv.Close()
		if providers.KindOf(err) != providers.KindAuth {
			t.Errorf("%s: err kind %s, want auth", f, providers.KindOf(err))
		}
		if err == nil || strings.Contains(err.Error(), testKey) {
			t.Errorf("%s: error exposes the key: %v", f, err)
		}
		if err != nil && len(err.Error()) > 2000 {
			t.Errorf("%s: error message not bounded (%d bytes)", f, len(err.Error()))
		}
	}
}

func TestMidStreamErrorEvents(t *testing.T) {
	tests := []struct {
		format providers.Format
		body   string
		want   providers.ErrorKind
	}{
		{providers.FormatAnthropic, partialStream(providers.FormatAnthropic) +
			"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n", providers.KindOverloaded},
		{providers.FormatAnthropic, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":3}}}\n\n" +
			"event: ping\ndata: {\"type\": \"ping\"}\n\n" +
			"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"refusal\"},\"usage\":{\"output_tokens\":0}}\n\n" +
			"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n", providers.KindContentFilter},
		{providers.FormatOpenAI, partialStream(providers.FormatOpenAI) +
			"data: {\"error\":{\"message\":\"Rate limit reached\",\"type\":\"rate_limit_error\"}}\n\n", providers.KindRateLimited},
		{providers.FormatOpenAI, partialStream(providers.FormatOpenAI) +
			"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"content_filter\"}]}\n\n", providers.KindContentFilter},
		{providers.FormatOpenAI, partialStream(providers.FormatOpenAI) +
			"{\"error\":{\"message\":\"server had an error\",\"type\":\"server_error\"}}\n", providers.KindOverloaded},
		{providers.FormatGemini, partialStream(providers.FormatGemini) +
			"data: {\"error\":{\"code\":503,\"message\":\"The model is overloaded.\",\"status\":\"UNAVAILABLE\"}}\n\n", providers.KindOverloaded},
		{providers.FormatBedrock, partialStream(providers.FormatBedrock) +
			bedrockException("throttlingException", `{"message":"Too many tokens, please wait before trying again."}`), providers.KindRateLimited},
		{providers.FormatBedrock, partialStream(providers.FormatBedrock) +
			bedrockException("serviceUnavailableException", `{"message":"Bedrock is unable to process your request."}`), providers.KindOverloaded},
		{providers.FormatBedrock, partialStream(providers.FormatBedrock) + bedrockEvent("messageStop", `{"stopReason":"content_filtered"}`), providers.KindContentFilter},
	}
	for i, tc := range tests {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, tc.body)
		}))
		s, err := newProvider(t, tc.format, srv.URL, nil).Stream(context.Background(), hello("m-1"))
		if err == nil {
			_, err = drain(s)
		}
		srv.Close()
		if providers.KindOf(err) != tc.want {
			t.Errorf("case %d (%s): err = %v, want %s", i, tc.format, err, tc.want)
		}
	}
}

func TestMissingKeyAndSearchFailBeforeSending(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	for _, f := range faultFormats {
		p := newProvider(t, f, srv.URL, func(c *providers.Config) { c.APIKey = ""; c.KeyEnv = "SOME_API_KEY" })
		_, err := p.Complete(context.Background(), hello("m-1"))
		if providers.KindOf(err) != providers.KindAuth || !strings.Contains(err.Error(), "SOME_API_KEY") {
			t.Errorf("%s without key: err = %v, want auth naming SOME_API_KEY", f, err)
		}
		if c, ok := p.(providers.Configurable); !ok || c.Configured() {
			t.Errorf("%s without key reports configured", f)
		}
	}
	// OpenAI-format presets have no search (except OpenAI's own search models).
	req := hello("llama-3.1-8b")
	req.Search = true
	p := newProvider(t, providers.FormatOpenAI, srv.URL, nil)
	if _, err := p.Complete(context.Background(), req); providers.KindOf(err) != providers.KindBadRequest || !strings.Contains(err.Error(), "search") {
		t.Errorf("search on an OpenAI-format model: err = %v, want bad request about search", err)
	}
	if providers.SupportsSearch(p, "llama-3.1-8b") {
		t.Error("generic OpenAI-format provider claims search support")
	}
	if hits.Load() != 0 {
		t.Errorf("%d requests reached upstream; want none", hits.Load())
	}
}

func TestSearchMapsToNativeTools(t *testing.T) {
	var body map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		json.NewDecoder(r.Body).Decode(&body)
		w.WriteHeader(400)
		io.WriteString(w, `{}`)
	}))
	defer srv.Close()
	check := func(f providers.Format, model, field string, want string) {
		t.Helper()
		body = nil
		req := hello(model)
		req.Search = true
		p := newProvider(t, f, srv.URL, func(c *providers.Config) {
			if f == providers.FormatOpenAI {
				c.Name = "openai"
			}
		})
		if !providers.SupportsSearch(p, model) {
			t.Fatalf("%s %s: SupportsSearch false", f, model)
		}
		p.Complete(context.Background(), req)
		b, _ := json.Marshal(body[field])
		if !strings.Contains(string(b), want) {
			t.Errorf("%s: %s = %s, want it to contain %s", f, field, b, want)
		}
	}
	check(providers.FormatGemini, "gemini-2.5-flash", "tools", `"google_search"`)
	check(providers.FormatAnthropic, "claude-sonnet-4-5", "tools", `"web_search"`)
	check(providers.FormatOpenAI, "gpt-4o-search-preview", "web_search_options", `{}`)
}

func TestAnthropicNonStreamedUsageWithCache(t *testing.T) {
	var got map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		json.NewDecoder(r.Body).Decode(&got)
		io.WriteString(w, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929",
		 "content":[{"type":"text","text":"Hi "},{"type":"tool_use","id":"t","name":"x","input":{}},{"type":"text","text":"there"}],
		 "stop_reason":"end_turn","usage":{"input_tokens":10,"cache_read_input_tokens":200,"cache_creation_input_tokens":30,"output_tokens":5}}`)
	}))
	defer srv.Close()
	req := &providers.Request{Model: "claude-sonnet-4-5", Messages: []providers.Message{
		{Role: "system", Content: "A"}, {Role: "user", Content: "q"}, {Role: "system", Content: "B"}}}
	resp, err := newProvider(t, providers.FormatAnthropic, srv.URL, nil).Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	want := providers.Usage{PromptTokens: 240, CompletionTokens: 5, CachedTokens: 200, CacheCreationTokens: 30}
	if resp.Text != "Hi there" || resp.Usage != want || resp.FinishReason != "stop" || resp.Model != "claude-sonnet-4-5-20250929" {
		t.Errorf("response = %+v, want text %q usage %+v", resp, "Hi there", want)
	}
	if got["system"] != "A\n\nB" || got["max_tokens"] != float64(providers.DefaultAnthropicMaxTokens) {
		t.Errorf("request system/max_tokens = %v/%v", got["system"], got["max_tokens"])
	}
	if msgs, _ := got["messages"].([]any); len(msgs) != 1 {
		t.Errorf("system messages left in messages: %v", got["messages"])
	}
}

func TestSlowConsumerIsNotAStall(t *testing.T) {
	// The idle timer only runs while a read is blocked: a consumer that pauses between
	// Recv calls longer than the idle timeout still gets the whole stream.
	for _, f := range faultFormats {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, partialStream(f))
			flush(w)
			time.Sleep(50 * time.Millisecond) // so the rest arrives in a later read
			io.WriteString(w, streamEnd(f))
		}))
		p := newProvider(t, f, srv.URL, func(c *providers.Config) { c.IdleTimeout = 150 * time.Millisecond })
		s, err := p.Stream(context.Background(), hello("m-1"))
		if err != nil {
			t.Fatal(err)
		}
		var text strings.Builder
		for {
			c, err := s.Recv()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			text.WriteString(c.Text)
			time.Sleep(300 * time.Millisecond)
		}
		s.Close()
		s.Close() // idempotent
		srv.Close()
		if text.String() != "Hello" {
			t.Errorf("%s: text %q", f, text.String())
		}
	}
}

func TestCallerCancelMidStream(t *testing.T) {
	for _, f := range faultFormats {
		done := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, partialStream(f))
			flush(w)
			select {
			case <-r.Context().Done():
			case <-done:
			}
		}))
		ctx, cancel := context.WithCancel(context.Background())
		s, err := newProvider(t, f, srv.URL, nil).Stream(ctx, hello("m-1"))
		if err != nil {
			t.Fatal(err)
		}
		c, err := s.Recv()
		if err != nil || c.Text != "Hel" {
			t.Fatalf("%s: first chunk %+v, %v", f, c, err)
		}
		cancel()
		_, err = s.Recv()
		if !errors.Is(err, context.Canceled) || providers.KindOf(err) == providers.KindStreamBroken {
			t.Errorf("%s: after cancel err = %v (kind %s), want context.Canceled, not a broken stream", f, err, providers.KindOf(err))
		}
		s.Close()
		close(done)
		srv.Close()
	}
}

// TestTopPAndStopMapToEachWireFormat: top_p and stop sequences reach each upstream under
// its own field names; unset, they are left out of the body.
func TestTopPAndStopMapToEachWireFormat(t *testing.T) {
	var body map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body = nil
		json.NewDecoder(r.Body).Decode(&body)
		w.WriteHeader(400)
		io.WriteString(w, `{}`)
	}))
	defer srv.Close()
	topP := 0.5
	for _, tc := range []struct {
		f              providers.Format
		container      string // "" for the top level
		topP, stopName string
	}{
		{providers.FormatOpenAI, "", "top_p", "stop"},
		{providers.FormatAnthropic, "", "top_p", "stop_sequences"},
		{providers.FormatGemini, "generationConfig", "topP", "stopSequences"},
	} {
		p := newProvider(t, tc.f, srv.URL, nil)
		req := hello("m-1")
		req.TopP, req.Stop = &topP, []string{"END", "\n\n"}
		p.Complete(context.Background(), req)
		fields := body
		if tc.container != "" {
			fields, _ = body[tc.container].(map[string]any)
		}
		if got, _ := json.Marshal(fields[tc.topP]); string(got) != "0.5" {
			t.Errorf("%s: %s = %s, want 0.5 (body %v)", tc.f, tc.topP, got, body)
		}
		want := `["END","\n\n"]`
		if tc.f == providers.FormatAnthropic {
			want = `["END"]` // Claude refuses whitespace-only sequences (TestAnthropicWhitespaceStops)
		}
		if got, _ := json.Marshal(fields[tc.stopName]); string(got) != want {
			t.Errorf("%s: %s = %s (body %v)", tc.f, tc.stopName, got, body)
		}
		// Unset: absent.
		p.Complete(context.Background(), hello("m-1"))
		raw, _ := json.Marshal(body)
		for _, name := range []string{`"top_p"`, `"topP"`, `"stop"`, `"stop_sequences"`, `"stopSequences"`} {
			if strings.Contains(string(raw), name) {
				t.Errorf("%s: %s sent although unset: %s", tc.f, name, raw)
			}
		}
	}
}

// TestBlockedAnswerKeepsItsUsage: a response the upstream's content filter blocked after
// it was generated is still billed; the failure carries the usage the upstream reported.
func TestBlockedAnswerKeepsItsUsage(t *testing.T) {
	bodies := map[providers.Format]string{
		providers.FormatOpenAI:    `{"id":"c","object":"chat.completion","model":"m-1","choices":[{"index":0,"message":{"role":"assistant","content":null},"finish_reason":"content_filter"}],"usage":{"prompt_tokens":11,"completion_tokens":5,"total_tokens":16}}`,
		providers.FormatAnthropic: `{"id":"m","type":"message","role":"assistant","model":"m-1","content":[],"stop_reason":"refusal","usage":{"input_tokens":11,"output_tokens":5}}`,
		providers.FormatGemini:    `{"candidates":[{"content":{"parts":[{"text":"x"}],"role":"model"},"finishReason":"SAFETY"}],"usageMetadata":{"promptTokenCount":11,"candidatesTokenCount":5,"totalTokenCount":16}}`,
		providers.FormatBedrock:   `{"output":{"message":{"role":"assistant","content":[{"text":"blocked"}]}},"stopReason":"guardrail_intervened","usage":{"inputTokens":11,"outputTokens":5,"totalTokens":16}}`,
	}
	for _, f := range faultFormats {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, bodies[f])
		}))
		p := newProvider(t, f, srv.URL, nil)
		_, err := p.Complete(context.Background(), hello("m-1"))
		srv.Close()
		var pe *providers.Error
		if !errors.As(err, &pe) || pe.Kind != providers.KindContentFilter {
			t.Fatalf("%s: err = %v, want a content filter failure", f, err)
		}
		if pe.Usage == nil || pe.Usage.PromptTokens != 11 || pe.Usage.CompletionTokens != 5 {
			t.Errorf("%s: usage = %+v, want 11 / 5", f, pe.Usage)
		}
	}
}
