package mcpgateway_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/mcpgateway"
)

// splitData serves h with each JSON-RPC response of its event streams sent over several
// data lines, as SSE allows (the reader joins them with "\n"): its envelope's members
// before the result or error ("jsonrpc", "id") each get a data line of their own, so the
// first data line does not hold the id.
func splitData(h http.Handler) http.Handler {
	return rewritten(h, func(_ http.Header, p []byte) []byte {
		start := bytes.Index(p, []byte("\ndata: {"))
		end := bytes.Index(p, []byte(`"result":`))
		if e := bytes.Index(p, []byte(`"error":`)); e >= 0 && (end < 0 || e < end) {
			end = e
		}
		if start < 0 || end < start {
			return p
		}
		var out []byte
		out = append(out, p[:start]...)
		out = append(out, bytes.ReplaceAll(p[start:end], []byte(`,"`), []byte(",\ndata: \""))...)
		return append(out, p[end:]...)
	})
}

// An answer over the result cap whose JSON-RPC message spans several data lines of its
// event fails only its own call, with ErrResultTooLarge, and a call made at the same time
// is answered, over the sse and streamable HTTP transports. The gateway looked for the
// request id in the first data line only, found none there, and failed the whole stream
// (over sse, the session and every call on it).
func TestReview21gCutAnswerOverSeveralDataLinesFailsOnlyItsCall(t *testing.T) {
	for _, c := range eventStreamTransports {
		t.Run(c.name, func(t *testing.T) {
			started, open := make(chan struct{}, 1), make(chan struct{})
			s, quit := gatedServer(t, started, open)
			srv := httptest.NewServer(splitData(c.handler(s)))
			t.Cleanup(func() { quit(); srv.Close() })
			g := newGateway(t, []mcpgateway.ServerConfig{{Name: "split", Transport: c.transport, URL: srv.URL}}, mcpgateway.Options{MaxResultBytes: 4 << 10, CallTimeout: 20 * time.Second})
			if _, err := g.ListTools(t.Context(), "split"); err != nil {
				t.Fatal(err)
			}
			cutBesideAnswered(t, g, "split", started, open)
		})
	}
}
