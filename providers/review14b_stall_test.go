package providers_test

// Review 14b: a ConverseStream upstream that stalls inside a message.

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// stallInsideMessage serves messageStart and the first half of the next message, then
// waits until the client goes away; gone is closed when the handler returns.
func stallInsideMessage(t *testing.T) (*httptest.Server, chan struct{}) {
	gone := make(chan struct{})
	frame := bedrockEvent("contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":"Hel"}}`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(gone)
		w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
		io.WriteString(w, bedrockEvent("messageStart", `{"role":"assistant"}`)+frame[:len(frame)/2])
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}))
	t.Cleanup(srv.Close)
	return srv, gone
}

// TestReview14bStallInsideAMessage: the idle timeout ends a stream stalled inside a
// message with KindTimeout; a caller's cancel ends it at once (not a provider fault) and
// the connection is released.
func TestReview14bStallInsideAMessage(t *testing.T) {
	srv, gone := stallInsideMessage(t)
	p := newProvider(t, providers.FormatBedrock, srv.URL, func(c *providers.Config) { c.IdleTimeout = 200 * time.Millisecond })
	s, err := p.Stream(context.Background(), hello("amazon.nova-pro-v1:0"))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = s.Recv()
	if providers.KindOf(err) != providers.KindTimeout || time.Since(start) > 3*time.Second {
		t.Errorf("stalled: %v after %v, want a timeout after about 200ms", err, time.Since(start))
	}
	s.Close()
	select {
	case <-gone:
	case <-time.After(3 * time.Second):
		t.Error("the connection stayed open after the stream failed")
	}

	srv, gone = stallInsideMessage(t)
	p = newProvider(t, providers.FormatBedrock, srv.URL, func(c *providers.Config) { c.IdleTimeout = -1 })
	ctx, cancel := context.WithCancel(context.Background())
	s, err = p.Stream(ctx, hello("amazon.nova-pro-v1:0"))
	if err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(150*time.Millisecond, cancel)
	start = time.Now()
	_, err = s.Recv()
	if err == nil || providers.KindOf(err) == providers.KindStreamBroken || time.Since(start) > 3*time.Second {
		t.Errorf("cancelled: %v (kind %s) after %v", err, providers.KindOf(err), time.Since(start))
	}
	s.Close()
	select {
	case <-gone:
	case <-time.After(3 * time.Second):
		t.Error("the connection stayed open after the cancel")
	}
}
