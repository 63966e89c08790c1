package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/boltstore"
)

// TestShutdownFinishesInFlightRequests stops `serve` while a completion is waiting on a slow
// upstream: the request still gets its full answer, its conversation turn is in the
// database (with either --conversation-writes), then serve exits cleanly.
func TestShutdownFinishesInFlightRequests(t *testing.T) {
	for _, writes := range []string{"through", "behind"} {
		t.Run(writes, func(t *testing.T) {
			t.Setenv("SWITCHYARD_CONVERSATION_WRITES", writes)
			testShutdownFinishesInFlightRequests(t)
		})
	}
}

func testShutdownFinishesInFlightRequests(t *testing.T) {
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
	dataDir := t.TempDir()
	addr, _, done := startServe(t, ctx, dataDir)

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
	// The answered turn was committed before serve exited.
	st, err := boltstore.Open(filepath.Join(dataDir, "switchyard.db"), boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	id, _ := r.body["conversationId"].(string)
	c, err := store.GetJSON[completions.Conversation](context.Background(), st, store.Conversations, id)
	if err != nil || c.MessageCount != 2 {
		t.Fatalf("conversation %q after shutdown: %+v, %v", id, c, err)
	}
}

// TestShutdownCutsRequestsPastTheTimeout: a request still running at --shutdown-timeout is
// cut, with a warning saying so, and serve exits about then (its background work has a
// budget of its own instead of the expired one).
func TestShutdownCutsRequestsPastTheTimeout(t *testing.T) {
	arrived, upstreamCut := make(chan struct{}, 1), make(chan struct{})
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body) // then the server notices when the caller hangs up
		arrived <- struct{}{}
		select {
		case <-time.After(20 * time.Second):
		case <-r.Context().Done():
			close(upstreamCut)
		}
	}))
	defer upstream.Close()
	sv := startForShutdown(t, upstream.URL)
	addr, stderr := sv.addr, sv.stderr
	go func() {
		req, _ := http.NewRequest("POST", "http://"+addr+"/api/v1/completions", strings.NewReader(
			`{"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}],"models":["openai/gpt-4o-mini"],"maxRetries":0}`))
		req.Header.Set("Authorization", "Bearer k")
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	select {
	case <-arrived:
	case <-time.After(10 * time.Second):
		t.Fatal("request never reached the upstream")
	}
	sv.cancel()
	stopped := time.Now()
	select {
	case code := <-sv.done:
		if code != 0 {
			t.Fatalf("exit code %d: %s", code, stderr.String())
		}
		t.Logf("serve exited %s after the signal", time.Since(stopped))
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not exit")
	}
	// The cut request's upstream call is cancelled too, not left running.
	select {
	case <-upstreamCut:
	case <-time.After(5 * time.Second):
		t.Error("the upstream call of the cut request was not cancelled")
	}
	if !strings.Contains(stderr.String(), "did not finish within --shutdown-timeout") {
		t.Errorf("no warning about the cut request:\n%s", stderr.String())
	}
}

// TestShutdownDelayDrains: with --shutdown-delay, /healthz answers 503 draining after the
// signal while requests are still served, then serve stops.
func TestShutdownDelayDrains(t *testing.T) {
	t.Setenv("SWITCHYARD_API_KEYS", "k")
	t.Setenv("SWITCHYARD_SHUTDOWN_DELAY", "3s") // long enough for a loaded machine to see it
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, _, done := startServe(t, ctx, t.TempDir())
	if code, body := get(t, "http://"+addr+"/healthz", ""); code != 200 || body["status"] != "ok" {
		t.Fatalf("healthz before: %d %v", code, body)
	}
	cancel()
	var code int
	var body map[string]any
	for deadline := time.Now().Add(2500 * time.Millisecond); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if code, body = get(t, "http://"+addr+"/healthz", ""); code == 503 {
			break
		}
	}
	if code != 503 || body["status"] != "draining" {
		t.Fatalf("healthz while draining: %d %v", code, body)
	}
	if code, _ := get(t, "http://"+addr+"/api/v1/nope", "k"); code != 404 {
		t.Errorf("a request while draining: %d, want it served (404 for an unknown route)", code)
	}
	select {
	case c := <-done:
		if c != 0 {
			t.Fatalf("exit %d", c)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not stop after the delay")
	}
}
