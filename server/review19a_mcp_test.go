package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchyard-ai/switchyard/mcpgateway"
	"github.com/switchyard-ai/switchyard/mcpgateway/mcpgatewaytest"
)

// A key held to server "gh" sees gh's tool "enterprise-search" as "gh-enterprise-search"
// and calls it under that name, though another server, which the key may not use and
// never sees, is called "gh-enterprise".
func TestReview19aMCPToolNameOfAnAllowedServerShadowedByAForbiddenOne(t *testing.T) {
	up := mcp.NewServer(&mcp.Implementation{Name: "gh", Version: "1"}, nil)
	mcp.AddTool(up, &mcp.Tool{Name: "enterprise-search"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "found"}}}, nil, nil
	})
	ghSrv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, nil))
	t.Cleanup(ghSrv.Close)
	other := mcpgatewaytest.StartFakeHTTP(t, "fake")
	g, err := mcpgateway.New([]mcpgateway.ServerConfig{{Name: "gh", URL: ghSrv.URL}, {Name: "gh-enterprise", URL: other.URL}}, mcpgateway.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	hs, s := keysServer(t, nil, 0, MCP(g))
	vk := issue(t, s, `{"name": "gh only", "mcp_servers": ["gh"]}`)
	cs := mustConnect(t, hs, "/mcp", vk.Key)
	if got := listedNames(t, cs); !slices.Equal(got, []string{"gh-enterprise-search"}) {
		t.Fatalf("tools/list = %v", got)
	}
	if res, text := callText(t, cs, "gh-enterprise-search", nil); res.IsError || text != "found" {
		t.Fatalf("/mcp gh-enterprise-search = %+v %q, want gh's tool", res, text)
	}
	r := do(t, s, "POST", "/mcp-rest/tools/call", vk.Key, `{"name": "gh-enterprise-search"}`)
	if r.status != http.StatusOK || !strings.Contains(r.raw, `"found"`) {
		t.Fatalf("/mcp-rest/tools/call gh-enterprise-search: %d %s", r.status, r.raw)
	}
	if n := other.Calls.Load(); n != 0 {
		t.Fatalf("gh-enterprise ran %d calls for a key that may not use it", n)
	}
}
