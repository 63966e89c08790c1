package providers_test

// Review 14b: how requests map onto Converse's rules.

import (
	"encoding/json"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestReview14bConversationStartsWithUser: Converse refuses a conversation whose first
// message is the assistant's ("A conversation must start with a user message", a
// ValidationException); chat histories often open with the assistant's greeting after the
// system prompt, which OpenAI takes. The adapter's body must start with a user turn.
func TestReview14bConversationStartsWithUser(t *testing.T) {
	req := &providers.Request{Model: "us.amazon.nova-pro-v1:0", Messages: []providers.Message{
		{Role: "system", Content: "You are a support bot."},
		{Role: "assistant", Content: "Hi! How can I help you today?"},
		{Role: "user", Content: "My order is late."},
	}}
	body := converseBody(t, req)
	msgs := body["messages"].([]any)
	if role := msgs[0].(map[string]any)["role"]; role != "user" {
		b, _ := json.Marshal(msgs)
		t.Errorf("the body's first message is the %s's: %s", role, b)
	}
}

// TestReview14bNovaToolsHaveNoCachePoint: Amazon Nova takes cache points in system and
// messages but not in toolConfig.tools (AWS's prompt-caching table lists "system,
// messages" for Nova; pydantic-ai enables tool caching for Claude only); a PromptCache
// request with tools to Nova must not put one there.
func TestReview14bNovaToolsHaveNoCachePoint(t *testing.T) {
	req := &providers.Request{Model: "us.amazon.nova-pro-v1:0", PromptCache: true, Tools: []providers.Tool{{Name: "now"}},
		Messages: []providers.Message{{Role: "system", Content: "S"}, {Role: "user", Content: "q"}}}
	body := converseBody(t, req)
	for _, tool := range body["toolConfig"].(map[string]any)["tools"].([]any) {
		if _, ok := tool.(map[string]any)["cachePoint"]; ok {
			t.Errorf("Nova request with a cachePoint in toolConfig.tools: %v", body["toolConfig"])
		}
	}
}

// TestReview14bCachePointNotAfterDocument: Bedrock refuses a cache point right after a
// document block (pydantic-ai inserts it before the trailing documents for that reason);
// a PromptCache request whose last user turn ends with a PDF must not end with document,
// cachePoint.
func TestReview14bCachePointNotAfterDocument(t *testing.T) {
	req := &providers.Request{Model: "us.anthropic.claude-sonnet-4-20250514-v1:0", PromptCache: true,
		Messages: []providers.Message{{Role: "user", Content: "x", Parts: []providers.Part{{Text: "Summarise this."},
			{File: &providers.File{URL: "data:application/pdf;base64," + r14PDF, Filename: "a.pdf"}}}}}}
	body := converseBody(t, req)
	msgs := body["messages"].([]any)
	content := msgs[len(msgs)-1].(map[string]any)["content"].([]any)
	for i := 1; i < len(content); i++ {
		_, cp := content[i].(map[string]any)["cachePoint"]
		_, doc := content[i-1].(map[string]any)["document"]
		if cp && doc {
			b, _ := json.Marshal(content)
			t.Errorf("cachePoint right after a document: %s", b)
		}
	}
}

// TestReview14bEmptyStopSequenceDropped: Converse's stopSequences members must be
// non-empty (minimum length 1); an empty stop string is left out for every model, as
// it is for Claude.
func TestReview14bEmptyStopSequenceDropped(t *testing.T) {
	req := &providers.Request{Model: "us.amazon.nova-pro-v1:0", Stop: []string{"", "END"}, Messages: []providers.Message{{Role: "user", Content: "q"}}}
	body := converseBody(t, req)
	stops := body["inferenceConfig"].(map[string]any)["stopSequences"].([]any)
	for _, s := range stops {
		if s == "" {
			t.Errorf("stopSequences %v carries an empty string", stops)
		}
	}
}

// TestReview14bMappingBasics (checks that hold): several system messages are one system
// text; consecutive turns of one role are merged; whitespace-only text is left out; a
// temperature above 1 is sent as 1; tool_choice none without tool history sends no tools;
// no max_tokens sends no maxTokens (Converse then uses the model's maximum); parallel tool
// results share one user turn.
func TestReview14bMappingBasics(t *testing.T) {
	temp := 1.7
	req := &providers.Request{Model: "anthropic.claude-3-5-sonnet-20240620-v1:0", Temperature: &temp,
		Tools: []providers.Tool{{Name: "now"}}, ToolChoice: &providers.ToolChoice{Mode: providers.ToolChoiceNone},
		Messages: []providers.Message{
			{Role: "system", Content: "A"}, {Role: "developer", Content: "B"},
			{Role: "user", Content: "one"}, {Role: "user", Content: "  "}, {Role: "user", Content: "two"},
		}}
	body := converseBody(t, req)
	want := `{"inferenceConfig":{"temperature":1},"messages":[{"content":[{"text":"one"},{"text":"two"}],"role":"user"}],"system":[{"text":"A\n\nB"}]}`
	if got := canonicalValue(body); got != canonicalValue(mustJSON(json.RawMessage(want))) {
		t.Errorf("body %s\nwant %s", got, canonicalValue(mustJSON(json.RawMessage(want))))
	}
	req = &providers.Request{Model: "us.amazon.nova-pro-v1:0", Tools: []providers.Tool{{Name: "a"}, {Name: "b"}},
		Messages: []providers.Message{{Role: "user", Content: "q"},
			{Role: "assistant", ToolCalls: []providers.ToolCall{{ID: "t1", Name: "a", Arguments: "{}"}, {ID: "t2", Name: "b", Arguments: "{}"}}},
			{Role: "tool", ToolCallID: "t1", Content: "A"}, {Role: "tool", ToolCallID: "t2", Content: "B"}}}
	body = converseBody(t, req)
	msgs := body["messages"].([]any)
	if len(msgs) != 3 || len(msgs[2].(map[string]any)["content"].([]any)) != 2 {
		t.Errorf("parallel results: %v", msgs)
	}
}
