package providers_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestSingleToolCallAsked: a caller that reads one tool call only (SingleToolCall, the
// legacy functions API) gets parallel_tool_calls false from OpenAI's own API, the Responses
// API and compatible servers known to take it, and disable_parallel_tool_use from
// Anthropic and from Claude 4.5 and later on Bedrock; an unknown compatible server and OpenAI's o-series reasoning models, which
// refuse the field, get none — nor the caller's own parallel_tool_calls; a caller's
// parallel_tool_calls true wins over the hint.
func TestSingleToolCallAsked(t *testing.T) {
	tools := []providers.Tool{{Name: "weather"}, {Name: "time"}}
	msgs := []providers.Message{{Role: "user", Content: "Weather?"}}
	yes, no := true, false
	for _, tc := range []struct {
		name, provider, model string
		parallel              *bool
		want                  any // parallel_tool_calls sent; nil for none
	}{
		{"openai", "openai", "gpt-4o-mini", nil, false},
		{"openai caller's true wins", "openai", "gpt-4o-mini", &yes, true},
		{"openai o3-mini refuses it", "openai", "o3-mini", nil, nil},
		{"openai o1 refuses the caller's too", "openai", "o1", &no, nil},
		{"gpt-5 takes it", "openai", "gpt-5", nil, false},
		{"groq", "groq", "llama-3.3-70b-versatile", nil, false},
		{"unknown compatible server", "local", "qwen3", nil, nil},
		{"unknown compatible server, the caller's own", "local", "qwen3", &no, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeOpenAIAPI(t, responsesAnswer)
			req := &providers.Request{Model: tc.model, Messages: msgs, Tools: tools, SingleToolCall: true, ParallelToolCalls: tc.parallel}
			if _, err := f.provider(t, tc.provider, providers.ResponsesNever).Complete(context.Background(), req); err != nil {
				t.Fatal(err)
			}
			path, body := f.lastCall(t)
			got, sent := body["parallel_tool_calls"]
			if path != "/v1/chat/completions" || sent != (tc.want != nil) || sent && got != tc.want {
				t.Errorf("%s got parallel_tool_calls %v (sent %v), want %v: %v", path, got, sent, tc.want, body)
			}
		})
	}

	t.Run("without tools nothing is sent", func(t *testing.T) {
		f := newFakeOpenAIAPI(t, responsesAnswer)
		req := &providers.Request{Model: "gpt-4o-mini", Messages: msgs, SingleToolCall: true}
		if _, err := f.provider(t, "openai", providers.ResponsesNever).Complete(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		if _, body := f.lastCall(t); body["parallel_tool_calls"] != nil {
			t.Errorf("parallel_tool_calls sent without tools: %v", body)
		}
	})

	t.Run("responses API", func(t *testing.T) {
		f := newFakeOpenAIAPI(t, responsesAnswer)
		req := &providers.Request{Model: "o3", Messages: msgs, Tools: tools, SingleToolCall: true}
		if _, err := f.provider(t, "openai", providers.ResponsesAlways).Complete(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		if path, body := f.lastCall(t); path != "/v1/responses" || body["parallel_tool_calls"] != false {
			t.Errorf("%s got parallel_tool_calls %v, want false: %v", path, body["parallel_tool_calls"], body)
		}
	})

	// Bedrock: Claude 4.5 and later get additionalModelRequestFields.tool_choice (the
	// wire shape is TestFixtures/bedrock/one-tool-call); parallel calls allowed, tool_choice
	// none, older Claude and other models get nothing.
	t.Run("bedrock", func(t *testing.T) {
		var body map[string]any
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body = nil
			json.NewDecoder(r.Body).Decode(&body)
			io.WriteString(w, converseHello)
		}))
		defer srv.Close()
		p := newProvider(t, providers.FormatBedrock, srv.URL, nil)
		const sonnet45 = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
		for _, tc := range []struct {
			name, model string
			parallel    *bool
			choice      *providers.ToolChoice
			want        any // tool_choice's disable_parallel_tool_use; nil for no tool_choice
		}{
			{"claude 4.5, the hint", sonnet45, nil, nil, true},
			{"claude opus 4.6, required", "global.anthropic.claude-opus-4-6-v1", nil, &providers.ToolChoice{Mode: providers.ToolChoiceRequired}, true},
			{"caller's true wins", sonnet45, &yes, nil, nil},
			{"tool_choice none", sonnet45, &no, &providers.ToolChoice{Mode: providers.ToolChoiceNone}, nil},
			{"claude opus 4.1", "anthropic.claude-opus-4-1-20250805-v1:0", &no, nil, nil},
			{"nova", "amazon.nova-pro-v1:0", &no, nil, nil},
		} {
			req := &providers.Request{Model: tc.model, Messages: msgs, Tools: tools, ToolChoice: tc.choice, SingleToolCall: true, ParallelToolCalls: tc.parallel}
			if _, err := p.Complete(context.Background(), req); err != nil {
				t.Fatal(err)
			}
			extra, _ := body["additionalModelRequestFields"].(map[string]any)
			choice, sent := extra["tool_choice"].(map[string]any)
			if sent != (tc.want != nil) || sent && choice["disable_parallel_tool_use"] != tc.want {
				t.Errorf("%s: additionalModelRequestFields %v, want disable_parallel_tool_use %v", tc.name, extra, tc.want)
			}
		}
	})

	t.Run("anthropic", func(t *testing.T) {
		up := newFakeUpstream(t, "application/json", testdata(t, "anthropic/docs-tool_use_response.json"))
		p := up.provider(t, providers.FormatAnthropic)
		for _, choice := range []*providers.ToolChoice{nil, {Mode: providers.ToolChoiceFunction, Name: "weather"}} {
			req := &providers.Request{Model: "claude-sonnet-4-5", Messages: msgs, Tools: tools, ToolChoice: choice, SingleToolCall: true}
			if _, err := p.Complete(context.Background(), req); err != nil {
				t.Fatal(err)
			}
			tcj, _ := up.last(t)["tool_choice"].(map[string]any)
			if tcj["disable_parallel_tool_use"] != true {
				t.Errorf("choice %+v: tool_choice %v, want disable_parallel_tool_use", choice, tcj)
			}
		}
	})
}
