package mcpgateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/mcpgateway"
	"github.com/switchyard-ai/switchyard/mcpgateway/mcpgatewaytest"
)

// crlf serves h with every "\n" it writes sent as "\r\n", as servers built on
// sse-starlette (Python's FastMCP) do.
func crlf(h http.Handler) http.Handler {
	return rewritten(h, func(_ http.Header, p []byte) []byte { return bytes.ReplaceAll(p, []byte("\n"), []byte("\r\n")) })
}

// An upstream ending its event-stream lines with "\r\n" is answered at once: the "\n" of
// the blank line ending each event used to be held back until the next event came, so an
// answer waited for the next event (a keep-alive ping, seconds later) or never came, and a
// cut answer was merged with the event before it (failing the calls the cut was meant to
// spare).
func TestReview21cCRLFEventStreamIsNotHeldBack(t *testing.T) {
	for _, c := range eventStreamTransports {
		t.Run(c.name, func(t *testing.T) {
			s := mcpgatewaytest.NewFakeServer("crlf", nil, nil)
			srv := httptest.NewServer(crlf(c.handler(s)))
			t.Cleanup(srv.Close)
			g := newGateway(t, []mcpgateway.ServerConfig{{Name: "crlf", Transport: c.transport, URL: srv.URL}}, mcpgateway.Options{MaxResultBytes: 4 << 10})
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			if _, err := g.ListTools(ctx, "crlf"); err != nil {
				t.Fatalf("listing: %v", err)
			}
			if res, err := g.CallTool(ctx, "crlf", "add", json.RawMessage(`{"a": 1, "b": 2}`)); err != nil || res.Text != "3" {
				t.Fatalf("a call: %+v, %v", res, err)
			}
			if _, err := g.CallTool(ctx, "crlf", "big", json.RawMessage(`{"bytes": 2097152}`)); err == nil {
				t.Fatal("a call answered over the cap succeeded")
			}
			if res, err := g.CallTool(ctx, "crlf", "add", json.RawMessage(`{"a": 2, "b": 2}`)); err != nil || res.Text != "4" {
				t.Fatalf("a call after a cut answer: %+v, %v", res, err)
			}
		})
	}
}
