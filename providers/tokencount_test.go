package providers

import (
	"strings"
	"testing"
)

func TestTokenEncoding(t *testing.T) {
	for _, tc := range []struct {
		model string
		enc   string
		exact bool
	}{
		{"openai/gpt-4o", EncodingO200k, true},
		{"openai/gpt-4o-mini-2024-07-18", EncodingO200k, true},
		{"openai/gpt-4.1-nano", EncodingO200k, true},
		{"openai/o1", EncodingO200k, true},
		{"openai/o3-mini", EncodingO200k, true},
		{"openai/o4-mini", EncodingO200k, true},
		{"openai/gpt-5", EncodingO200k, true},
		{"openrouter/openai/gpt-5-mini", EncodingO200k, true},
		{"gpt-4o", EncodingO200k, true},
		{"openai/gpt-4", EncodingCl100k, true},
		{"openai/gpt-4-turbo", EncodingCl100k, true},
		{"openai/gpt-3.5-turbo-0125", EncodingCl100k, true},
		{"anthropic/claude-3-5-haiku-20241022", EncodingCl100k, false},
		{"gemini/gemini-2.5-flash", EncodingCl100k, false},
		{"groq/llama-3.3-70b-versatile", EncodingCl100k, false},
		{"mistral/mistral-large-latest", EncodingCl100k, false},
		{"openai/o10-something", EncodingCl100k, false},
		{"together/openai-ish/o1x", EncodingCl100k, false},
	} {
		enc, exact := TokenEncoding(tc.model)
		if enc != tc.enc || exact != tc.exact {
			t.Errorf("TokenEncoding(%q) = %s, %v; want %s, %v", tc.model, enc, exact, tc.enc, tc.exact)
		}
	}
}

func TestCountTokens(t *testing.T) {
	for _, tc := range []struct {
		model, text string
		want        int
	}{
		{"openai/gpt-4o", "hello world", 2},
		{"openai/gpt-4", "hello world", 2},
		{"openai/gpt-4o", "", 0},
		// "tiktoken is great!" is 6 tokens in cl100k_base (OpenAI's cookbook example).
		{"openai/gpt-3.5-turbo", "tiktoken is great!", 6},
		{"anthropic/claude-sonnet-4", "tiktoken is great!", 6},
	} {
		if got := CountTokens(tc.model, tc.text); got != tc.want {
			t.Errorf("CountTokens(%q, %q) = %d, want %d", tc.model, tc.text, got, tc.want)
		}
	}
	// The two encodings differ on other text: o200k_base has a larger vocabulary.
	text := strings.Repeat("Ein schöner Tag in München, nicht wahr? ", 20)
	if o, c := CountTokens("openai/gpt-4o", text), CountTokens("openai/gpt-4", text); o >= c {
		t.Errorf("o200k_base count %d should be below cl100k_base count %d for German text", o, c)
	}
	// A text beyond the exact bound is extrapolated, not tokenized whole.
	long := strings.Repeat("hello world ", maxExactTokenize/6)
	if n := CountTokens("openai/gpt-4o", long); n < len(long)/8 || n > len(long)/4 {
		t.Errorf("CountTokens of %d bytes = %d, want about %d", len(long), n, len(long)/6)
	}
}

func TestEstimateUsage(t *testing.T) {
	req := &Request{Messages: []Message{{Role: "system", Content: "Be brief."}, {Role: "user", Content: "hello world"}}}
	u := EstimateUsage("openai/gpt-4o", req, &Response{Text: "hello world"})
	// 3 per message + role + content, 3 for the reply: (3+1+3) + (3+1+2) + 3.
	if u.PromptTokens != 16 || u.CompletionTokens != 2 {
		t.Errorf("EstimateUsage = %+v, want prompt 16, completion 2", u)
	}
	tools := *req
	tools.Tools = []Tool{{Name: "get_weather", Description: "Weather of a city", Parameters: []byte(`{"type":"object","properties":{"city":{"type":"string"}}}`)}}
	withTools := EstimateUsage("openai/gpt-4o", &tools, &Response{ToolCalls: []ToolCall{{ID: "c1", Name: "get_weather", Arguments: `{"city":"Paris"}`}}})
	if withTools.PromptTokens <= u.PromptTokens+10 {
		t.Errorf("tool definitions should count: %d vs %d without", withTools.PromptTokens, u.PromptTokens)
	}
	if withTools.CompletionTokens < 8 {
		t.Errorf("tool call should count name and arguments: %d", withTools.CompletionTokens)
	}
	// Reasoning the model showed is output it was billed for; redacted reasoning is not counted.
	r := EstimateUsage("openai/gpt-4o", req, &Response{Text: "hello world", Reasoning: []ReasoningBlock{{Text: "hello world"}, {Redacted: "xyz"}}})
	if r.ReasoningTokens != 2 || r.CompletionTokens != 4 {
		t.Errorf("with reasoning: %+v, want reasoning 2 of completion 4", r)
	}
	if z := EstimateUsage("openai/gpt-4o", nil, nil); z != (Usage{}) {
		t.Errorf("EstimateUsage(nil, nil) = %+v", z)
	}
}

func TestCountTokensConcurrently(t *testing.T) {
	done := make(chan int)
	for i := range 8 {
		go func() {
			model := []string{"openai/gpt-4o", "anthropic/claude-sonnet-4"}[i%2]
			done <- CountTokens(model, strings.Repeat("hello world ", 50))
		}()
	}
	for range 8 {
		if n := <-done; n != 101 { // 50 × "hello", " world", plus the trailing space
			t.Errorf("count %d, want 101", n)
		}
	}
}
