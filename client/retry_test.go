package client_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/client"
)

// scriptedStep is one answer of a fake server: a status, optional Retry-After and body.
type scriptedStep struct {
	status     int
	retryAfter string
	body       string
}

// noRetryMarker as a step's retryAfter sends x-should-retry: false instead of Retry-After.
const noRetryMarker = "no-retry"

// fakeScripted answers the n-th request with steps[n] (the last step repeats) and counts
// the requests; it records the request bodies so tests can check resends are identical.
type fakeScripted struct {
	steps  []scriptedStep
	calls  atomic.Int32
	mu     sync.Mutex
	bodies []string
}

func (f *fakeScripted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := int(f.calls.Add(1)) - 1
	b, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.bodies = append(f.bodies, string(b))
	f.mu.Unlock()
	st := f.steps[min(n, len(f.steps)-1)]
	switch st.retryAfter {
	case "":
	case noRetryMarker:
		w.Header().Set("X-Should-Retry", "false")
	default:
		w.Header().Set("Retry-After", st.retryAfter)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(st.status)
	io.WriteString(w, st.body)
}

// sleepRecorder replaces the wait between retries: it records each wait and returns at once.
type sleepRecorder struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (s *sleepRecorder) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.waits = append(s.waits, d)
	s.mu.Unlock()
	return ctx.Err()
}

func retryClient(t *testing.T, f *fakeScripted, opts ...client.Option) (*client.Client, *sleepRecorder) {
	t.Helper()
	ts := httptest.NewServer(f)
	t.Cleanup(ts.Close)
	rec := &sleepRecorder{}
	c, err := client.New(append([]client.Option{client.WithBaseURL(ts.URL), client.WithAPIKey("k"), client.WithSleep(rec.sleep)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c, rec
}

const selectOK = `{"providers":[{"provider":"openai","model":"gpt-4o"}],"session_id":"s1"}`

func modelSelect(c *client.Client) error {
	_, err := c.ModelSelect(context.Background(), &client.ModelSelectRequest{
		Messages:     []client.Message{{Role: "user", Content: "hi"}},
		LLMProviders: []client.Provider{{Provider: "openai", Model: "gpt-4o"}},
	})
	return err
}

func TestRetry429HonoursRetryAfter(t *testing.T) {
	f := &fakeScripted{steps: []scriptedStep{
		{429, "0", `{"error":"Too Many Requests","message":"slow down"}`},
		{429, "1", `{"error":"Too Many Requests","message":"slow down"}`},
		{200, "", selectOK},
	}}
	c, rec := retryClient(t, f)
	if err := modelSelect(c); err != nil {
		t.Fatal(err)
	}
	if f.calls.Load() != 3 || fmt.Sprint(rec.waits) != "[0s 1s]" {
		t.Fatalf("calls %d waits %v", f.calls.Load(), rec.waits)
	}
	// Each attempt sent the same body.
	if len(f.bodies) != 3 || f.bodies[0] == "" || f.bodies[1] != f.bodies[0] || f.bodies[2] != f.bodies[0] {
		t.Fatalf("bodies %q", f.bodies)
	}
}

func TestRetry503BacksOffExponentially(t *testing.T) {
	f := &fakeScripted{steps: []scriptedStep{
		{503, "", `{"error":"Service Unavailable","message":"busy"}`},
		{503, "", `{"error":"Service Unavailable","message":"busy"}`},
		{200, "", selectOK},
	}}
	c, rec := retryClient(t, f, client.WithRetry(client.RetryPolicy{Initial: 100 * time.Millisecond, Max: 150 * time.Millisecond}))
	if err := modelSelect(c); err != nil {
		t.Fatal(err)
	}
	if f.calls.Load() != 3 || len(rec.waits) != 2 {
		t.Fatalf("calls %d waits %v", f.calls.Load(), rec.waits)
	}
	// Jittered within [b/2, b]: b is 100ms, then 200ms capped at 150ms.
	if w := rec.waits[0]; w < 50*time.Millisecond || w > 100*time.Millisecond {
		t.Fatalf("first wait %v", w)
	}
	if w := rec.waits[1]; w < 75*time.Millisecond || w > 150*time.Millisecond {
		t.Fatalf("second wait %v", w)
	}
}

func TestRetryExhaustedReturnsLastError(t *testing.T) {
	f := &fakeScripted{steps: []scriptedStep{
		{502, "", `{"error":"Bad Gateway","message":"first"}`},
		{504, "", `{"error":"Gateway Timeout","message":"last"}`},
	}}
	c, rec := retryClient(t, f, client.WithRetry(client.RetryPolicy{MaxRetries: 3}))
	err := modelSelect(c)
	var ae *client.Error
	if !errors.As(err, &ae) || ae.Status != 504 || ae.Message != "last" {
		t.Fatalf("err %v", err)
	}
	if f.calls.Load() != 4 || len(rec.waits) != 3 {
		t.Fatalf("calls %d waits %v", f.calls.Load(), rec.waits)
	}
}

func TestRetryAfterAboveBoundIsNotWaited(t *testing.T) {
	for _, ra := range []string{"31", time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)} {
		f := &fakeScripted{steps: []scriptedStep{
			{429, ra, `{"error":"Too Many Requests","message":"budget exceeded"}`},
			{200, "", selectOK},
		}}
		c, rec := retryClient(t, f)
		err := modelSelect(c)
		var ae *client.Error
		if !errors.Is(err, client.ErrRateLimited) || !errors.As(err, &ae) || ae.RetryAfter < 30*time.Second {
			t.Fatalf("Retry-After %s: err %v", ra, err)
		}
		if f.calls.Load() != 1 || len(rec.waits) != 0 {
			t.Fatalf("Retry-After %s: calls %d waits %v", ra, f.calls.Load(), rec.waits)
		}
	}
	// An HTTP date in the past means "now".
	f := &fakeScripted{steps: []scriptedStep{
		{503, time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat), `{"error":"Service Unavailable"}`},
		{200, "", selectOK},
	}}
	c, rec := retryClient(t, f)
	if err := modelSelect(c); err != nil || f.calls.Load() != 2 || fmt.Sprint(rec.waits) != "[0s]" {
		t.Fatalf("past date: err %v calls %d waits %v", err, f.calls.Load(), rec.waits)
	}
}

func TestRetryDisabled(t *testing.T) {
	for _, opt := range []client.Option{client.WithoutRetry(), client.WithRetry(client.RetryPolicy{MaxRetries: -1})} {
		f := &fakeScripted{steps: []scriptedStep{{503, "0", `{"error":"Service Unavailable"}`}, {200, "", selectOK}}}
		c, rec := retryClient(t, f, opt)
		if err := modelSelect(c); !errors.As(err, new(*client.Error)) || f.calls.Load() != 1 || len(rec.waits) != 0 {
			t.Fatalf("err %v calls %d waits %v", err, f.calls.Load(), rec.waits)
		}
	}
}

func TestRetryNeverOnClientErrors(t *testing.T) {
	for _, status := range []int{400, 401, 403, 404, 409, 422, 500} {
		f := &fakeScripted{steps: []scriptedStep{{status, "0", `{"error":"x","message":"no"}`}, {200, "", selectOK}}}
		c, rec := retryClient(t, f, client.WithRetry(client.RetryPolicy{MaxRetries: 5}))
		err := modelSelect(c)
		var ae *client.Error
		if !errors.As(err, &ae) || ae.Status != status || f.calls.Load() != 1 || len(rec.waits) != 0 {
			t.Fatalf("status %d: err %v calls %d waits %v", status, err, f.calls.Load(), rec.waits)
		}
	}
}

func TestRetryWaitStopsOnCancelledContext(t *testing.T) {
	f := &fakeScripted{steps: []scriptedStep{{503, "", `{"error":"Service Unavailable","message":"busy"}`}}}
	ts := httptest.NewServer(f)
	defer ts.Close()
	// The real wait: a one-hour backoff that only the context can end. The cancel comes once
	// the wait began (before, it could cut the 503's own request, under load: ci-33b).
	waiting := make(chan struct{})
	var once sync.Once
	sleep := func(ctx context.Context, d time.Duration) error {
		once.Do(func() { close(waiting) })
		return client.SleepContext(ctx, d)
	}
	c, err := client.New(client.WithBaseURL(ts.URL), client.WithRetry(client.RetryPolicy{Initial: time.Hour, Max: time.Hour}), client.WithSleep(sleep))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := c.ModelSelect(ctx, &client.ModelSelectRequest{})
		done <- err
	}()
	select {
	case <-waiting:
	case <-time.After(10 * time.Second): // a hang guard, not a timing assertion
		t.Fatal("the client never began its wait after the 503")
	}
	cancel()
	select {
	case err = <-done:
	case <-time.After(10 * time.Second): // a hang guard, not a timing assertion
		t.Fatal("the wait did not stop on cancel")
	}
	var ae *client.Error
	if !errors.Is(err, context.Canceled) || !errors.As(err, &ae) || ae.Status != 503 || f.calls.Load() != 1 {
		t.Fatalf("err %v calls %d", err, f.calls.Load())
	}
}

func TestRetryConnectionErrors(t *testing.T) {
	// A server that drops the first two connections before answering, then answers.
	var calls atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) <= 2 {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		io.WriteString(w, selectOK)
	}))
	defer ts.Close()
	rec := &sleepRecorder{}
	c, _ := client.New(client.WithBaseURL(ts.URL), client.WithSleep(rec.sleep))
	if err := modelSelect(c); err != nil || calls.Load() != 3 || len(rec.waits) != 2 {
		t.Fatalf("err %v calls %d waits %v", err, calls.Load(), rec.waits)
	}

	// Nothing listening: the transport error comes back after the retries.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	rec = &sleepRecorder{}
	c, _ = client.New(client.WithBaseURL("http://"+addr), client.WithSleep(rec.sleep))
	err := modelSelect(c)
	if err == nil || errors.As(err, new(*client.Error)) || len(rec.waits) != 2 || !strings.Contains(err.Error(), "model-select") {
		t.Fatalf("err %v waits %v", err, rec.waits)
	}
}

func TestCompleteStreamRetriesOnlyBeforeTheStream(t *testing.T) {
	var calls atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch calls.Add(1) {
		case 1:
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(429)
			io.WriteString(w, `{"error":"Too Many Requests"}`)
		case 2:
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: "+chunkA+"\n\n") // cut: no [DONE]
		default:
			t.Error("a started stream was resent")
		}
	}))
	defer ts.Close()
	rec := &sleepRecorder{}
	c, _ := client.New(client.WithBaseURL(ts.URL), client.WithSleep(rec.sleep))
	st, err := c.CompleteStream(context.Background(), &client.CompletionRequest{Models: []string{"openai/gpt-4o"}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	n := 0
	for st.Next() {
		n++
	}
	if n != 1 || !errors.Is(st.Err(), client.ErrStreamTruncated) || calls.Load() != 2 || len(rec.waits) != 1 {
		t.Fatalf("chunks %d err %v calls %d waits %v", n, st.Err(), calls.Load(), rec.waits)
	}
}

// TestGatewayExhausted502IsNotRetried: Switchyard's own 502 for a completion whose every
// model failed lists the attempts; the server retried them already, so the client does not.
func TestGatewayExhausted502IsNotRetried(t *testing.T) {
	f := &fakeScripted{steps: []scriptedStep{
		{502, "", `{"error":"Bad Gateway","message":"every model failed","attempts":[{"model":"openai/gpt-4o","outcome":"error","kind":"overloaded"}]}`},
		{200, "", selectOK},
	}}
	c, rec := retryClient(t, f)
	err := modelSelect(c)
	var ae *client.Error
	if !errors.As(err, &ae) || ae.Status != 502 {
		t.Fatalf("err %v", err)
	}
	if f.calls.Load() != 1 || len(rec.waits) != 0 {
		t.Fatalf("calls %d waits %v, want one call", f.calls.Load(), rec.waits)
	}
}

// TestShouldRetryFalseIsHonoured: an answer with x-should-retry: false is returned at once,
// whatever its status, and the OpenAI envelope's type, code and param are read.
func TestShouldRetryFalseIsHonoured(t *testing.T) {
	f := &fakeScripted{steps: []scriptedStep{
		{503, noRetryMarker, `{"error":{"message":"every model failed","type":"api_error","param":null,"code":"upstream_error"}}`},
		{200, "", selectOK},
	}}
	c, rec := retryClient(t, f)
	err := modelSelect(c)
	var ae *client.Error
	if !errors.As(err, &ae) || ae.Status != 503 || !ae.NoRetry || ae.Code != "upstream_error" || ae.Kind != "api_error" {
		t.Fatalf("err %+v", err)
	}
	if f.calls.Load() != 1 || len(rec.waits) != 0 {
		t.Fatalf("calls %d waits %v, want one call", f.calls.Load(), rec.waits)
	}
}
