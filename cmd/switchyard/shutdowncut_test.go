package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/boltstore"
)

// TestShutdownCutRequestIs503: a request still waiting on its upstream at --shutdown-timeout
// used to lose its connection with no answer (the SDKs saw a dropped connection), and its
// entry in the request history was dropped ("a request was not recorded", the store already
// closed under it); now it gets a 503 with Retry-After saying the server is shutting down,
// and its entry is in the database when serve has exited.
func TestShutdownCutRequestIs503(t *testing.T) {
	arrived := make(chan struct{}, 1)
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		arrived <- struct{}{}
		select {
		case <-time.After(20 * time.Second):
		case <-r.Context().Done():
		}
	}))
	defer upstream.Close()
	sv := startForShutdown(t, upstream.URL)
	addr := sv.addr
	type answer struct {
		status     int
		retryAfter string
		noRetry    string
		body       string
		err        error
	}
	res := make(chan answer, 1)
	go func() {
		req, _ := http.NewRequest("POST", "http://"+addr+"/v1/chat/completions", strings.NewReader(
			`{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`))
		req.Header.Set("Authorization", "Bearer k")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			res <- answer{err: err}
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		res <- answer{status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After"), noRetry: resp.Header.Get("X-Should-Retry"), body: string(b)}
	}()
	select {
	case <-arrived:
	case <-time.After(10 * time.Second):
		t.Fatal("request never reached the upstream")
	}
	sv.cancel()
	select {
	case a := <-res:
		if a.err != nil || a.status != http.StatusServiceUnavailable || a.retryAfter == "" || a.noRetry == "false" || !strings.Contains(a.body, "shutting down") {
			t.Errorf("the cut request: %d Retry-After %q X-Should-Retry %q %s (err %v)", a.status, a.retryAfter, a.noRetry, a.body, a.err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the cut request got no answer")
	}
	if logged, err := sv.historyAfterExit(t); err != nil || len(logged) != 1 {
		t.Errorf("request history after the cut: %d entries, %v; want the cut request's", len(logged), err)
	} else if v := string(logged[0].Value); !strings.Contains(v, `"outcome":"cut"`) || !strings.Contains(v, "shutting down") {
		t.Errorf("the cut request is not recorded cut by the server's shutdown: %s", v)
	}
}

// TestShutdownCutStreamSaysShuttingDown: a stream still running at --shutdown-timeout ended
// with an error event saying "context canceled", which told the client nothing; now the event
// says the server is shutting down, and the stream's usage is in the request history when
// serve has exited.
func TestShutdownCutStreamSaysShuttingDown(t *testing.T) {
	arrived := make(chan struct{}, 1)
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"role":"assistant","content":"Hel"}}]}`+"\n\n")
		w.(http.Flusher).Flush()
		arrived <- struct{}{}
		select {
		case <-time.After(20 * time.Second):
		case <-r.Context().Done():
		}
	}))
	defer upstream.Close()
	sv := startForShutdown(t, upstream.URL)
	addr := sv.addr
	type answer struct {
		status int
		body   string
		err    error
	}
	res := make(chan answer, 1)
	go func() {
		req, _ := http.NewRequest("POST", "http://"+addr+"/v1/chat/completions", strings.NewReader(
			`{"model":"openai/gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
		req.Header.Set("Authorization", "Bearer k")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			res <- answer{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		res <- answer{status: resp.StatusCode, body: string(b), err: err}
	}()
	select {
	case <-arrived:
	case <-time.After(10 * time.Second):
		t.Fatal("request never reached the upstream")
	}
	time.Sleep(50 * time.Millisecond) // the first chunk reaches the client
	sv.cancel()
	select {
	case a := <-res:
		if a.err != nil || a.status != http.StatusOK || !strings.Contains(a.body, "Hel") || !strings.Contains(a.body, "shutting down") || strings.Contains(a.body, "context canceled") {
			t.Errorf("the cut stream: %d %s (err %v)", a.status, a.body, a.err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the cut stream never ended")
	}
	if logged, err := sv.historyAfterExit(t); err != nil || len(logged) != 1 {
		t.Errorf("request history after the cut: %d entries, %v; want the cut stream's", len(logged), err)
	} else if v := string(logged[0].Value); !strings.Contains(v, `"kind":"cut"`) || !strings.Contains(v, `"outcome":"cut"`) {
		t.Errorf("the cut stream (or its attempt) is not marked cut: %s", v)
	}
}

// shutdownServe is a serve process for the shutdown tests: its upstream, a 300ms
// --shutdown-timeout, a bbolt data directory.
type shutdownServe struct {
	addr, dataDir string
	stderr        *syncBuffer
	cancel        context.CancelFunc
	done          chan int
}

// startForShutdown starts serve on upstreamURL (OpenAI's API) with the key "k" and more
// flags, and waits until it listens.
func startForShutdown(t *testing.T, upstreamURL string, more ...string) *shutdownServe {
	t.Helper()
	t.Setenv("SWITCHYARD_API_KEYS", "k")
	t.Setenv("OPENAI_API_KEY", "sk-test")
	t.Setenv("OPENAI_BASE_URL", upstreamURL+"/v1")
	t.Setenv("SWITCHYARD_SHUTDOWN_TIMEOUT", "300ms")
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	sv := &shutdownServe{dataDir: t.TempDir(), stderr: &syncBuffer{}, cancel: cancel, done: make(chan int, 1)}
	go func() {
		sv.done <- run(ctx, append([]string{"serve", "--addr", "127.0.0.1:0", "--data", sv.dataDir}, more...), io.Discard, sv.stderr)
	}()
	for deadline := time.Now().Add(20 * time.Second); sv.addr == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if m := addrRe.FindStringSubmatch(sv.stderr.String()); m != nil {
			sv.addr = m[1]
		}
	}
	if sv.addr == "" {
		t.Fatalf("serve did not start: %s", sv.stderr.String())
	}
	return sv
}

// historyAfterExit waits for serve to exit 0 with no request left unrecorded and returns the
// request history its database holds.
func (sv *shutdownServe) historyAfterExit(t *testing.T) ([]store.Entry, error) {
	t.Helper()
	select {
	case code := <-sv.done:
		if code != 0 {
			t.Fatalf("exit code %d: %s", code, sv.stderr.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not exit")
	}
	if strings.Contains(sv.stderr.String(), "not recorded") {
		t.Errorf("a request went unrecorded:\n%s", sv.stderr.String())
	}
	st, err := boltstore.Open(filepath.Join(sv.dataDir, "switchyard.db"), boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	return st.List(context.Background(), store.RequestLog, store.ListOptions{})
}
