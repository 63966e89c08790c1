package completions

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestResponsesToolChoiceBuiltinTools: a Responses tool_choice naming a built-in tool (as
// OpenAI's SDKs send it: openai-go v1.12.0 responses.ToolChoiceTypes and ToolChoiceMcp)
// is taken for the tools the gateway has — a web search tool's makes the model search
// (its functions are not called, and the search is asked for as required), an mcp one
// names a server of the request's mcp tools — and refused naming tool_choice, with the
// tools that are supported, for the others.
func TestResponsesToolChoiceBuiltinTools(t *testing.T) {
	const fn = `{"type":"function","name":"f","parameters":{"type":"object"}}`
	for _, choice := range []string{`{"type":"web_search_preview"}`, `{"type":"web_search_preview_2025_03_11"}`, `{"type":"web_search"}`} {
		for _, tools := range []string{`[{"type":"web_search_preview"}]`, `[` + fn + `,{"type":"web_search"}]`} {
			_, req := responsesAsRequest(t, `{"model":"a/m","input":"news?","tools":`+tools+`,"tool_choice":`+choice+`}`)
			if !req.searchIfAvailable || req.searchOptions == nil || !req.searchOptions.Required {
				t.Errorf("%s with %s: search offered %v, options %+v", choice, tools, req.searchIfAvailable, req.searchOptions)
			}
			if strings.Contains(tools, `"f"`) && (req.ToolChoice == nil || req.ToolChoice.Mode != providers.ToolChoiceNone) {
				t.Errorf("%s with %s: functions' tool choice %+v, want none", choice, tools, req.ToolChoice)
			}
		}
	}
	// The choice round-trips (a stored response's request is read back).
	var c ResponsesToolChoice
	if err := json.Unmarshal([]byte(`{"type":"mcp","server_label":"docs","name":"search"}`), &c); err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(c); string(b) != `{"type":"mcp","name":"search","server_label":"docs"}` {
		t.Errorf("mcp choice marshals as %s", b)
	}
	if b, _ := json.Marshal(ResponsesToolChoice{Mode: "web_search_preview"}); string(b) != `{"type":"web_search_preview"}` {
		t.Errorf("web search choice marshals as %s", b)
	}

	for _, c := range []struct{ body, field, says string }{
		{`"tools":[` + fn + `],"tool_choice":{"type":"web_search_preview"}`, "tool_choice.type", "no web search tool"},
		{`"tools":[{"type":"mcp","server_label":"docs"}],"tool_choice":{"type":"mcp"}`, "tool_choice.server_label", "required"},
		{`"tools":[{"type":"mcp","server_label":"docs"}],"tool_choice":{"type":"mcp","server_label":"wiki"}`, "tool_choice.server_label", `"wiki"`},
		{`"tools":[` + fn + `],"tool_choice":{"type":"file_search"}`, "tool_choice", "web search and mcp only"},
		{`"tools":[` + fn + `],"tool_choice":{"type":"code_interpreter"}`, "tool_choice", "web search and mcp only"},
		{`"tools":[` + fn + `],"tool_choice":{"type":"image_generation"}`, "tool_choice", "web search and mcp only"},
		{`"tools":[` + fn + `],"tool_choice":{"type":"computer_use_preview"}`, "tool_choice", "web search and mcp only"},
	} {
		var r ResponsesRequest
		if err := json.Unmarshal([]byte(`{"model":"a/m","input":"x",`+c.body+`}`), &r); err != nil {
			t.Fatal(err)
		}
		_, err := r.ToChatRequest()
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != c.field || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v, want a 400 at %s saying %q", c.body, err, c.field, c.says)
		}
	}
}

// TestMCPToolChoiceForcesFirstRound: tool_choice {"type":"mcp","server_label","name"}
// makes the model call that tool of the server in the run's first round (any of the
// server's tools without a name), and leaves the next round to the model, which answers.
func TestMCPToolChoiceForcesFirstRound(t *testing.T) {
	for _, c := range []struct{ choice, wantFirst string }{
		{`{"type":"mcp","server_label":"docs","name":"search"}`, "function docs__search"},
		{`{"type":"mcp","server_label":"docs"}`, "allowed docs__search,docs__delete"},
	} {
		h, mcp := newMCPHarness(t, true)
		h.a.on("m", step{call: &providers.ToolCall{ID: "call_1", Name: "docs__search", Arguments: `{"q":"go"}`}},
			step{text: "Found it."})
		o, err := respondMCP(t, h.g, Scope{Owner: "alice"}, `{"model":"a/m","input":"find go",`+mcpNever+`,"tool_choice":`+c.choice+`}`)
		if err != nil {
			t.Fatal(err)
		}
		if got := itemTypes(o); got != "mcp_list_tools,mcp_call,message" || mcp.callCount() != 1 {
			t.Fatalf("%s: output %s, %d calls", c.choice, got, mcp.callCount())
		}
		first, second := h.a.requests[0], h.a.requests[1]
		got := "none"
		switch tc := first.ToolChoice; {
		case tc != nil && tc.Mode == providers.ToolChoiceFunction:
			got = "function " + tc.Name
		case tc != nil && tc.Mode == providers.ToolChoiceRequired:
			var names []string
			for _, t := range first.Tools {
				names = append(names, t.Name)
			}
			got = "allowed " + strings.Join(names, ",")
		}
		if got != c.wantFirst {
			t.Errorf("%s: first round's choice %s (%+v), want %s", c.choice, got, first.ToolChoice, c.wantFirst)
		}
		if second.ToolChoice != nil && second.ToolChoice.Mode != providers.ToolChoiceAuto {
			t.Errorf("%s: second round's choice %+v, want the model's", c.choice, second.ToolChoice)
		}
	}

	h, _ := newMCPHarness(t, true)
	_, err := respondMCP(t, h.g, Scope{Owner: "alice"}, `{"model":"a/m","input":"x",`+mcpNever+`,"tool_choice":{"type":"mcp","server_label":"docs","name":"nope"}}`)
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Field != "tool_choice.name" {
		t.Errorf("a tool the server does not list: %v", err)
	}
}
