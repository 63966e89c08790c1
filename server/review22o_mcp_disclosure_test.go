package server

import (
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchyard-ai/switchyard/mcpgateway"
)

// TestReview22oMCPForbiddenServerAnsweredAsUnknown: a virtual key held to some MCP servers
// was answered 403 naming a server it may not use and 404 for a name no server has, on
// GET /v1/mcp/server/health?server_ids=, /mcp/{server}, /mcp-rest/tools/list?server_id=,
// /mcp-rest/tools/call and tools/call on /mcp, so the key could tell which names are
// servers of the gateway, though GET /v1/mcp/server hides them from it. A server the key
// may not use is now answered exactly as an unknown one, on every route.
func TestReview22oMCPForbiddenServerAnsweredAsUnknown(t *testing.T) {
	m := newMCPTestServer(t, mcpgateway.Options{})
	vk := issue(t, m.s, `{"name": "docs only", "mcp_servers": ["docs"]}`)
	const forbidden, unknown = "web", "nope"
	for _, req := range []struct{ method, path, body string }{
		{"GET", "/v1/mcp/server/health?server_ids=%s", ""},
		{"GET", "/v1/mcp/server/health?server_ids=docs,%s", ""},
		{"GET", "/mcp-rest/tools/list?server_id=%s", ""},
		{"POST", "/mcp-rest/tools/call", `{"name": "%s-add", "arguments": {"a": 1, "b": 2}}`},
		{"POST", "/mcp-rest/tools/call", `{"server_id": "%s", "name": "add", "arguments": {"a": 1, "b": 2}}`},
		{"POST", "/mcp/%s", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`},
	} {
		name := func(s string) string { return strings.ReplaceAll(req.path+" "+req.body, "%s", s) }
		fill := func(s, server string) string { return strings.ReplaceAll(s, "%s", server) }
		f := do(t, m.s, req.method, fill(req.path, forbidden), vk.Key, fill(req.body, forbidden))
		u := do(t, m.s, req.method, fill(req.path, unknown), vk.Key, fill(req.body, unknown))
		if u.status != 404 {
			t.Errorf("%s %s: %d %s, want 404", req.method, name(unknown), u.status, u.raw)
		}
		if f.status != u.status || strings.ReplaceAll(f.raw, forbidden, unknown) != u.raw {
			t.Errorf("%s %s: %d %s\nbut for an unknown server: %d %s", req.method, name(forbidden), f.status, f.raw, u.status, u.raw)
		}
	}
	cs := mustConnect(t, m.hs, "/mcp", vk.Key)
	message := func(server string) string {
		_, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: server + "-add", Arguments: map[string]any{"a": 1, "b": 2}})
		var we *jsonrpc.Error
		if !errors.As(err, &we) {
			t.Fatalf("/mcp tools/call %s-add: %v, want an MCP error", server, err)
		}
		return we.Message
	}
	if f, u := message(forbidden), message(unknown); strings.ReplaceAll(f, forbidden, unknown) != u {
		t.Errorf("/mcp tools/call web-add: %q, but for an unknown server: %q", f, u)
	}
	if n := m.web.Calls.Load(); n != 0 {
		t.Errorf("web ran %d calls for a key that may not use it", n)
	}
}
