package server

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchyard-ai/switchyard/mcpgateway"
	"github.com/switchyard-ai/switchyard/mcpgateway/mcpgatewaytest"
)

// mcpTestServer is keysServer with an MCP gateway over two fake upstreams: "web" (every
// tool) and "docs" (allowed_tools echo and add).
type mcpTestServer struct {
	hs        *httptest.Server
	s         *Server
	web, docs *mcpgatewaytest.FakeHTTP
}

func newMCPTestServer(t testing.TB, opts mcpgateway.Options) *mcpTestServer {
	t.Helper()
	web := mcpgatewaytest.StartFakeHTTP(t, "fake-web")
	docs := mcpgatewaytest.StartFakeHTTP(t, "fake-docs")
	g, err := mcpgateway.New([]mcpgateway.ServerConfig{
		{Name: "web", URL: web.URL, Description: "the web"},
		{Name: "docs", URL: docs.URL, AllowedTools: []string{"echo", "add"}},
	}, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	hs, s := keysServer(t, nil, 0, MCP(g))
	return &mcpTestServer{hs: hs, s: s, web: web, docs: docs}
}

// bearerTransport adds Authorization: Bearer key to each request.
type bearerTransport struct{ key string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return http.DefaultTransport.RoundTrip(r)
}

// mcpConnect connects the official Go SDK's client to path with key.
func mcpConnect(t *testing.T, hs *httptest.Server, path, key string) (*mcp.ClientSession, error) {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: hs.URL + path,
		HTTPClient: &http.Client{Transport: bearerTransport{key}}, MaxRetries: -1}, nil)
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

// headerTransport adds its headers to each request.
type headerTransport http.Header

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h {
		r.Header[k] = v
	}
	return http.DefaultTransport.RoundTrip(r)
}

// mustConnectWith connects the official Go SDK's client to path sending headers h.
func mustConnectWith(t *testing.T, hs *httptest.Server, path string, h http.Header) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: hs.URL + path,
		HTTPClient: &http.Client{Transport: headerTransport(h)}, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("connecting to %s: %v", path, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func mustConnect(t *testing.T, hs *httptest.Server, path, key string) *mcp.ClientSession {
	t.Helper()
	cs, err := mcpConnect(t, hs, path, key)
	if err != nil {
		t.Fatalf("connecting to %s: %v", path, err)
	}
	return cs
}

func listedNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var out []string
	for _, tool := range res.Tools {
		out = append(out, tool.Name)
	}
	slices.Sort(out)
	return out
}

func callText(t *testing.T, cs *mcp.ClientSession, name string, args any) (*mcp.CallToolResult, string) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	var texts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	return res, strings.Join(texts, "\n")
}

func TestMCPEndpointAggregatesServers(t *testing.T) {
	m := newMCPTestServer(t, mcpgateway.Options{})
	cs := mustConnect(t, m.hs, "/mcp", testKey)
	want := []string{"docs-add", "docs-echo", "web-add", "web-big", "web-echo", "web-fail", "web-secret", "web-slow"}
	if got := listedNames(t, cs); !slices.Equal(got, want) {
		t.Fatalf("tools/list = %v, want %v (prefixed, docs' allowed_tools applied)", got, want)
	}
	if res, text := callText(t, cs, "web-add", map[string]any{"a": 40, "b": 2}); res.IsError || text != "42" {
		t.Fatalf("web-add = %+v %q", res, text)
	}
	res, text := callText(t, cs, "docs-echo", map[string]any{"text": "hello"})
	if res.IsError || text != `{"echoed":"hello"}` || res.StructuredContent == nil {
		t.Fatalf("docs-echo = %+v %q", res, text)
	}
	if res, text := callText(t, cs, "web-fail", nil); !res.IsError || text != "the tool failed" {
		t.Fatalf("web-fail = %+v %q, want the tool's own isError", res, text)
	}
	_, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "docs-secret"})
	var we *jsonrpc.Error
	if !errors.As(err, &we) || !strings.Contains(we.Message, "secret") {
		t.Fatalf("docs-secret (left out by allowed_tools) = %v, want an MCP error", err)
	}
	if n := m.docs.Calls.Load(); n != 1 {
		t.Fatalf("docs ran %d calls, want 1 (the echo)", n)
	}

	one := mustConnect(t, m.hs, "/mcp/docs", testKey)
	if got := listedNames(t, one); !slices.Equal(got, []string{"add", "echo"}) {
		t.Fatalf("/mcp/docs tools/list = %v", got)
	}
	if res, text := callText(t, one, "add", map[string]any{"a": 1, "b": 1}); res.IsError || text != "2" {
		t.Fatalf("/mcp/docs add = %+v %q", res, text)
	}
	if _, err := mcpConnect(t, m.hs, "/mcp", "wrong-key"); err == nil {
		t.Fatal("a wrong key connected")
	}
	if r := do(t, m.s, "POST", "/mcp/nope", testKey, `{}`); r.status != http.StatusNotFound || !strings.Contains(r.raw, `\"nope\"`) {
		t.Fatalf("/mcp/nope: %d %s", r.status, r.raw)
	}
}

func TestMCPVirtualKeyServers(t *testing.T) {
	m := newMCPTestServer(t, mcpgateway.Options{})
	vk := issue(t, m.s, `{"name": "docs only", "mcp_servers": ["docs"]}`)
	if !slices.Equal(vk.MCPServers, []string{"docs"}) {
		t.Fatalf("issued %+v", vk)
	}
	cs := mustConnect(t, m.hs, "/mcp", vk.Key)
	if got := listedNames(t, cs); !slices.Equal(got, []string{"docs-add", "docs-echo"}) {
		t.Fatalf("the key's tools/list = %v, want docs' only", got)
	}
	_, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "web-add", Arguments: map[string]any{"a": 1, "b": 2}})
	var we *jsonrpc.Error
	if !errors.As(err, &we) || !strings.Contains(we.Message, `unknown MCP tool "web-add"`) {
		t.Fatalf("web-add with a docs-only key = %v, want the MCP error of an unknown tool", err)
	}
	if n := m.web.Calls.Load(); n != 0 {
		t.Fatalf("web ran %d calls for a key that may not use it", n)
	}
	if _, err := mcpConnect(t, m.hs, "/mcp/web", vk.Key); err == nil {
		t.Fatal("a docs-only key connected to /mcp/web")
	}
	r := do(t, m.s, "POST", "/mcp/web", vk.Key, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	if r.status != http.StatusNotFound || !strings.Contains(r.raw, `MCP server \"web\"`) { // as an unknown server
		t.Fatalf("POST /mcp/web with a docs-only key: %d %s", r.status, r.raw)
	}
	// LiteLLM's REST routes and server list.
	r = do(t, m.s, "GET", "/v1/mcp/server", vk.Key, "")
	if r.status != http.StatusOK || !strings.Contains(r.raw, `"server_id":"docs"`) || strings.Contains(r.raw, `"web"`) {
		t.Fatalf("GET /v1/mcp/server: %d %s", r.status, r.raw)
	}
	r = do(t, m.s, "GET", "/v1/mcp/server", testKey, "")
	if !strings.Contains(r.raw, `"server_id":"web"`) || !strings.Contains(r.raw, `"description":"the web"`) {
		t.Fatalf("GET /v1/mcp/server (operator): %d %s", r.status, r.raw)
	}
	r = do(t, m.s, "GET", "/mcp-rest/tools/list", vk.Key, "")
	if r.status != http.StatusOK || !strings.Contains(r.raw, `"name":"docs-add"`) || strings.Contains(r.raw, "web-") {
		t.Fatalf("GET /mcp-rest/tools/list: %d %s", r.status, r.raw)
	}
	if r = do(t, m.s, "GET", "/mcp-rest/tools/list?server_id=web", vk.Key, ""); r.status != http.StatusNotFound {
		t.Fatalf("GET /mcp-rest/tools/list?server_id=web: %d %s", r.status, r.raw)
	}
	r = do(t, m.s, "POST", "/mcp-rest/tools/call", vk.Key, `{"name": "docs-add", "arguments": {"a": 2, "b": 3}}`)
	if r.status != http.StatusOK || !strings.Contains(r.raw, `"text":"5"`) {
		t.Fatalf("POST /mcp-rest/tools/call docs-add: %d %s", r.status, r.raw)
	}
	r = do(t, m.s, "POST", "/mcp-rest/tools/call", vk.Key, `{"name": "web-add", "arguments": {"a": 2, "b": 3}}`)
	if r.status != http.StatusNotFound || !strings.Contains(r.raw, `\"web-add\"`) {
		t.Fatalf("POST /mcp-rest/tools/call web-add: %d %s", r.status, r.raw)
	}
	r = do(t, m.s, "POST", "/mcp-rest/tools/call", testKey, `{"name": "web-nope"}`)
	if r.status != http.StatusNotFound {
		t.Fatalf("POST /mcp-rest/tools/call web-nope: %d %s", r.status, r.raw)
	}

	// PATCH widens the key; a name not configured is refused naming the field.
	if r = do(t, m.s, "PATCH", "/api/v1/keys/"+vk.ID, testKey, `{"mcp_servers": ["docs", "nope"]}`); r.status != http.StatusUnprocessableEntity || !strings.Contains(r.raw, "mcp_servers[1]") {
		t.Fatalf("PATCH mcp_servers nope: %d %s", r.status, r.raw)
	}
	if r = do(t, m.s, "PATCH", "/api/v1/keys/"+vk.ID, testKey, `{"mcp_servers": []}`); r.status != http.StatusOK || strings.Contains(r.raw, "mcp_servers") {
		t.Fatalf("PATCH mcp_servers []: %d %s", r.status, r.raw)
	}
	if got := listedNames(t, mustConnect(t, m.hs, "/mcp", vk.Key)); len(got) != 8 {
		t.Fatalf("after widening: %v", got)
	}

	// LiteLLM's object_permission.
	r = do(t, m.s, "POST", "/key/generate", testKey, `{"object_permission": {"mcp_servers": ["web"], "vector_stores": []}}`)
	if r.status != http.StatusOK || !strings.Contains(r.raw, `"object_permission":{"mcp_servers":["web"]}`) {
		t.Fatalf("/key/generate object_permission: %d %s", r.status, r.raw)
	}
	var gen struct {
		Key string `json:"key"`
	}
	json.Unmarshal([]byte(r.raw), &gen)
	if got := listedNames(t, mustConnect(t, m.hs, "/mcp", gen.Key)); len(got) != 6 || !strings.HasPrefix(got[0], "web-") {
		t.Fatalf("a LiteLLM key limited to web lists %v", got)
	}
	r = do(t, m.s, "POST", "/key/generate", testKey, `{"object_permission": {"mcp_servers": ["nope"]}}`)
	if r.status != http.StatusBadRequest || !strings.Contains(r.raw, "object_permission.mcp_servers[0]") {
		t.Fatalf("/key/generate with an unknown server: %d %s", r.status, r.raw)
	}
	r = do(t, m.s, "POST", "/key/generate", testKey, `{"object_permission": {"mcp_tool_permissions": {"web": ["add"]}}}`)
	if r.status != http.StatusBadRequest || !strings.Contains(r.raw, "object_permission.mcp_tool_permissions") {
		t.Fatalf("/key/generate with per-tool permissions: %d %s", r.status, r.raw)
	}
	r = do(t, m.s, "GET", "/key/info?key="+gen.Key, testKey, "")
	if !strings.Contains(r.raw, `"object_permission":{"mcp_servers":["web"]}`) {
		t.Fatalf("/key/info: %d %s", r.status, r.raw)
	}
}

func TestMCPUpstreamDiesAndComesBack(t *testing.T) {
	m := newMCPTestServer(t, mcpgateway.Options{})
	cs := mustConnect(t, m.hs, "/mcp", testKey)
	if _, text := callText(t, cs, "web-add", map[string]any{"a": 1, "b": 2}); text != "3" {
		t.Fatalf("web-add = %q", text)
	}
	m.web.Stop()
	res, text := callText(t, cs, "web-add", map[string]any{"a": 1, "b": 2})
	if !res.IsError || !strings.Contains(text, "web") {
		t.Fatalf("web-add with web down = %+v %q, want isError naming web", res, text)
	}
	// The aggregated list leaves the dead server out instead of failing.
	if got := listedNames(t, cs); !slices.Equal(got, []string{"docs-add", "docs-echo"}) {
		t.Fatalf("tools/list with web down = %v", got)
	}
	m.web.Restart("fake-web")
	if res, text := callText(t, cs, "web-add", map[string]any{"a": 1, "b": 2}); res.IsError || text != "3" {
		t.Fatalf("web-add with web back = %+v %q", res, text)
	}
}

func TestMCPTimeoutAndResultCap(t *testing.T) {
	m := newMCPTestServer(t, mcpgateway.Options{CallTimeout: 300 * time.Millisecond, MaxResultBytes: 1 << 10})
	cs := mustConnect(t, m.hs, "/mcp", testKey)
	res, text := callText(t, cs, "web-slow", nil)
	if !res.IsError || !strings.Contains(text, "timed out") {
		t.Fatalf("web-slow = %+v %q, want isError saying it timed out", res, text)
	}
	res, text = callText(t, cs, "web-big", map[string]any{"bytes": 2000})
	if !res.IsError || !strings.Contains(text, "1 KiB") {
		t.Fatalf("web-big = %+v %q, want isError naming the cap", res, text)
	}
	if r := do(t, m.s, "POST", "/mcp-rest/tools/call", testKey, `{"name": "web-slow"}`); r.status != http.StatusGatewayTimeout {
		t.Fatalf("REST web-slow: %d %s", r.status, r.raw)
	}
	if r := do(t, m.s, "POST", "/mcp-rest/tools/call", testKey, `{"name": "web-big", "arguments": {"bytes": 2000}}`); r.status != http.StatusBadGateway || !strings.Contains(r.raw, "1 KiB") {
		t.Fatalf("REST web-big: %d %s", r.status, r.raw)
	}
	if r := do(t, m.s, "POST", "/mcp-rest/tools/call", testKey, `{"name": "add", "server_id": "web", "arguments": [1]}`); r.status != http.StatusBadRequest {
		t.Fatalf("REST arguments [1]: %d %s", r.status, r.raw)
	}
}

// TestMCPKeyWithoutGateway: mcp_servers names servers of --mcp-servers; without any, a key
// naming one is refused.
func TestMCPKeyWithoutGateway(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	r := do(t, s, "POST", "/api/v1/keys", testKey, `{"mcp_servers": ["web"]}`)
	if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.raw, "--mcp-servers") {
		t.Fatalf("mcp_servers without a gateway: %d %s", r.status, r.raw)
	}
}

// TestMCPLiteLLMHeaders: as LiteLLM's MCP gateway, the key may come in x-litellm-api-key
// ("Bearer sk-…" or bare) on the MCP routes, and x-mcp-servers narrows the servers a
// request sees (never widening a virtual key's own).
func TestMCPLiteLLMHeaders(t *testing.T) {
	m := newMCPTestServer(t, mcpgateway.Options{})
	list := func(h http.Header) (int, []string) {
		t.Helper()
		req, _ := http.NewRequest("GET", m.hs.URL+"/mcp-rest/tools/list", nil)
		req.Header = h
		resp, err := m.hs.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		}
		json.NewDecoder(resp.Body).Decode(&out)
		var names []string
		for _, tl := range out.Tools {
			names = append(names, tl.Name)
		}
		return resp.StatusCode, names
	}
	for _, v := range []string{"Bearer " + testKey, testKey} {
		if code, names := list(http.Header{"X-Litellm-Api-Key": {v}}); code != 200 || len(names) != 8 {
			t.Fatalf("x-litellm-api-key %q: %d %v", v, code, names)
		}
	}
	if code, _ := list(http.Header{"X-Litellm-Api-Key": {"Bearer wrong"}}); code != http.StatusUnauthorized {
		t.Fatalf("a wrong x-litellm-api-key: %d", code)
	}
	code, names := list(http.Header{"Authorization": {"Bearer " + testKey}, "X-Mcp-Servers": {"docs"}})
	if code != 200 || !slices.Equal(names, []string{"docs-add", "docs-echo"}) {
		t.Fatalf("x-mcp-servers docs: %d %v", code, names)
	}
	// Over MCP itself too: the aggregated endpoint lists docs' tools alone.
	cs := mustConnectWith(t, m.hs, "/mcp", http.Header{"X-Litellm-Api-Key": {"Bearer " + testKey}, "X-Mcp-Servers": {"docs, nope"}})
	if got := listedNames(t, cs); !slices.Equal(got, []string{"docs-add", "docs-echo"}) {
		t.Fatalf("/mcp with x-mcp-servers: %v", got)
	}
	// A virtual key held to web sees nothing of docs whatever the header says.
	vk := issue(t, m.s, `{"name":"held","mcp_servers":["web"]}`)
	if code, names := list(http.Header{"Authorization": {"Bearer " + vk.Key}, "X-Mcp-Servers": {"docs,web"}}); code != 200 || len(names) != 6 || slices.Contains(names, "docs-add") {
		t.Fatalf("held key with x-mcp-servers docs,web: %d %v", code, names)
	}
}
