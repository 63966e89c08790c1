package completions

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// flushRecorder is a ResponseWriter that records what each Flush sent.
type flushRecorder struct {
	header  http.Header
	mu      sync.Mutex
	pending bytes.Buffer
	flushes []string
	flushed chan struct{}
}

func newFlushRecorder() *flushRecorder {
	return &flushRecorder{header: http.Header{}, flushed: make(chan struct{}, 100)}
}

func (f *flushRecorder) Header() http.Header { return f.header }
func (f *flushRecorder) WriteHeader(int)     {}
func (f *flushRecorder) Write(b []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pending.Write(b)
}
func (f *flushRecorder) Flush() {
	f.mu.Lock()
	f.flushes = append(f.flushes, f.pending.String())
	f.pending.Reset()
	f.mu.Unlock()
	f.flushed <- struct{}{}
}

// sent is everything flushed so far.
func (f *flushRecorder) sent() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.flushes, "")
}

// TestRelayFlushesBurstsTogetherAndBeforeWaiting streams through the real OpenAI adapter
// from an upstream that sends a burst of fragments in one write and then pauses: the
// relay must send the whole burst in one flush, and must send it before the pause ends
// (a fragment never waits for the network).
func TestRelayFlushesBurstsTogetherAndBeforeWaiting(t *testing.T) {
	for _, openai := range []bool{false, true} {
		t.Run(fmt.Sprintf("openai=%v", openai), func(t *testing.T) {
			g, up, _ := faultGateway(t)
			release := make(chan struct{})
			up.on("burst", func(w http.ResponseWriter, r *http.Request, body upstreamRequest) {
				startStream(w)
				var burst strings.Builder
				for _, f := range []string{"one ", "two ", "three ", "four ", "five "} {
					fmt.Fprintf(&burst, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":%q}}]}\n\n", f)
				}
				fmt.Fprint(w, burst.String())
				w.(http.Flusher).Flush()
				select {
				case <-release:
				case <-r.Context().Done():
					return
				}
				writeEvent(w, `{"choices":[{"index":0,"delta":{"content":"six"},"finish_reason":"stop"}]}`)
				writeEvent(w, `{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":6,"total_tokens":9}}`)
				writeEvent(w, "[DONE]")
			})
			st, err := g.Stream(context.Background(), Scope{}, userReq("hi", "up/burst"))
			if err != nil {
				t.Fatal(err)
			}
			rec := newFlushRecorder()
			done := make(chan error, 1)
			go func() {
				if openai {
					done <- WriteOpenAIStream(rec, st, true)
				} else {
					done <- WriteStream(rec, st)
				}
			}()
			// While the upstream holds back "six", all five fragments must reach the client.
			deadline := time.After(10 * time.Second)
			for strings.Count(rec.sent(), "data: ") < 5 {
				select {
				case <-rec.flushed:
				case <-deadline:
					t.Fatalf("fragments held back while the upstream paused; sent so far: %q", rec.sent())
				}
			}
			rec.mu.Lock()
			var withData int
			for _, f := range rec.flushes {
				if strings.Contains(f, "data: ") {
					withData++
				}
			}
			rec.mu.Unlock()
			// The burst arrived in one read, so it leaves in one flush (two if the upstream's
			// TCP segment happened to be split).
			if withData > 2 {
				t.Errorf("burst of 5 fragments sent in %d flushes, want 1 (at most 2)", withData)
			}
			close(release)
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			out := rec.sent()
			if !strings.HasSuffix(out, "data: [DONE]\n\n") || !strings.Contains(out, "six") {
				t.Fatalf("stream = %q", out)
			}
		})
	}
}
