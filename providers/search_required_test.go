package providers_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestSearchRequired: a search asked for as required (a Responses tool_choice of a web
// search tool) forces it where the provider can be made to search — Claude's tool_choice
// names its web_search tool (beside functions too, which are then not called), OpenAI's
// Responses API allows the web_search tool alone, required — and leaves it offered, as
// asked before, when not required.
func TestSearchRequired(t *testing.T) {
	ctx := context.Background()
	msgs := []providers.Message{{Role: "user", Content: "News?"}}
	fn := []providers.Tool{{Name: "f", Parameters: json.RawMessage(`{"type":"object"}`)}}
	none := &providers.ToolChoice{Mode: providers.ToolChoiceNone}
	jsonOf := func(v any) string { b, _ := json.Marshal(v); return string(b) }

	claude := newFakeUpstream(t, "application/json", `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","stop_reason":"end_turn","content":[{"type":"text","text":"ok"}],"usage":{"input_tokens":10,"output_tokens":2}}`)
	for _, c := range []struct {
		name string
		req  providers.Request
		want string
	}{
		{"required", providers.Request{Search: true, SearchOptions: &providers.SearchOptions{Required: true}}, `{"name":"web_search","type":"tool"}`},
		{"required beside functions", providers.Request{Search: true, SearchOptions: &providers.SearchOptions{Required: true, MaxUses: 2}, Tools: fn, ToolChoice: none}, `{"name":"web_search","type":"tool"}`},
		{"offered", providers.Request{Search: true}, `null`},
	} {
		req := c.req
		req.Model, req.Messages = "claude-sonnet-4-5", msgs
		if _, err := claude.provider(t, providers.FormatAnthropic).Complete(ctx, &req); err != nil {
			t.Fatal(err)
		}
		if got := jsonOf(claude.last(t)["tool_choice"]); got != c.want {
			t.Errorf("Claude %s: tool_choice %s, want %s", c.name, got, c.want)
		}
	}

	openai := newFakeOpenAIAPI(t, responsesAnswer)
	p := openai.provider(t, "openai", providers.ResponsesAlways)
	forced := `{"mode":"required","tools":[{"type":"web_search"}],"type":"allowed_tools"}`
	for _, c := range []struct {
		name string
		req  providers.Request
		want string
	}{
		{"required", providers.Request{Search: true, SearchOptions: &providers.SearchOptions{Required: true}}, forced},
		{"required beside functions", providers.Request{Search: true, SearchOptions: &providers.SearchOptions{Required: true}, Tools: fn, ToolChoice: none}, forced},
		{"offered", providers.Request{Search: true}, `null`},
	} {
		req := c.req
		req.Model, req.Messages = "gpt-5", msgs
		if _, err := p.Complete(ctx, &req); err != nil {
			t.Fatal(err)
		}
		path, body := openai.lastCall(t)
		if got := jsonOf(body["tool_choice"]); path != "/v1/responses" || got != c.want {
			t.Errorf("OpenAI %s: %s tool_choice %s, want %s", c.name, path, got, c.want)
		}
	}
}
