package completions

import (
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestEstimatePassThroughPrompt: a pass-through body's prompt is counted as the gateway
// counts the same conversation through its own translation of the provider's API
// (OpenAI's messages and tools, Anthropic's system and messages, Gemini's contents and
// systemInstruction); a body of another shape (embeddings' input) as the text of its
// string values, the model's name aside.
func TestEstimatePassThroughPrompt(t *testing.T) {
	chat := func(model string, c *OpenAIChatRequest) int {
		t.Helper()
		req, err := c.ToRequest()
		if err != nil {
			t.Fatal(err)
		}
		return EstimatePromptTokens(model, req)
	}
	msgs := []OpenAIMessage{{Role: "system", Content: textContent("be brief")}, {Role: "user", Content: textContent("what is the capital of France?")}}
	cases := []struct {
		provider, model, body string
		want                  int
	}{
		{"openai", "openai/gpt-4o-mini",
			`{"model":"gpt-4o-mini","stream":true,"some_new_option":{"x":1},"messages":[{"role":"system","content":"be brief"},{"role":"user","content":"what is the capital of France?"}]}`,
			chat("openai/gpt-4o-mini", &OpenAIChatRequest{Model: "gpt-4o-mini", Messages: msgs})},
		{"anthropic", "anthropic/claude-haiku-4-5",
			`{"model":"claude-haiku-4-5","max_tokens":64,"system":"be brief","messages":[{"role":"user","content":[{"type":"text","text":"what is the capital of France?"}]}]}`,
			chat("anthropic/claude-haiku-4-5", &OpenAIChatRequest{Model: "claude-haiku-4-5", Messages: msgs})},
		{"gemini", "gemini/gemini-2.0-flash",
			`{"system_instruction":{"parts":[{"text":"be brief"}]},"contents":[{"role":"user","parts":[{"text":"what is the capital of France?"}]}]}`,
			chat("gemini/gemini-2.0-flash", &OpenAIChatRequest{Model: "gemini-2.0-flash", Messages: msgs})},
		{"openai", "openai/text-embedding-3-small", `{"model":"text-embedding-3-small","input":["hello world","good bye"]}`,
			providers.CountTokens("openai/text-embedding-3-small", "hello world\ngood bye\n")},
	}
	for _, c := range cases {
		if got := EstimatePassThroughPrompt(c.provider, c.model, []byte(c.body)); got != c.want || got == 0 {
			t.Errorf("%s %s: %d prompt tokens, want %d", c.provider, c.body, got, c.want)
		}
	}
}
