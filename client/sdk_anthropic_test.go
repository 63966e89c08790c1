package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
)

// TestOfficialAnthropicSDK drives /v1/messages with the official Anthropic Go SDK
// (github.com/anthropics/anthropic-sdk-go), as Claude Code and agents written against
// Anthropic's API do, routed here to an OpenAI-format model: a tool call, whole and
// streamed (assembled by the SDK's Accumulate); the tool loop's second turn with the
// result; an image block; and the SDK's *anthropic.Error for an invalid request and a
// wrong key.
func TestOfficialAnthropicSDK(t *testing.T) {
	up := newToolUpstream(t)
	_, base := realServerURL(t, up.options(t))
	ctx := context.Background()
	c := anthropic.NewClient(option.WithBaseURL(base), option.WithAPIKey(testKey), option.WithMaxRetries(0))
	weather := anthropic.ToolUnionParam{OfTool: &anthropic.ToolParam{Name: "get_weather", Description: anthropic.String("Current weather of a city"),
		InputSchema: anthropic.ToolInputSchemaParam{Properties: map[string]any{"city": map[string]any{"type": "string"}}, Required: []string{"city"}}}}
	params := anthropic.MessageNewParams{
		Model: "openai/gpt-4o-mini", MaxTokens: 256,
		System:   []anthropic.TextBlockParam{{Text: "Be brief."}},
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Weather in Paris?"))},
		Tools:    []anthropic.ToolUnionParam{weather},
	}
	msg, err := c.Messages.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if msg.StopReason != "tool_use" || len(msg.Content) != 1 || msg.Content[0].Type != "tool_use" || msg.Content[0].Name != "get_weather" ||
		string(msg.Content[0].Input) != `{"city":"Paris"}` || msg.Content[0].ID != "call_1" || msg.Usage.InputTokens != 30 || msg.Usage.OutputTokens != 10 {
		t.Fatalf("message %+v", msg)
	}
	sent := up.last()
	if sent["max_tokens"] == nil && sent["max_completion_tokens"] == nil {
		t.Errorf("max_tokens did not reach the upstream: %v", sent)
	}
	if tools, _ := sent["tools"].([]any); len(tools) != 1 {
		t.Errorf("upstream tools %v", sent["tools"])
	}

	// Streamed: the SDK assembles the same tool call.
	stream := c.Messages.NewStreaming(ctx, params)
	var acc anthropic.Message
	for stream.Next() {
		if err := acc.Accumulate(stream.Current()); err != nil {
			t.Fatal(err)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	var args map[string]any
	if acc.StopReason != "tool_use" || len(acc.Content) != 1 || acc.Content[0].Name != "get_weather" ||
		json.Unmarshal(acc.Content[0].Input, &args) != nil || args["city"] != "Paris" || acc.Usage.OutputTokens != 10 {
		t.Fatalf("streamed message %+v", acc)
	}

	// The tool's result goes back; the model answers.
	params.Messages = append(params.Messages, msg.ToParam(), anthropic.NewUserMessage(anthropic.NewToolResultBlock("call_1", "sunny", false)))
	final, err := c.Messages.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if final.StopReason != "end_turn" || len(final.Content) != 1 || final.Content[0].Text != "It is sunny in Paris." {
		t.Fatalf("final message %+v", final)
	}
	msgs := up.last()["messages"].([]any)
	if last := msgs[len(msgs)-1].(map[string]any); last["role"] != "tool" || last["tool_call_id"] != "call_1" || last["content"] != "sunny" {
		t.Errorf("the tool result reached the upstream as %v", last)
	}
	if call := msgs[len(msgs)-2].(map[string]any); call["role"] != "assistant" || call["tool_calls"] == nil {
		t.Errorf("the tool call reached the upstream as %v", call)
	}

	// An image.
	_, err = c.Messages.New(ctx, anthropic.MessageNewParams{Model: "openai/gpt-4o-mini", MaxTokens: 64,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("What is it?"), anthropic.NewImageBlockBase64("image/png", "iVBORw0KGgo="))}})
	if err != nil {
		t.Fatal(err)
	}
	msgs = up.last()["messages"].([]any)
	b, _ := json.Marshal(msgs[len(msgs)-1].(map[string]any)["content"])
	if want := `[{"text":"What is it?","type":"text"},{"image_url":{"url":"data:image/png;base64,iVBORw0KGgo="},"type":"image_url"}]`; string(b) != want {
		t.Errorf("image: upstream got %s, want %s", b, want)
	}

	// Token counts, estimated for the model without calling it: more text, more tokens.
	count := func(text string) int64 {
		n, err := c.Messages.CountTokens(ctx, anthropic.MessageCountTokensParams{Model: "openai/gpt-4o-mini",
			Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(text))}})
		if err != nil {
			t.Fatal(err)
		}
		return n.InputTokens
	}
	seen := func() int { up.mu.Lock(); defer up.mu.Unlock(); return len(up.requests) }
	calls := seen()
	if short, long := count("Weather in Paris?"), count(strings.Repeat("Weather in Paris? ", 50)); short < 5 || long < 10*short {
		t.Errorf("count_tokens: %d and %d tokens", short, long)
	}
	if seen() != calls {
		t.Error("count_tokens called the upstream")
	}

	var apiErr *anthropic.Error
	_, err = c.Messages.New(ctx, anthropic.MessageNewParams{Model: "openai/gpt-4o-mini", MaxTokens: 64,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewImageBlockBase64("image/tiff", "AAAA"))}})
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || !strings.Contains(apiErr.Error(), "invalid_request_error") ||
		!strings.Contains(apiErr.Error(), "messages[0].content[0].source") {
		t.Errorf("invalid request: %v", err)
	}
	bad := anthropic.NewClient(option.WithBaseURL(base), option.WithAPIKey("wrong"), option.WithMaxRetries(0))
	_, err = bad.Messages.New(ctx, params)
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 401 || !strings.Contains(apiErr.Error(), "authentication_error") {
		t.Errorf("wrong key: %v", err)
	}
}
