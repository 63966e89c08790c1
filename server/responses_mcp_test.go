package server

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/openai/openai-go/responses"
	"github.com/switchyard-ai/switchyard/completions"
)

// fakeMCPServers is an in-memory completions.MCPTools for tests: server "docs" with one
// tool, search.
type fakeMCPServers struct{}

func (fakeMCPServers) Servers() []string { return []string{"docs"} }

func (fakeMCPServers) ListTools(ctx context.Context, server string) ([]completions.MCPTool, error) {
	return []completions.MCPTool{{Name: "search", InputSchema: json.RawMessage(`{"type":"object"}`)}}, nil
}

func (fakeMCPServers) CallTool(ctx context.Context, server, tool string, arguments json.RawMessage) (completions.MCPResult, error) {
	return completions.MCPResult{Text: "found"}, nil
}

// TestResponsesMCPTools: /v1/responses with an mcp tool lists the configured server's tools
// (openai-go reads the item) and answers; a server_url of the caller's is a 400 naming it;
// a gateway without MCP servers says so.
func TestResponsesMCPTools(t *testing.T) {
	hs, _, _ := completionsServerWith(t, func(o *completions.Options) { o.MCP = fakeMCPServers{} })
	url := hs.URL + "/v1/responses"
	resp, b := do2(t, "POST", url, testKey, `{"model":"up/ok","input":"hi","tools":[{"type":"mcp","server_label":"docs","require_approval":"never","headers":{"Authorization":"Bearer secret"}}]}`, nil)
	if resp.StatusCode != 200 || strings.Contains(string(b), "secret") {
		t.Fatalf("mcp request: %d %s", resp.StatusCode, b)
	}
	var parsed responses.Response
	if err := json.Unmarshal(b, &parsed); err != nil {
		t.Fatal(err)
	}
	if len(parsed.Output) != 2 || parsed.Output[0].AsMcpListTools().Tools[0].Name != "search" || parsed.OutputText() != "Hello from ok" {
		t.Fatalf("output %s", b)
	}
	resp, b = do2(t, "POST", url, testKey, `{"model":"up/ok","input":"hi","tools":[{"type":"mcp","server_label":"docs","server_url":"http://10.0.0.1/mcp"}]}`, nil)
	if e := wantOpenAIError(t, "server_url", resp, b, 400, "invalid_request_error", ""); !strings.HasPrefix(e.Message, "tools[0].server_url") {
		t.Fatalf("server_url: %s", e.Message)
	}

	plain, _, _ := completionsServer(t)
	resp, b = do2(t, "POST", plain.URL+"/v1/responses", testKey, `{"model":"up/ok","input":"hi","tools":[{"type":"mcp","server_label":"docs"}]}`, nil)
	if resp.StatusCode != 400 || !strings.Contains(string(b), "MCP servers are not configured") {
		t.Fatalf("no MCP servers: %d %s", resp.StatusCode, b)
	}
}
