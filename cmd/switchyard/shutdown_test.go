package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestShutdownFinishesInFlightRequests stops `serve` while a completion is waiting on a slow
// upstream: the request still gets its full answer, then serve exits cleanly.
func TestShutdownFinishesInFlightRequests(t *testing.T) {
	arrived := make(chan struct{}, 1)
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		time.Sleep(700 * time.Millisecond)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"x","object":"chat.completion","model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"finished anyway"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}`)
	}))
	defer upstream.Close()
	t.Setenv("SWITCHYARD_API_KEYS", "k")
	t.Setenv("OPENAI_API_KEY", "sk-test")
	t.Setenv("OPENAI_BASE_URL", upstream.URL+"/v1")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, _, done := startServe(t, ctx, t.TempDir())

	type result struct {
		status int
		body   map[string]any
		err    error
	}
	res := make(chan result, 1)
	go func() {
		req, _ := http.NewRequest("POST", "http://"+addr+"/api/v1/completions", strings.NewReader(
			`{"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}],"models":["openai/gpt-4o-mini"],"maxRetries":0}`))
		req.Header.Set("Authorization", "Bearer k")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			res <- result{err: err}
			return
		}
		defer resp.Body.Close()
		var m map[string]any
		json.NewDecoder(resp.Body).Decode(&m)
		res <- result{status: resp.StatusCode, body: m}
	}()
	select {
	case <-arrived:
	case <-time.After(10 * time.Second):
		t.Fatal("request never reached the upstream")
	}
	cancel() // what SIGINT/SIGTERM do
	r := <-res
	if r.err != nil || r.status != 200 {
		t.Fatalf("in-flight request: status %d, err %v, body %v", r.status, r.err, r.body)
	}
	msg, _ := json.Marshal(r.body["message"])
	if !strings.Contains(string(msg), "finished anyway") {
		t.Fatalf("answer cut: %v", r.body)
	}
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit code %d", code)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not exit")
	}
	// Nothing listens any more.
	if _, err := http.Get("http://" + addr + "/healthz"); err == nil {
		t.Fatal("server still accepting after shutdown")
	}
}
