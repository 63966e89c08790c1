package mcpgateway_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchyard-ai/switchyard/mcpgateway"
)

// splitDataWriter sends each JSON-RPC response of an event stream over several data lines,
// as SSE allows (the reader joins them with "\n"): its envelope's members before the result
// or error ("jsonrpc", "id") each get a data line of their own, so the first data line
// does not hold the id.
type splitDataWriter struct{ http.ResponseWriter }

func (w splitDataWriter) Write(p []byte) (int, error) {
	start := bytes.Index(p, []byte("\ndata: {"))
	end := bytes.Index(p, []byte(`"result":`))
	if e := bytes.Index(p, []byte(`"error":`)); e >= 0 && (end < 0 || e < end) {
		end = e
	}
	if start < 0 || end < start {
		return w.ResponseWriter.Write(p)
	}
	var out []byte
	out = append(out, p[:start]...)
	out = append(out, bytes.ReplaceAll(p[start:end], []byte(`,"`), []byte(",\ndata: \""))...)
	out = append(out, p[end:]...)
	if _, err := w.ResponseWriter.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (w splitDataWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// An answer over the result cap whose JSON-RPC message spans several data lines of its
// event fails only its own call, with ErrResultTooLarge, and a call made at the same time
// is answered, over the sse and streamable HTTP transports. The gateway looked for the
// request id in the first data line only, found none there, and failed the whole stream
// (over sse, the session and every call on it).
func TestReview21gCutAnswerOverSeveralDataLinesFailsOnlyItsCall(t *testing.T) {
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
			started, open := make(chan struct{}, 1), make(chan struct{})
			s, quit := gatedServer(t, started, open)
			h := c.handler(s)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(splitDataWriter{w}, r) }))
			t.Cleanup(func() { quit(); srv.Close() })
			g := newGateway(t, []mcpgateway.ServerConfig{{Name: "split", Transport: c.transport, URL: srv.URL}}, mcpgateway.Options{MaxResultBytes: 4 << 10, CallTimeout: 20 * time.Second})
			if _, err := g.ListTools(t.Context(), "split"); err != nil {
				t.Fatal(err)
			}
			cutBesideAnswered(t, g, "split", started, open)
		})
	}
}
