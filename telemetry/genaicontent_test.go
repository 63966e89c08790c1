package telemetry

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
)

// chatRecord is an answered chat request: a system prompt, a user turn with an image, an
// earlier tool call and its result, and an answer with text and a tool call.
func chatRecord() completions.RequestRecord {
	temp, topP := 0.3, 0.9
	img := "data:image/png;base64," + strings.Repeat("iVBORw0KGgo", 300)
	prompt := &providers.Request{
		Messages: []providers.Message{
			{Role: "system", Content: "You are terse."},
			{Role: "user", Content: "What is in this picture?", Parts: []providers.Part{{Text: "What is in this picture?"}, {Image: &providers.Image{URL: img}}}},
			{Role: "assistant", ToolCalls: []providers.ToolCall{{ID: "call_1", Name: "lookup", Arguments: `{"q":"cat"}`}}},
			{Role: "tool", ToolCallID: "call_1", Content: "a cat, probably"},
		},
		Temperature: &temp, TopP: &topP, MaxTokens: 200,
		Tools: []providers.Tool{{Name: "lookup", Description: "looks things up", Parameters: json.RawMessage(`{"type":"object"}`)}},
	}
	answer := &completions.Response{Provider: "up", Model: "m1", FinishReason: "tool_calls",
		Message:   completions.AssistantMessage{Role: "assistant", Content: []completions.ContentBlock{{Type: "text", Text: "It is a cat."}}},
		ToolCalls: []providers.ToolCall{{ID: "call_2", Name: "lookup", Arguments: `{"q":"breed"}`}}}
	return completions.RequestRecord{Owner: "key_0011", Outcome: completions.RequestOK, Provider: "up", Model: "up/m1",
		Start: time.Unix(1700000000, 0), Latency: time.Second, ResponseID: "0b5c6a8e-1111-4222-8333-444455556666",
		ConversationID: "conv-1", EndUser: "alice", KeyID: "vk_1", TeamID: "team_a", UserID: "u_9", Tags: []string{"prod"},
		Prompt: prompt, Answer: answer, Attempts: []completions.Attempt{}}
}

func chatSpan(t *testing.T, opts TracingOptions, r completions.RequestRecord) []attribute.KeyValue {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tr := NewTracing(exp, "test", true, opts)
	tr.ObserveRequest(context.Background(), r)
	for _, sp := range exp.GetSpans() {
		if strings.HasPrefix(sp.Name, "chat ") {
			return sp.Attributes
		}
	}
	t.Fatalf("no chat span in %v", exp.GetSpans())
	return nil
}

func attrOf(attrs []attribute.KeyValue, key string) (attribute.Value, bool) {
	for _, a := range attrs {
		if string(a.Key) == key {
			return a.Value, true
		}
	}
	return attribute.Value{}, false
}

var contentKeys = []string{"gen_ai.system_instructions", "gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.tool.definitions"}

func TestChatSpanAttributesWithoutContent(t *testing.T) {
	attrs := chatSpan(t, TracingOptions{}, chatRecord())
	for key, want := range map[string]string{
		"gen_ai.operation.name":          "chat",
		"gen_ai.request.temperature":     "0.3",
		"gen_ai.request.top_p":           "0.9",
		"gen_ai.request.max_tokens":      "200",
		"gen_ai.response.finish_reasons": `["tool_calls"]`,
		"gen_ai.response.id":             "0b5c6a8e-1111-4222-8333-444455556666",
		"gen_ai.response.model":          "m1",
		"gen_ai.conversation.id":         "conv-1",
		"session.id":                     "conv-1",
		"user.id":                        "alice",
		"switchyard.user_id":             "u_9",
		"switchyard.key_id":              "vk_1",
		"switchyard.team_id":             "team_a",
		"langfuse.trace.tags":            `["prod"]`,
	} {
		if v, ok := attrOf(attrs, key); !ok || v.Emit() != want {
			t.Errorf("%s = %q (present %v), want %q", key, v.Emit(), ok, want)
		}
	}
	for _, key := range contentKeys {
		if v, ok := attrOf(attrs, key); ok {
			t.Errorf("content capture off, but %s = %s", key, v.Emit())
		}
	}
	for _, a := range attrs {
		if strings.Contains(a.Value.Emit(), "cat") {
			t.Errorf("content capture off, but %s holds the prompt or answer: %s", a.Key, a.Value.Emit())
		}
	}
	// The user is the internal user when no end user was named.
	r := chatRecord()
	r.EndUser = ""
	if v, _ := attrOf(chatSpan(t, TracingOptions{}, r), "user.id"); v.Emit() != "u_9" {
		t.Errorf("user.id without an end user = %q, want the key's user", v.Emit())
	}
}

func TestChatSpanContent(t *testing.T) {
	attrs := chatSpan(t, TracingOptions{CaptureContent: true}, chatRecord())
	get := func(key string, into any) {
		t.Helper()
		v, ok := attrOf(attrs, key)
		if !ok {
			t.Fatalf("no %s on the span", key)
		}
		if err := json.Unmarshal([]byte(v.AsString()), into); err != nil {
			t.Fatalf("%s is not JSON: %v: %s", key, err, v.AsString())
		}
	}
	var system []genaiPart
	get("gen_ai.system_instructions", &system)
	if len(system) != 1 || system[0].Type != "text" || system[0].Content != "You are terse." {
		t.Errorf("system instructions %+v", system)
	}
	var in []struct {
		Role  string           `json:"role"`
		Parts []map[string]any `json:"parts"`
	}
	get("gen_ai.input.messages", &in)
	if len(in) != 3 || in[0].Role != "user" || in[1].Role != "assistant" || in[2].Role != "tool" {
		t.Fatalf("input messages %+v", in)
	}
	if p := in[0].Parts; len(p) != 2 || p[0]["content"] != "What is in this picture?" || p[1]["type"] != "image" ||
		p[1]["mime_type"] != "image/png" || !strings.Contains(p[1]["content"].(string), "omitted") {
		t.Errorf("user turn parts %+v", p)
	}
	if p := in[1].Parts; len(p) != 1 || p[0]["type"] != "tool_call" || p[0]["id"] != "call_1" || p[0]["name"] != "lookup" ||
		p[0]["arguments"].(map[string]any)["q"] != "cat" {
		t.Errorf("assistant tool call parts %+v", p)
	}
	if p := in[2].Parts; len(p) != 1 || p[0]["type"] != "tool_call_response" || p[0]["id"] != "call_1" || p[0]["response"] != "a cat, probably" {
		t.Errorf("tool result parts %+v", p)
	}
	var out []struct {
		Role         string           `json:"role"`
		FinishReason string           `json:"finish_reason"`
		Parts        []map[string]any `json:"parts"`
	}
	get("gen_ai.output.messages", &out)
	if len(out) != 1 || out[0].Role != "assistant" || out[0].FinishReason != "tool_calls" || len(out[0].Parts) != 2 ||
		out[0].Parts[0]["content"] != "It is a cat." || out[0].Parts[1]["type"] != "tool_call" ||
		out[0].Parts[1]["arguments"].(map[string]any)["q"] != "breed" {
		t.Errorf("output messages %+v", out)
	}
	var tools []genaiTool
	get("gen_ai.tool.definitions", &tools)
	if len(tools) != 1 || tools[0].Name != "lookup" || string(tools[0].Parameters) != `{"type":"object"}` {
		t.Errorf("tool definitions %+v", tools)
	}
	for _, a := range attrs {
		if s := a.Value.Emit(); strings.Contains(s, "iVBORw0KGgo") || strings.Contains(s, "base64") {
			t.Errorf("%s carries the image's data: %.200s", a.Key, s)
		}
	}
}

func TestChatSpanContentIsBounded(t *testing.T) {
	const limit = 4096
	r := chatRecord()
	big := strings.Repeat("é\"<", 20000) // escaped and multi-byte: JSON longer than the text
	r.Prompt.Messages = append(r.Prompt.Messages, providers.Message{Role: "user", Content: big})
	r.Prompt.Messages[0].Content = strings.Repeat("s", 10000)
	r.Answer.Message.Content[0].Text = strings.Repeat("answer ", 5000)
	r.Answer.ToolCalls[0].Arguments = `{"q":"` + strings.Repeat("x", 9000) + `"}`
	attrs := chatSpan(t, TracingOptions{CaptureContent: true, MaxContentBytes: limit}, r)
	for _, key := range []string{"gen_ai.system_instructions", "gen_ai.input.messages", "gen_ai.output.messages"} {
		v, ok := attrOf(attrs, key)
		s := v.AsString()
		if !ok || len(s) > limit || !strings.Contains(s, "…[truncated ") {
			t.Errorf("%s: %d bytes (limit %d), marker %v", key, len(s), limit, strings.Contains(s, "truncated"))
		}
		if !json.Valid([]byte(s)) {
			t.Errorf("%s cut into invalid JSON: %.300s", key, s)
		}
	}
	// Thousands of tiny turns: the structure alone is over the bound; the earliest turns are
	// left out, the JSON kept valid and bounded.
	r = chatRecord()
	for range 3000 {
		r.Prompt.Messages = append(r.Prompt.Messages, providers.Message{Role: "user", Content: "ok"})
	}
	v, _ := attrOf(chatSpan(t, TracingOptions{CaptureContent: true, MaxContentBytes: limit}, r), "gen_ai.input.messages")
	if s := v.AsString(); len(s) > limit || !json.Valid([]byte(s)) || !strings.Contains(s, " earlier messages omitted: ") {
		t.Errorf("3000 turns: %d bytes, valid %v: %.200s", len(s), json.Valid([]byte(s)), s)
	}
	// Within the bound nothing is cut.
	v, _ = attrOf(chatSpan(t, TracingOptions{CaptureContent: true}, chatRecord()), "gen_ai.input.messages")
	if strings.Contains(v.AsString(), "truncated") {
		t.Errorf("a small prompt was cut: %s", v.AsString())
	}
}

// TestChatSpanCostWithoutContentIsFlat: with content capture off, observing a request
// allocates the same whatever the size of its prompt and answer (no content is encoded).
func TestChatSpanCostWithoutContentIsFlat(t *testing.T) {
	tr := NewTracing(tracetest.NewNoopExporter(), "test", true, TracingOptions{})
	small, large := chatRecord(), chatRecord()
	for range 200 {
		large.Prompt.Messages = append(large.Prompt.Messages, providers.Message{Role: "user", Content: strings.Repeat("word ", 200)})
	}
	large.Answer.Message.Content[0].Text = strings.Repeat("word ", 20000)
	ctx := context.Background()
	allocs := func(r completions.RequestRecord) float64 {
		return testing.AllocsPerRun(50, func() { tr.ObserveRequest(ctx, r) })
	}
	if a, b := allocs(small), allocs(large); a != b {
		t.Errorf("capture off: %v allocs for a small request, %v for a large one", a, b)
	}
	on := NewTracing(tracetest.NewNoopExporter(), "test", true, TracingOptions{CaptureContent: true})
	off := allocs(small)
	if a := testing.AllocsPerRun(50, func() { on.ObserveRequest(ctx, small) }); a <= off {
		t.Errorf("capture on: %v allocs, not more than off's %v (is content encoded?)", a, off)
	}
}
