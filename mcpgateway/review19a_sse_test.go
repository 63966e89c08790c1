package mcpgateway_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchyard-ai/switchyard/mcpgateway"
	"github.com/switchyard-ai/switchyard/mcpgateway/mcpgatewaytest"
)

// The SSE transport's event stream is the session: it must outlive the connecting call.
func TestReview19aSSEUpstreamAnswersAfterConnecting(t *testing.T) {
	s := mcpgatewaytest.NewFakeServer("fake-sse", nil, nil)
	srv := httptest.NewServer(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(srv.Close)
	g := newGateway(t, []mcpgateway.ServerConfig{{Name: "legacy", Transport: mcpgateway.TransportSSE, URL: srv.URL}}, mcpgateway.Options{})
	if _, err := g.ListTools(t.Context(), "legacy"); err != nil {
		t.Fatalf("ListTools over SSE: %v", err)
	}
	res, err := g.CallTool(t.Context(), "legacy", "add", json.RawMessage(`{"a": 2, "b": 40}`))
	if err != nil || res.Text != "42" {
		t.Fatalf("CallTool over SSE = %+v, %v", res, err)
	}
}
