package completions

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// BenchmarkResponsesToolRound compares a plain function-call round (the model calls the
// client's function: one gateway call) with an MCP round (the model calls an MCP tool: the
// gateway lists the tools, calls the tool of fakeMCPTools and asks the model again), both
// against the scripted in-memory provider, so the figure is the gateway's own work.
func BenchmarkResponsesToolRound(b *testing.B) {
	run := func(b *testing.B, body string, mcp bool) {
		h := newHarness(&testing.T{}, func(o *Options) { o.MCP = &fakeMCPTools{} })
		name := "weather"
		if mcp {
			name = "docs__search"
		}
		h.a.on("m", step{call: &providers.ToolCall{ID: "c1", Name: name, Arguments: `{"q":"go"}`}}, step{text: "Done."})
		b.ReportAllocs()
		for b.Loop() {
			h.a.mu.Lock()
			h.a.calls["m"] = 0
			h.a.requests = h.a.requests[:0]
			h.a.mu.Unlock()
			var r ResponsesRequest
			if err := json.Unmarshal([]byte(body), &r); err != nil {
				b.Fatal(err)
			}
			o := NewResponseObject(&r, "resp_bench", time.Now())
			if mcp {
				if err := h.g.RespondWithMCP(context.Background(), Scope{Owner: "o"}, &r, o, MCPResponseOptions{}); err != nil {
					b.Fatal(err)
				}
				continue
			}
			c, _ := r.ToChatRequest()
			req, _ := c.ToRequest()
			resp, err := h.g.Complete(context.Background(), Scope{Owner: "o"}, req)
			if err != nil {
				b.Fatal(err)
			}
			o.Complete(resp)
		}
	}
	b.Run("function_call", func(b *testing.B) {
		run(b, `{"model":"a/m","input":"hi","tools":[{"type":"function","name":"weather","parameters":{"type":"object"}}]}`, false)
	})
	b.Run("mcp", func(b *testing.B) {
		run(b, `{"model":"a/m","input":"hi","tools":[{"type":"mcp","server_label":"docs","require_approval":"never"}]}`, true)
	})
}
