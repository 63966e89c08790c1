package mcpgateway_test

import (
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchyard-ai/switchyard/mcpgateway"
)

// eventStreamTransports are the transports whose answers may come as event streams, each
// with a handler serving an MCP server over it.
var eventStreamTransports = []struct {
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
}

// rewriteWriter passes each write of a handler through rewrite (which sees the response's
// headers) before it is sent, keeping flushes: an upstream that frames its streams as some
// real servers do.
type rewriteWriter struct {
	http.ResponseWriter
	rewrite func(h http.Header, p []byte) []byte
}

func (w rewriteWriter) Write(p []byte) (int, error) {
	if _, err := w.ResponseWriter.Write(w.rewrite(w.Header(), p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (w rewriteWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// rewritten serves h with every write passed through rewrite.
func rewritten(h http.Handler, rewrite func(http.Header, []byte) []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(rewriteWriter{ResponseWriter: w, rewrite: rewrite}, r)
	})
}
