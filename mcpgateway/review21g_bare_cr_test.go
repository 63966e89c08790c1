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

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchyard-ai/switchyard/mcpgateway"
	"github.com/switchyard-ai/switchyard/mcpgateway/mcpgatewaytest"
)

// crWriter sends every "\n" an event stream's handler writes as a bare "\r" (a line end
// the SSE spec allows); other bodies are sent as they are.
type crWriter struct{ http.ResponseWriter }

func (w crWriter) Write(p []byte) (int, error) {
	if mt, _, _ := mime.ParseMediaType(w.Header().Get("Content-Type")); mt == "text/event-stream" {
		if _, err := w.ResponseWriter.Write(bytes.ReplaceAll(p, []byte("\n"), []byte("\r"))); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	return w.ResponseWriter.Write(p)
}

func (w crWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// An upstream ending its event-stream lines with a bare "\r" can be used: its tools are
// listed and called, over the sse and streamable HTTP transports. The gateway split such a
// stream into events, but passed the "\r" on to the MCP SDK, whose event reader ends a
// line only at "\n": connecting or calling hung until the deadline.
func TestReview21gBareCREventStreamIsUsable(t *testing.T) {
	for _, c := range []struct {
		name      string
		transport mcpgateway.Transport
		handler   func(*mcp.Server) http.Handler
	}{
		{"sse", mcpgateway.TransportSSE, func(s *mcp.Server) http.Handler {
			return mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return s }, nil)
		}},
		{"streamable", mcpgateway.TransportHTTP, func(s *mcp.Server) http.Handler {
			return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := mcpgatewaytest.NewFakeServer("cr", nil, nil)
			h := c.handler(s)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(crWriter{w}, r) }))
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
