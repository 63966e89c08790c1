package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestShutdownCutStreamOnAgentsListener: with TLS on, sandboxed agents call the gateway in
// plain HTTP on a loopback listener of their own (the log's agents_gateway), served by the
// same http.Server: a stream on it still running at --shutdown-timeout is cut as one on the
// main listener is — an error event saying the server is shutting down, recorded cut in the
// request history when serve has exited.
func TestShutdownCutStreamOnAgentsListener(t *testing.T) {
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
	certDir := t.TempDir()
	writeTestCert(t, certDir, 1)
	sv := startForShutdown(t, upstream.URL, "--tls-cert", filepath.Join(certDir, "cert.pem"), "--tls-key", filepath.Join(certDir, "key.pem"))
	m := regexp.MustCompile(`agents_gateway=(http://127\.0\.0\.1:\d+/v1)`).FindStringSubmatch(sv.stderr.String())
	if m == nil {
		t.Fatalf("no agents_gateway in the start log: %s", sv.stderr.String())
	}
	type answer struct {
		status int
		body   string
		err    error
	}
	res := make(chan answer, 1)
	go func() {
		req, _ := http.NewRequest("POST", m[1]+"/chat/completions", strings.NewReader(
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
	case a := <-res:
		t.Fatalf("the stream ended before reaching the upstream: %+v", a)
	case <-time.After(10 * time.Second):
		t.Fatal("request never reached the upstream")
	}
	time.Sleep(50 * time.Millisecond) // the first chunk reaches the client
	sv.cancel()
	select {
	case a := <-res:
		if a.err != nil || a.status != http.StatusOK || !strings.Contains(a.body, "Hel") || !strings.Contains(a.body, "shutting down") {
			t.Errorf("the cut stream: %d %s (err %v)", a.status, a.body, a.err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the cut stream never ended")
	}
	if logged, err := sv.historyAfterExit(t); err != nil || len(logged) != 1 {
		t.Errorf("request history after the cut: %d entries, %v; want the cut stream's", len(logged), err)
	} else if v := string(logged[0].Value); !strings.Contains(v, `"outcome":"cut"`) {
		t.Errorf("the cut stream on the agents' listener is not recorded cut: %s", v)
	}
}
