package server

import (
	"log/slog"
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchyard-ai/switchyard/mcpgateway"
)

// BenchmarkMCPToolCall measures a tools/call of the fake upstream's add tool made by the
// official Go SDK's client: direct to the upstream, and through the gateway's /mcp (the
// caller's request, authentication, the gateway's session to the upstream and back).
// BENCHMARKS.md has the figures.
func BenchmarkMCPToolCall(b *testing.B) {
	for _, bc := range []struct {
		name    string
		through bool
	}{{"direct", false}, {"gateway", true}} {
		b.Run(bc.name, func(b *testing.B) {
			m := newMCPBenchServer(b)
			endpoint, key := m.web.URL, ""
			if bc.through {
				endpoint, key = m.hs.URL+"/mcp", testKey
			}
			c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
			cs, err := c.Connect(b.Context(), &mcp.StreamableClientTransport{Endpoint: endpoint,
				HTTPClient: &http.Client{Transport: bearerTransport{key}}, MaxRetries: -1}, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer cs.Close()
			name := "add"
			if bc.through {
				name = "web-add"
			}
			params := &mcp.CallToolParams{Name: name, Arguments: map[string]any{"a": 1, "b": 2}}
			if _, err := cs.CallTool(b.Context(), params); err != nil { // connects the gateway's session
				b.Fatal(err)
			}
			b.ResetTimer()
			for b.Loop() {
				res, err := cs.CallTool(b.Context(), params)
				if err != nil || res.IsError {
					b.Fatalf("%+v %v", res, err)
				}
			}
		})
	}
}

// newMCPBenchServer is newMCPTestServer for a benchmark, its logs discarded.
func newMCPBenchServer(b *testing.B) *mcpTestServer {
	return newMCPTestServer(b, mcpgateway.Options{Logger: slog.New(slog.DiscardHandler)})
}
