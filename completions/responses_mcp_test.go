package completions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openai/openai-go/responses"
	"github.com/switchyard-ai/switchyard/providers"
)

// fakeMCPTools is an in-memory MCPTools for tests: server "docs" with tools search and
// delete; every call answers "result of <tool> <arguments>".
type fakeMCPTools struct {
	mu    sync.Mutex
	lists int
	calls []string // "server/tool arguments"
}

func (f *fakeMCPTools) Servers() []string { return []string{"docs", "other"} }

func (f *fakeMCPTools) ListTools(ctx context.Context, server string) ([]MCPTool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lists++
	return []MCPTool{
		{Name: "search", Description: "Search the docs", InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`),
			Annotations: json.RawMessage(`{"readOnlyHint":true}`)},
		{Name: "delete", Description: "Delete a page", InputSchema: json.RawMessage(`{"type":"object"}`)},
	}, nil
}

func (f *fakeMCPTools) CallTool(ctx context.Context, server, tool string, arguments json.RawMessage) (MCPResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, server+"/"+tool+" "+string(arguments))
	return MCPResult{Text: "result of " + tool + " " + string(arguments)}, nil
}

func (f *fakeMCPTools) callCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

func newMCPHarness(t *testing.T, withMCP bool) (*harness, *fakeMCPTools) {
	mcp := &fakeMCPTools{}
	h := newHarness(t, func(o *Options) {
		if withMCP {
			o.MCP = mcp
		}
	})
	return h, mcp
}

// respondMCP answers body for owner as the server does for a request with mcp tools, and
// stores the answer.
func respondMCP(t *testing.T, g *Gateway, scope Scope, body string) (*ResponseObject, error) {
	t.Helper()
	var r ResponsesRequest
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := g.ContinueResponse(ctx, scope.Owner, &r); err != nil {
		return nil, err
	}
	if _, err := r.ToChatRequest(); err != nil {
		return nil, err
	}
	o := NewResponseObject(&r, NewResponseID(fmt.Sprint(time.Now().UnixNano())), time.Now())
	if err := g.RespondWithMCP(ctx, scope, &r, o, MCPResponseOptions{}); err != nil {
		return nil, err
	}
	if err := g.StoreResponse(ctx, scope.Owner, &r, o); err != nil {
		t.Fatal(err)
	}
	return o, nil
}

func itemTypes(o *ResponseObject) string {
	var ts []string
	for _, it := range o.Output {
		ts = append(ts, it.Type)
	}
	return strings.Join(ts, ",")
}

const mcpNever = `"tools":[{"type":"mcp","server_label":"docs","require_approval":"never"}]`

// TestMCPToolCallThenAnswer: the model calls an MCP tool, the gateway runs it and asks the
// model again with the result; the response has the list, the call with its output and
// the answer, the usage of both rounds, and openai-go reads its items.
func TestMCPToolCallThenAnswer(t *testing.T) {
	h, mcp := newMCPHarness(t, true)
	h.a.on("m", step{call: &providers.ToolCall{ID: "call_1", Name: "docs__search", Arguments: `{"q":"go"}`}, usage: providers.Usage{PromptTokens: 10, CompletionTokens: 2}},
		step{text: "Found it.", usage: providers.Usage{PromptTokens: 20, CompletionTokens: 3}})
	o, err := respondMCP(t, h.g, Scope{Owner: "alice"}, `{"model":"a/m","input":"find go",`+mcpNever+`}`)
	if err != nil {
		t.Fatal(err)
	}
	if got := itemTypes(o); got != "mcp_list_tools,mcp_call,message" || o.Status != "completed" {
		t.Fatalf("output %s status %s", got, o.Status)
	}
	call := o.Output[1]
	if call.Output == nil || *call.Output != `result of search {"q":"go"}` || call.ServerLabel != "docs" || call.Name != "search" || *call.Arguments != `{"q":"go"}` {
		t.Fatalf("mcp_call %+v", call)
	}
	if mcp.callCount() != 1 || mcp.calls[0] != `docs/search {"q":"go"}` {
		t.Fatalf("calls %v", mcp.calls)
	}
	if o.Usage.InputTokens != 30 || o.Usage.OutputTokens != 5 || len(o.Switchyard.Attempts) != 2 {
		t.Fatalf("usage %+v attempts %d, want both rounds", o.Usage, len(o.Switchyard.Attempts))
	}
	first := h.a.requests[0]
	if len(first.Tools) != 2 || first.Tools[0].Name != "docs__search" {
		t.Fatalf("first round tools %+v", first.Tools)
	}
	last := h.a.lastRequest().Messages
	if n := len(last); n != 3 || last[1].Role != "assistant" || len(last[1].ToolCalls) != 1 || last[2].Role != "tool" || last[2].Content != `result of search {"q":"go"}` {
		t.Fatalf("second round messages %+v", last)
	}

	b, _ := json.Marshal(o)
	var parsed responses.Response
	if err := json.Unmarshal(b, &parsed); err != nil {
		t.Fatal(err)
	}
	lt := parsed.Output[0].AsMcpListTools()
	mc := parsed.Output[1].AsMcpCall()
	if lt.ServerLabel != "docs" || len(lt.Tools) != 2 || lt.Tools[0].Name != "search" || mc.Output != `result of search {"q":"go"}` || mc.Name != "search" ||
		parsed.OutputText() != "Found it." {
		t.Fatalf("openai-go read list %+v call %+v text %q", lt, mc, parsed.OutputText())
	}

	// A continuation reuses the list (no new mcp_list_tools item, no second listing) and
	// gives the model the earlier call and its result.
	h.a.on("m", step{text: "Again."})
	next, err := respondMCP(t, h.g, Scope{Owner: "alice"}, `{"model":"a/m","previous_response_id":"`+o.ID+`","input":"more",`+mcpNever+`}`)
	if err != nil {
		t.Fatal(err)
	}
	if itemTypes(next) != "message" || mcp.lists != 1 {
		t.Fatalf("continuation output %s lists %d", itemTypes(next), mcp.lists)
	}
	msgs := h.a.lastRequest().Messages
	if len(msgs) != 5 || msgs[1].ToolCalls[0].Name != "docs__search" || msgs[2].Content != `result of search {"q":"go"}` {
		t.Fatalf("continuation messages %+v", msgs)
	}
}

// TestMCPApprovalFlow: by default a call needs approval: the response ends with an
// mcp_approval_request and nothing is run; approving it by previous_response_id runs it
// and the model answers; declining it tells the model so and runs nothing.
func TestMCPApprovalFlow(t *testing.T) {
	for _, approve := range []bool{true, false} {
		h, mcp := newMCPHarness(t, true)
		h.a.on("m", step{call: &providers.ToolCall{ID: "call_1", Name: "docs__delete", Arguments: `{"page":"x"}`}})
		tools := `"tools":[{"type":"mcp","server_label":"docs"}]`
		o, err := respondMCP(t, h.g, Scope{Owner: "alice"}, `{"model":"a/m","input":"delete x",`+tools+`}`)
		if err != nil {
			t.Fatal(err)
		}
		if itemTypes(o) != "mcp_list_tools,mcp_approval_request" || mcp.callCount() != 0 || o.Status != "completed" {
			t.Fatalf("first: %s calls %d status %s", itemTypes(o), mcp.callCount(), o.Status)
		}
		reqID := o.Output[1].ID
		h.a.on("m", step{text: "Done."})
		next, err := respondMCP(t, h.g, Scope{Owner: "alice"}, fmt.Sprintf(`{"model":"a/m","previous_response_id":%q,
			"input":[{"type":"mcp_approval_response","approval_request_id":%q,"approve":%v}],%s}`, o.ID, reqID, approve, tools))
		if err != nil {
			t.Fatal(err)
		}
		if itemTypes(next) != "mcp_call,message" || next.Output[0].ApprovalRequestID != reqID || mcp.lists != 1 {
			t.Fatalf("approve %v: %s %+v lists %d", approve, itemTypes(next), next.Output[0], mcp.lists)
		}
		msgs := h.a.lastRequest().Messages
		result := msgs[len(msgs)-1]
		if approve {
			if mcp.callCount() != 1 || result.Content != `result of delete {"page":"x"}` {
				t.Fatalf("approved: calls %v result %+v", mcp.calls, result)
			}
		} else if mcp.callCount() != 0 || next.Output[0].Error == nil || !strings.Contains(result.Content, "declined") {
			t.Fatalf("declined: calls %v item %+v result %+v", mcp.calls, next.Output[0], result)
		}
		_, err = respondMCP(t, h.g, Scope{Owner: "alice"}, `{"model":"a/m","input":[{"role":"user","content":"hi"},{"type":"mcp_approval_response","approval_request_id":"mcpr_nope","approve":true}],`+tools+`}`)
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != "input[1].approval_request_id" {
			t.Fatalf("unknown approval request: %v", err)
		}
	}
}

// TestMCPAllowedToolsAndUserTools: allowed_tools limits what the model is offered; a call
// of the request's own function comes back to the client as a function_call and ends the
// response.
func TestMCPAllowedToolsAndUserTools(t *testing.T) {
	h, mcp := newMCPHarness(t, true)
	h.a.on("m", step{call: &providers.ToolCall{ID: "call_9", Name: "weather", Arguments: `{}`}})
	o, err := respondMCP(t, h.g, Scope{Owner: "alice"}, `{"model":"a/m","input":"hi","tools":[
		{"type":"mcp","server_label":"docs","allowed_tools":{"tool_names":["search"]},"require_approval":"never"},
		{"type":"function","name":"weather","parameters":{"type":"object"}}]}`)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range h.a.requests[0].Tools {
		names = append(names, tl.Name)
	}
	if strings.Join(names, ",") != "weather,docs__search" {
		t.Fatalf("offered %v, want the function and the allowed tool only", names)
	}
	if itemTypes(o) != "mcp_list_tools,function_call" || o.Output[1].CallID != "call_9" || mcp.callCount() != 0 || h.a.callCount("m") != 1 {
		t.Fatalf("output %s calls %d upstream %d", itemTypes(o), mcp.callCount(), h.a.callCount("m"))
	}
}

// TestMCPRefusals: a server_url of the caller's, a server the gateway does not configure,
// one the scope may not use and a gateway without MCP servers are refused before any call.
func TestMCPRefusals(t *testing.T) {
	h, mcp := newMCPHarness(t, true)
	cases := []struct {
		tools string
		scope Scope
		field string
		is    error
	}{
		{`[{"type":"mcp","server_label":"docs","server_url":"http://169.254.169.254/"}]`, Scope{}, "tools[0].server_url", ErrInvalid},
		{`[{"type":"mcp","server_label":"nope"}]`, Scope{}, "tools[0].server_label", ErrInvalid},
		{`[{"type":"mcp","server_label":"docs","server_url":"litellm_proxy"}]`, Scope{MCPServers: []string{"other"}}, "", ErrMCPServerNotAllowed},
		{`[{"type":"mcp","server_label":"docs","require_approval":"sometimes"}]`, Scope{}, "tools[0].require_approval", ErrInvalid},
	}
	for _, c := range cases {
		c.scope.Owner = "alice"
		_, err := respondMCP(t, h.g, c.scope, `{"model":"a/m","input":"hi","tools":`+c.tools+`}`)
		var ve *ValidationError
		if !errors.Is(err, c.is) || c.field != "" && (!errors.As(err, &ve) || ve.Field != c.field) {
			t.Errorf("%s: %v, want %v on %s", c.tools, err, c.is, c.field)
		}
	}
	if h.a.callCount("m") != 0 || mcp.lists != 0 {
		t.Fatalf("refused requests reached upstream %d or listed %d", h.a.callCount("m"), mcp.lists)
	}
	plain, _ := newMCPHarness(t, false)
	_, err := respondMCP(t, plain.g, Scope{Owner: "alice"}, `{"model":"a/m","input":"hi",`+mcpNever+`}`)
	if !errors.Is(err, ErrMCPNotConfigured) || !strings.Contains(err.Error(), "MCP servers are not configured") {
		t.Fatalf("no MCP servers: %v", err)
	}
}

// TestMCPMaxToolCalls: a model that never stops calling is stopped by max_tool_calls, and
// without it by the gateway's bound on rounds: the response is incomplete.
func TestMCPMaxToolCalls(t *testing.T) {
	h, mcp := newMCPHarness(t, true)
	h.a.on("m", step{call: &providers.ToolCall{ID: "c", Name: "docs__search", Arguments: `{}`}})
	o, err := respondMCP(t, h.g, Scope{Owner: "alice"}, `{"model":"a/m","input":"loop","max_tool_calls":2,`+mcpNever+`}`)
	if err != nil {
		t.Fatal(err)
	}
	if o.Status != "incomplete" || o.IncompleteDetails.Reason != "max_tool_calls" || mcp.callCount() != 2 || h.a.callCount("m") != 3 {
		t.Fatalf("status %s %+v calls %d rounds %d", o.Status, o.IncompleteDetails, mcp.callCount(), h.a.callCount("m"))
	}
	h2, mcp2 := newMCPHarness(t, true)
	h2.a.on("m", step{call: &providers.ToolCall{ID: "c", Name: "docs__search", Arguments: `{}`}})
	o, err = respondMCP(t, h2.g, Scope{Owner: "alice"}, `{"model":"a/m","input":"loop",`+mcpNever+`}`)
	if err != nil {
		t.Fatal(err)
	}
	if o.Status != "incomplete" || h2.a.callCount("m") != maxMCPRounds || mcp2.callCount() != maxMCPRounds-1 {
		t.Fatalf("unbounded request: status %s rounds %d calls %d", o.Status, h2.a.callCount("m"), mcp2.callCount())
	}
}

// TestMCPStreamEvents: a streamed response sends the list's, the call's and the answer's
// events in OpenAI's order, and the final response has them all.
func TestMCPStreamEvents(t *testing.T) {
	h, _ := newMCPHarness(t, true)
	h.a.on("m", step{call: &providers.ToolCall{ID: "call_1", Name: "docs__search", Arguments: `{"q":"go"}`}, argPieces: []string{`{"q":`, `"go"}`}},
		step{text: "Found it."})
	var r ResponsesRequest
	if err := json.Unmarshal([]byte(`{"model":"a/m","input":"find","stream":true,`+mcpNever+`}`), &r); err != nil {
		t.Fatal(err)
	}
	o := NewResponseObject(&r, "resp_x", time.Now())
	rec := httptest.NewRecorder()
	if err := h.g.StreamWithMCP(context.Background(), Scope{Owner: "alice"}, &r, o, rec, MCPResponseOptions{}); err != nil {
		t.Fatal(err)
	}
	var names []string
	var final responses.Response
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var ev struct {
			Type     string          `json:"type"`
			Response json.RawMessage `json:"response"`
		}
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatal(err)
		}
		names = append(names, ev.Type)
		if ev.Type == "response.completed" {
			if err := json.Unmarshal(ev.Response, &final); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := "response.created,response.in_progress," +
		"response.output_item.added,response.mcp_list_tools.in_progress,response.mcp_list_tools.completed,response.output_item.done," +
		"response.output_item.added,response.mcp_call_arguments.delta,response.mcp_call_arguments.done,response.mcp_call.in_progress," +
		"response.mcp_call.completed,response.output_item.done," +
		"response.output_item.added,response.content_part.added,response.output_text.delta,response.output_text.delta," +
		"response.output_text.done,response.content_part.done,response.output_item.done,response.completed"
	if got := strings.Join(names, ","); got != want {
		t.Fatalf("events\n got %s\nwant %s", got, want)
	}
	if len(final.Output) != 3 || final.Output[1].AsMcpCall().Output != `result of search {"q":"go"}` || final.OutputText() != "Found it." {
		t.Fatalf("final %s", rec.Body.String())
	}
}
