package mcpgateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"mime"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/mcpgateway"
	"github.com/switchyard-ai/switchyard/mcpgateway/mcpgatewaytest"
)

// bareCR serves h with every "\n" its event streams write sent as a bare "\r" (a line end
// the SSE spec allows); other bodies are sent as they are.
func bareCR(h http.Handler) http.Handler {
	return rewritten(h, func(hd http.Header, p []byte) []byte {
		if mt, _, _ := mime.ParseMediaType(hd.Get("Content-Type")); mt == "text/event-stream" {
			return bytes.ReplaceAll(p, []byte("\n"), []byte("\r"))
		}
		return p
	})
}

// An upstream ending its event-stream lines with a bare "\r" can be used: its tools are
// listed and called, over the sse and streamable HTTP transports. The gateway split such a
// stream into events, but passed the "\r" on to the MCP SDK, whose event reader ends a
// line only at "\n": connecting or calling hung until the deadline.
func TestReview21gBareCREventStreamIsUsable(t *testing.T) {
	for _, c := range eventStreamTransports {
		t.Run(c.name, func(t *testing.T) {
			s := mcpgatewaytest.NewFakeServer("cr", nil, nil)
			srv := httptest.NewServer(bareCR(c.handler(s)))
			t.Cleanup(srv.Close)
			g := newGateway(t, []mcpgateway.ServerConfig{{Name: "cr", Transport: c.transport, URL: srv.URL}}, mcpgateway.Options{MaxResultBytes: 4 << 10})
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			if tools, err := g.ListTools(ctx, "cr"); err != nil || len(tools) != len(mcpgatewaytest.FakeTools) {
				t.Fatalf("listing: %d tools, %v", len(tools), err)
			}
			if res, err := g.CallTool(ctx, "cr", "add", json.RawMessage(`{"a": 1, "b": 2}`)); err != nil || res.Text != "3" {
				t.Fatalf("a call: %+v, %v", res, err)
			}
			if res, err := g.CallTool(ctx, "cr", "big", json.RawMessage(`{"bytes": 3000}`)); err != nil || len(res.Text) != 3000 {
				t.Fatalf("a second call: %d bytes, %v", len(res.Text), err)
			}
		})
	}
}
