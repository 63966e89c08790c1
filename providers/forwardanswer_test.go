package providers

import (
	"bytes"
	"testing"
)

// TestUsageMeterAnswerTokens: an OpenAI answer that reports no usage has its completion
// tokens estimated from its text as EstimateUsage counts it — a stream's deltas and
// tool-call arguments per choice, written in pieces cut anywhere; a chat completion's
// message; a legacy completion's text — the text past the meter's bound by 4 bytes a
// token; a JSON answer over MaxMeteredBody is not read (Whole false).
func TestUsageMeterAnswerTokens(t *testing.T) {
	const model = "openai/gpt-4o-mini"
	count := func(resps ...Response) int {
		n := 0
		for _, r := range resps {
			n += EstimateUsage(model, nil, &r).CompletionTokens
		}
		return n
	}
	stream := `data: {"choices":[{"index":0,"delta":{"role":"assistant","content":""}},{"index":1,"delta":{"content":"Bonjour"}}]}` + "\n\n" +
		`data: {"choices":[{"index":0,"delta":{"content":"Hello there,"}}]}` + "\n\n" +
		`data: {"choices":[{"index":0,"delta":{"content":" friend"}},{"index":1,"delta":{"tool_calls":[{"index":0,"function":{"name":"lookup","arguments":"{\"q\":"}}]}}]}` + "\n\n" +
		`data: {"choices":[{"index":1,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"cats\"}"}}]}}]}` + "\n\n" +
		"data: [DONE]\n\n"
	cases := []struct {
		name, contentType, body string
		want                    int
	}{
		{"chat stream", "text/event-stream", stream, count(Response{Text: "Hello there, friend"},
			Response{Text: "Bonjour", ToolCalls: []ToolCall{{Name: "lookup", Arguments: `{"q":"cats"}`}}})},
		{"chat json", "application/json",
			`{"choices":[{"index":0,"message":{"role":"assistant","content":"Hi there","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]}},{"index":1,"message":{"content":null,"refusal":"no"}}]}`,
			count(Response{Text: "Hi there", ToolCalls: []ToolCall{{Name: "f", Arguments: "{}"}}}, Response{Refusal: "no"})},
		{"legacy completions", "application/json", `{"choices":[{"index":0,"text":"once upon a time"}]}`, count(Response{Text: "once upon a time"})},
	}
	for _, c := range cases {
		for _, step := range []int{1, 7, len(c.body)} {
			m, err := NewUsageMeter(FormatOpenAI, c.contentType)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < len(c.body); i += step {
				m.Write([]byte(c.body[i:min(i+step, len(c.body))]))
			}
			if _, _, ok := m.Usage(); ok {
				t.Fatalf("%s: usage reported", c.name)
			}
			if got := m.AnswerTokens(model); got != c.want || c.want == 0 || !m.Whole() {
				t.Errorf("%s in pieces of %d: %d tokens (whole %v), want %d", c.name, step, got, m.Whole(), c.want)
			}
		}
	}

	m, _ := NewUsageMeter(FormatOpenAI, "text/event-stream")
	m.answer.limit = 10
	m.Write([]byte(`data: {"choices":[{"index":0,"delta":{"content":"0123456789abcdefghijklmnop"}}]}` + "\n\n"))
	if got, want := m.AnswerTokens(model), count(Response{Text: "0123456789"})+(16+3)/4; got != want {
		t.Errorf("text past the bound: %d tokens, want %d", got, want)
	}

	m, _ = NewUsageMeter(FormatOpenAI, "application/json")
	m.Write([]byte(`{"choices":[{"index":0,"message":{"content":"`))
	m.Write(bytes.Repeat([]byte("a"), MaxMeteredBody))
	m.Write([]byte(`"}}]}`))
	if _, _, ok := m.Usage(); ok || m.Whole() || m.AnswerTokens(model) != 0 {
		t.Errorf("an answer over MaxMeteredBody: whole %v, %d tokens", m.Whole(), m.AnswerTokens(model))
	}
}
