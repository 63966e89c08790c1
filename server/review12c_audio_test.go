package server

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
)

// review12cServer is a gateway server over one OpenAI upstream handler.
func review12cServer(t *testing.T, up http.Handler, cfg Config) *httptest.Server {
	t.Helper()
	ups := httptest.NewServer(up)
	t.Cleanup(ups.Close)
	reg := providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: ups.URL + "/v1", APIKey: "sk"}))
	st := newTestStore(t)
	g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog(), Store: st})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Store = st
	s := testServer(t, cfg, nil)
	if err := Completions(g)(s); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	return hs
}

// TestReview12cTranscriptionClientGoneCancelsUpstream: a client that hangs up while its
// transcription is being made ends the upstream call (declared length or chunked upload,
// as SDKs streaming a file from disk send it).
func TestReview12cTranscriptionClientGoneCancelsUpstream(t *testing.T) {
	for _, chunked := range []bool{false, true} {
		upstreamDone := make(chan struct{}, 1)
		started := make(chan struct{}, 1)
		up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			started <- struct{}{}
			select {
			case <-r.Context().Done():
				upstreamDone <- struct{}{}
			case <-time.After(7 * time.Second):
			}
		})
		hs := review12cServer(t, up, Config{})
		body, ctype := audioForm(t, []byte("ID3ID3ID3"), "model", "whisper-1")
		conn, err := net.Dial("tcp", strings.TrimPrefix(hs.URL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		if chunked {
			fmt.Fprintf(conn, "POST /v1/audio/transcriptions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: %s\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n", testKey, ctype, body.Len(), body.String())
			time.Sleep(50 * time.Millisecond) // the last chunk in its own packet, as a streamed upload's
			io.WriteString(conn, "0\r\n\r\n")
		} else {
			fmt.Fprintf(conn, "POST /v1/audio/transcriptions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n%s", testKey, ctype, body.Len(), body.String())
		}
		select {
		case <-started:
		case <-time.After(5 * time.Second):
			t.Fatalf("chunked %v: the upstream was not called", chunked)
		}
		conn.Close()
		select {
		case <-upstreamDone:
		case <-time.After(5 * time.Second):
			t.Errorf("chunked %v: the upstream transcription went on after the client hung up", chunked)
		}
	}
}

// plainWriter hides the writer's Flush and Unwrap, as an operator's middleware that wraps
// the ResponseWriter may (chat's SSE streams still work through it: their flush is then
// a no-op).
type plainWriter struct{ http.ResponseWriter }

// TestReview12cSpeechThroughANonFlushingMiddleware: behind a Config.Middleware whose
// writer cannot flush, the speech answer stops after the first piece of audio with a clean
// 200 end — a truncated file the client takes for a whole one.
func TestReview12cSpeechThroughANonFlushingMiddleware(t *testing.T) {
	up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "audio/mpeg")
		io.WriteString(w, "ID3first")
		w.(http.Flusher).Flush()
		time.Sleep(50 * time.Millisecond)
		io.WriteString(w, "|second|end")
	})
	mw := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { next.ServeHTTP(plainWriter{w}, r) })
	}
	hs := review12cServer(t, up, Config{Middleware: []func(http.Handler) http.Handler{mw}})
	req, _ := http.NewRequest("POST", hs.URL+"/v1/audio/speech", strings.NewReader(`{"model":"tts-1","input":"Hello","voice":"alloy"}`))
	req.Header.Set("Authorization", "Bearer "+testKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	if string(b) != "ID3first|second|end" && err == nil {
		t.Errorf("the client got %q with a clean 200 end (read error %v), for the upstream's %q", b, err, "ID3first|second|end")
	}
}
