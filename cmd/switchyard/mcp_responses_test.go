package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/switchyard-ai/switchyard/mcpgateway/mcpgatewaytest"
)

// toolCallingUpstream is a scripted OpenAI upstream: asked with tools and no tool result
// yet, it calls the first tool with args; given a tool result, it answers "the tool said
// <result>". calls counts its chat requests.
func toolCallingUpstream(t *testing.T, args string, calls *atomic.Int64) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		var req struct {
			Model    string `json:"model"`
			Messages []struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
			Tools []struct {
				Function struct {
					Name string `json:"name"`
				} `json:"function"`
			} `json:"tools"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		msg := map[string]any{"role": "assistant", "content": "no tools offered"}
		finish := "stop"
		last := req.Messages[len(req.Messages)-1]
		switch {
		case last.Role == "tool":
			var text string
			if json.Unmarshal(last.Content, &text) != nil {
				text = string(last.Content)
			}
			msg["content"] = "the tool said " + text
		case len(req.Tools) > 0:
			msg = map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
				"id": "call_1", "type": "function", "function": map[string]any{"name": req.Tools[0].Function.Name, "arguments": args}}}}
			finish = "tool_calls"
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"id": "chatcmpl-fake", "object": "chat.completion", "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "finish_reason": finish, "message": msg}},
			"usage":   map[string]int{"prompt_tokens": 7, "completion_tokens": 5, "total_tokens": 12}})
	}))
	t.Cleanup(ts.Close)
	return ts
}

// TestServeMCPToolsOnResponses: with --mcp-servers, /v1/responses runs OpenAI's mcp tool
// against the configured server through the same MCP gateway as /mcp (a real streamable
// HTTP MCP server, a scripted model), and a virtual key's mcp_servers bound it.
func TestServeMCPToolsOnResponses(t *testing.T) {
	upstreamMCP := mcpgatewaytest.StartFakeHTTP(t, "docs")
	cfg := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`{"mcp_servers":{"docs":{"url":%q},"other":{"url":%q}}}`, upstreamMCP.URL, upstreamMCP.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	var modelCalls atomic.Int64
	base, stop := serveUntil(t, toolCallingUpstream(t, `{"a":2,"b":40}`, &modelCalls).URL, "--mcp-servers", cfg)
	defer stop()

	body := `{"model":"openai/gpt-4o-mini","input":"add 2 and 40","tools":[{"type":"mcp","server_label":"docs","allowed_tools":["add"],"require_approval":"never"}]}`
	var out struct {
		Status string `json:"status"`
		Output []struct {
			Type   string `json:"type"`
			Name   string `json:"name"`
			Output string `json:"output"`
			Tools  []struct {
				Name string `json:"name"`
			} `json:"tools"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"output"`
	}
	if code := postJSON(t, base+"/v1/responses", "k", body, &out); code != 200 {
		t.Fatalf("/v1/responses with an mcp tool: %d %+v", code, out)
	}
	var kinds []string
	for _, o := range out.Output {
		kinds = append(kinds, o.Type)
	}
	if len(out.Output) != 3 || kinds[0] != "mcp_list_tools" || len(out.Output[0].Tools) != len(mcpgatewaytest.FakeTools) ||
		kinds[1] != "mcp_call" || out.Output[1].Name != "add" || out.Output[1].Output != "42" ||
		kinds[2] != "message" || out.Output[2].Content[0].Text != "the tool said 42" {
		t.Fatalf("output %v: %+v", kinds, out.Output)
	}
	if n := upstreamMCP.Calls.Load(); n != 1 {
		t.Errorf("the MCP server answered %d calls, want 1", n)
	}
	if n := modelCalls.Load(); n != 2 {
		t.Errorf("the model was asked %d times, want 2", n)
	}

	// A virtual key held to "other" may not use "docs": refused before any model call, as a
	// server that does not exist is (review 22o: the answer does not tell a key which server
	// names exist), listing only the servers the key may use.
	var vk struct{ Key string }
	if code := postJSON(t, base+"/api/v1/keys", "k", `{"name":"held","mcp_servers":["other"]}`, &vk); code != 200 && code != 201 {
		t.Fatalf("issue key: %d", code)
	}
	var refusal struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	before := modelCalls.Load()
	if code := postJSON(t, base+"/v1/responses", vk.Key, body, &refusal); code != 400 || !strings.Contains(refusal.Error.Message, "server_label") ||
		!strings.Contains(refusal.Error.Message, "other") || strings.Contains(refusal.Error.Message, "docs") {
		t.Fatalf("a key held to other: %d %+v, want 400 naming server_label and only other", code, refusal)
	}
	var unknown struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if code := postJSON(t, base+"/v1/responses", vk.Key, strings.Replace(body, `"docs"`, `"nope"`, 1), &unknown); code != 400 || unknown.Error.Message != refusal.Error.Message {
		t.Fatalf("an unknown server: %d %+v, want the forbidden one's answer %q", code, unknown, refusal.Error.Message)
	}
	if modelCalls.Load() != before || upstreamMCP.Calls.Load() != 1 {
		t.Error("the refused request reached the model or the MCP server")
	}
	if code := postJSON(t, base+"/v1/responses", vk.Key, strings.Replace(body, `"docs"`, `"other"`, 1), &out); code != 200 || upstreamMCP.Calls.Load() != 2 {
		t.Fatalf("the same key on other: %d, MCP calls %d", code, upstreamMCP.Calls.Load())
	}
}
