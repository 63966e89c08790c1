package fetch

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestStalledDownloadFails: a server that stops sending (before the headers, or in the
// middle of the body) fails the fetch with ErrStalled after the idle timeout, long before
// the overall timeout; a slow server that keeps sending is not cut.
func TestStalledDownloadFails(t *testing.T) {
	release := make(chan struct{})
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/no-headers":
			<-release
		case "/mid-body":
			w.Write([]byte(strings.Repeat("x", 1000)))
			w.(http.Flusher).Flush()
			<-release
		case "/slow":
			for range 6 {
				w.Write([]byte("chunk\n"))
				w.(http.Flusher).Flush()
				select {
				case <-time.After(20 * time.Millisecond):
				case <-release:
					return
				}
			}
		}
	})
	t.Cleanup(func() { close(release) }) // runs before the server closes
	f := &Fetcher{AllowLocal: true, IdleTimeout: 500 * time.Millisecond, Timeout: time.Minute}
	for _, path := range []string{"/no-headers", "/mid-body"} {
		_, err := f.Get(context.Background(), srv.URL+path)
		if !errors.Is(err, ErrStalled) || !errors.Is(err, ErrFetch) {
			t.Fatalf("%s: err = %v, want ErrStalled", path, err)
		}
		if !strings.Contains(err.Error(), "no data from the server") {
			t.Errorf("%s: message %q does not say the download stalled", path, err)
		}
	}
	body, err := f.Get(context.Background(), srv.URL+"/slow")
	if err != nil || strings.Count(string(body), "chunk") != 6 {
		t.Fatalf("slow but steady download: %q, %v", body, err)
	}
	// The caller's own cancellation is still reported as such, not as a stall.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := f.Get(ctx, srv.URL+"/no-headers"); errors.Is(err, ErrStalled) || !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled fetch: err = %v", err)
	}
}
