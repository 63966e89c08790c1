package mcpgateway_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/mcpgateway"
)

// An upstream's URL may be its credential (Zapier's and others' secret URLs, LiteLLM's
// ZAPIER_MCP_SERVER_URL): the gateway's errors, which reach callers (a 502's message, an
// isError result, an mcp_list_tools item), must not carry it.
func TestReview19aErrorsDoNotCarryTheUpstreamURL(t *testing.T) {
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "nope", 500) }))
	t.Cleanup(failing.Close)
	for _, sc := range []mcpgateway.ServerConfig{
		{Name: "refused", URL: "http://127.0.0.1:1/api/mcp/s/sk-SECRET-1/mcp"},
		{Name: "failing", URL: failing.URL + "/api/mcp/s/sk-SECRET-2/mcp"},
		{Name: "sse-refused", Transport: mcpgateway.TransportSSE, URL: "http://127.0.0.1:1/mcp/sk-SECRET-3/sse"},
	} {
		g := newGateway(t, []mcpgateway.ServerConfig{sc}, mcpgateway.Options{})
		_, err := g.ListTools(t.Context(), sc.Name)
		if err == nil || strings.Contains(err.Error(), "SECRET") || !strings.Contains(err.Error(), sc.Name) {
			t.Errorf("ListTools(%s) = %v, want an error naming the server, not its URL", sc.Name, err)
		}
		_, err = g.CallTool(t.Context(), sc.Name, "add", nil)
		if err == nil || strings.Contains(err.Error(), "SECRET") {
			t.Errorf("CallTool(%s) = %v, want an error without the URL", sc.Name, err)
		}
	}
}
