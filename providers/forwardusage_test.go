package providers

import (
	"strings"
	"testing"
)

// TestUsageMeter: the usage of each format's answers, whole and streamed, written in
// pieces that cut events and lines anywhere, is read as the adapters read it.
func TestUsageMeter(t *testing.T) {
	cases := []struct {
		name        string
		format      Format
		contentType string
		body        string
		want        Usage
		model       string
	}{
		{"anthropic json", FormatAnthropic, "application/json",
			`{"model":"claude-x","usage":{"input_tokens":10,"output_tokens":5,"cache_read_input_tokens":3,"cache_creation_input_tokens":2}}`,
			Usage{PromptTokens: 15, CompletionTokens: 5, CachedTokens: 3, CacheCreationTokens: 2}, "claude-x"},
		{"anthropic stream", FormatAnthropic, "text/event-stream; charset=utf-8",
			"event: message_start\r\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"claude-x\",\"usage\":{\"input_tokens\":10,\"output_tokens\":1}}}\r\n\r\n" +
				"event: message_delta\ndata: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":7}}\n\n",
			Usage{PromptTokens: 10, CompletionTokens: 7}, "claude-x"},
		{"openai chat stream", FormatOpenAI, "text/event-stream",
			"data: {\"model\":\"gpt\",\"choices\":[],\"usage\":null}\n\ndata: {\"model\":\"gpt\",\"choices\":[],\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":3,\"completion_tokens_details\":{\"reasoning_tokens\":2}}}\n\ndata: [DONE]\n\n",
			Usage{PromptTokens: 7, CompletionTokens: 3, ReasoningTokens: 2}, "gpt"},
		{"openai responses stream", FormatOpenAI, "text/event-stream",
			"event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"model\":\"gpt\",\"usage\":{\"input_tokens\":9,\"output_tokens\":4,\"input_tokens_details\":{\"cached_tokens\":1}}}}\n\n",
			Usage{PromptTokens: 9, CompletionTokens: 4, CachedTokens: 1}, "gpt"},
		{"gemini json array", FormatGemini, "application/json",
			`[{"usageMetadata":{"promptTokenCount":8,"candidatesTokenCount":1},"modelVersion":"g"},{"usageMetadata":{"promptTokenCount":8,"candidatesTokenCount":4,"thoughtsTokenCount":2}}]`,
			Usage{PromptTokens: 8, CompletionTokens: 6, ReasoningTokens: 2}, "g"},
	}
	for _, c := range cases {
		for _, step := range []int{1, 7, len(c.body)} {
			m, err := NewUsageMeter(c.format, c.contentType)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < len(c.body); i += step {
				m.Write([]byte(c.body[i:min(i+step, len(c.body))]))
			}
			u, model, ok := m.Usage()
			if !ok || u != c.want || model != c.model {
				t.Errorf("%s in pieces of %d: %+v %q %v, want %+v %q", c.name, step, u, model, ok, c.want, c.model)
			}
		}
	}
	m, _ := NewUsageMeter(FormatOpenAI, "text/event-stream")
	m.Write([]byte("data: {\"choices\":[],\"usage\":null}\n\ndata: [DONE]\n\n"))
	if _, _, ok := m.Usage(); ok {
		t.Error("a stream without usage reported some")
	}
	if _, err := NewUsageMeter(FormatBedrock, ""); err == nil || !strings.Contains(err.Error(), "bedrock") {
		t.Errorf("bedrock meter: %v", err)
	}
}
