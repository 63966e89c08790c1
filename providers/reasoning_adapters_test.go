package providers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// replayTransport answers every request with body as an event stream, without a network,
// so a benchmark counts the adapter's allocations rather than a server's.
type replayTransport struct{ body []byte }

// RoundTrip implements http.RoundTripper.
func (t replayTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body: io.NopCloser(bytes.NewReader(t.body)), Request: r}, nil
}

// benchRelay reads p's stream for req to its end, b.N times, reporting allocations.
func benchRelay(b *testing.B, p providers.Provider, req *providers.Request) {
	b.ReportAllocs()
	for b.Loop() {
		s, err := p.Stream(context.Background(), req)
		if err != nil {
			b.Fatal(err)
		}
		for {
			if _, err := s.Recv(); err != nil {
				if err != io.EOF {
					b.Fatal(err)
				}
				break
			}
		}
		s.Close()
	}
}

// benchGeminiStream relays a Gemini stream of 1000 events like event (then a finish) and
// reports allocations: the cost of the reasoning split on a plain text stream.
func benchGeminiStream(b *testing.B, event string) {
	var body strings.Builder
	const n = 1000
	for range n {
		body.WriteString("data: " + event + "\n\n")
	}
	body.WriteString(`data: {"candidates":[{"content":{"parts":[{"text":"."}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":1001}}` + "\n\n")
	p := providers.NewGemini(providers.Config{APIKey: testKey, HTTPClient: &http.Client{Transport: replayTransport{[]byte(body.String())}}})
	req := &providers.Request{Model: "gemini-2.5-flash", Messages: []providers.Message{{Role: "user", Content: "Hi"}}}
	benchRelay(b, p, req)
}

// BenchmarkGeminiTextStream: plain text events, whose allocations the reasoning split must
// not raise.
func BenchmarkGeminiTextStream(b *testing.B) {
	benchGeminiStream(b, `{"candidates":[{"content":{"parts":[{"text":"tok7 "}],"role":"model"},"index":0}],"modelVersion":"gemini-2.5-flash","responseId":"r1"}`)
}

// thinkingUser is a one-turn request for model asking for thinking t.
func thinkingUser(model string, t *providers.Thinking) *providers.Request {
	return &providers.Request{Model: model, Messages: []providers.Message{{Role: "user", Content: "Why is the sky blue?"}}, Thinking: t}
}

// collect drains s, copying each chunk's tool calls (the stream reuses their slice).
func collect(t *testing.T, s providers.Stream) []providers.Chunk {
	t.Helper()
	defer s.Close()
	var out []providers.Chunk
	for {
		c, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("after %d chunks: %v", len(out), err)
		}
		c.ToolCalls = slices.Clone(c.ToolCalls)
		out = append(out, c)
	}
}

// streamed sums up a drained stream: the reasoning and the text as relayed, the chunks as
// "R:" (reasoning), "T:" (text), "C:" (a call's name) and "F:" (finish) entries, in order.
// It fails the test on a chunk that has reasoning beside anything else, or reasoning that
// is not block 0's text.
func streamed(t *testing.T, chunks []providers.Chunk) (reasoning, text string, order []string) {
	t.Helper()
	for _, c := range chunks {
		if r := c.Reasoning; r != nil {
			if c.Text != "" || len(c.ToolCalls) > 0 || c.Refusal != "" || c.FinishReason != "" || c.Usage != nil {
				t.Errorf("a reasoning chunk carries more: %+v", c)
			}
			if r.Signature != "" || r.Redacted != "" {
				t.Errorf("reasoning delta %+v, want text only", *r)
			}
			reasoning += r.Text
			order = append(order, "R:"+r.Text)
			continue
		}
		text += c.Text
		if c.Text != "" {
			order = append(order, "T:"+c.Text)
		}
		for _, d := range c.ToolCalls {
			order = append(order, "C:"+d.Name)
		}
		if c.FinishReason != "" {
			order = append(order, "F:"+c.FinishReason)
		}
	}
	return reasoning, text, order
}

// TestGeminiThinkingConfig: Request.Thinking becomes thinkingConfig with includeThoughts —
// a budget clamped to the model's range for Gemini 2.5 (Pro 128–32,768, Flash and
// Flash-Lite 512–24,576), a level for Gemini 3 and later — and nothing for older models or
// without Thinking.
func TestGeminiThinkingConfig(t *testing.T) {
	budget := func(n int) string {
		return fmt.Sprintf(`{"thinkingConfig":{"includeThoughts":true,"thinkingBudget":%d}}`, n)
	}
	level := func(l string) string {
		return `{"thinkingConfig":{"includeThoughts":true,"thinkingLevel":"` + l + `"}}`
	}
	up := newFakeUpstream(t, "application/json", testdata(t, "gemini/googleai/unary-success-basic-reply-short.json"))
	p := up.provider(t, providers.FormatGemini)
	for _, tc := range []struct {
		model    string
		thinking *providers.Thinking
		want     string // generationConfig, "null" for none
	}{
		{"gemini-2.5-pro", &providers.Thinking{Effort: "high"}, budget(16384)},
		{"gemini-2.5-pro", &providers.Thinking{BudgetTokens: 50}, budget(128)},
		{"gemini-2.5-pro", &providers.Thinking{BudgetTokens: 100000}, budget(32768)},
		{"gemini-2.5-pro", &providers.Thinking{Effort: "max"}, budget(32000)},
		{"models/gemini-2.5-pro", &providers.Thinking{}, budget(4096)},
		{"gemini-2.5-flash", &providers.Thinking{Effort: "minimal"}, budget(512)},
		{"gemini-2.5-flash", &providers.Thinking{BudgetTokens: 200}, budget(512)},
		{"gemini-2.5-flash", &providers.Thinking{Effort: "max"}, budget(24576)},
		{"gemini-2.5-flash", &providers.Thinking{BudgetTokens: 3000, Effort: "high"}, budget(3000)},
		{"gemini-2.5-flash-lite", &providers.Thinking{BudgetTokens: 100000}, budget(24576)},
		{"gemini-2.5-flash-lite", &providers.Thinking{Effort: "low"}, budget(1024)},
		{"gemini-3-pro-preview", &providers.Thinking{Effort: "low"}, level("low")},
		{"gemini-3-pro-preview", &providers.Thinking{Effort: "Minimal"}, level("low")},
		{"gemini-3-pro-preview", &providers.Thinking{Effort: "medium"}, level("high")},
		{"gemini-3-pro-preview", &providers.Thinking{Effort: "max"}, level("high")},
		{"gemini-3-flash", &providers.Thinking{BudgetTokens: 1000}, level("low")},
		{"gemini-3-flash", &providers.Thinking{BudgetTokens: 20000}, level("high")},
		{"gemini-3-flash", &providers.Thinking{}, level("high")},
		{"gemini-3.1-pro", &providers.Thinking{Effort: "low"}, level("low")},
		{"models/gemini-4-flash", &providers.Thinking{Effort: "high"}, level("high")},
		{"gemini-2.0-flash", &providers.Thinking{Effort: "high"}, "null"},
		{"gemini-2.0-flash-thinking-exp", &providers.Thinking{Effort: "high"}, "null"},
		{"gemini-1.5-pro", &providers.Thinking{BudgetTokens: 2048}, "null"},
		{"gemini-pro", &providers.Thinking{Effort: "high"}, "null"},
		{"gemini-exp-1206", &providers.Thinking{Effort: "high"}, "null"},
		{"gemma-3-27b-it", &providers.Thinking{Effort: "high"}, "null"},
		{"gemini-2.5-pro", nil, "null"},
		{"gemini-3-pro-preview", nil, "null"},
	} {
		if _, err := p.Complete(context.Background(), thinkingUser(tc.model, tc.thinking)); err != nil {
			t.Fatal(err)
		}
		if got := jsonOf(up.last(t)["generationConfig"]); got != tc.want {
			t.Errorf("%s %+v: generationConfig = %s, want %s", tc.model, tc.thinking, got, tc.want)
		}
	}
	// Beside other generation settings.
	req := thinkingUser("gemini-2.5-flash", &providers.Thinking{BudgetTokens: 2048})
	req.MaxTokens = 8192
	if _, err := p.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if got, want := jsonOf(up.last(t)["generationConfig"]), `{"maxOutputTokens":8192,"thinkingConfig":{"includeThoughts":true,"thinkingBudget":2048}}`; got != want {
		t.Errorf("generationConfig = %s, want %s", got, want)
	}
}

// historyWithReasoning is a conversation whose assistant turn carries reasoning (text,
// signature, redacted), as a client sends it back for Anthropic.
func historyWithReasoning(model string) *providers.Request {
	return &providers.Request{Model: model, Thinking: &providers.Thinking{Effort: "high"}, Messages: []providers.Message{
		{Role: "user", Content: "Hi"},
		{Role: "assistant", Content: "Hello.", Reasoning: []providers.ReasoningBlock{
			{Text: "SECRET-THOUGHT", Signature: "SECRET-SIGNATURE"}, {Redacted: "SECRET-REDACTED"}}},
		{Role: "user", Content: "Again?"},
	}}
}

// TestGeminiHistoryReasoningNotSent: Message.Reasoning is Anthropic's; the model turn goes
// to Gemini as its text alone.
func TestGeminiHistoryReasoningNotSent(t *testing.T) {
	up := newFakeUpstream(t, "application/json", testdata(t, "gemini/googleai/unary-success-basic-reply-short.json"))
	for _, model := range []string{"gemini-2.5-flash", "gemini-3-pro-preview"} {
		if _, err := up.provider(t, providers.FormatGemini).Complete(context.Background(), historyWithReasoning(model)); err != nil {
			t.Fatal(err)
		}
		want := `[{"parts":[{"text":"Hi"}],"role":"user"},{"parts":[{"text":"Hello."}],"role":"model"},{"parts":[{"text":"Again?"}],"role":"user"}]`
		if got := jsonOf(up.last(t)["contents"]); got != want {
			t.Errorf("%s: contents = %s\nwant %s", model, got, want)
		}
	}
}

// TestGeminiCompleteReasoning: a whole answer's thought parts are its reasoning — a run of
// consecutive ones one block — never its text, and a thought signature is not a reasoning
// signature; the function call keeps its handling.
func TestGeminiCompleteReasoning(t *testing.T) {
	body := `{"candidates":[{"content":{"role":"model","parts":[
		{"text":"**Planning**\n\nI will call now.","thought":true,"thoughtSignature":"c2lnLTE="},
		{"text":" Then answer.","thought":true},
		{"text":"Let me check."},
		{"functionCall":{"name":"now","args":{}},"thoughtSignature":"c2lnLTI="}]},
		"finishReason":"STOP","index":0}],
		"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":8,"thoughtsTokenCount":30},"modelVersion":"gemini-2.5-flash","responseId":"r1"}`
	up := newFakeUpstream(t, "application/json", body)
	resp, err := up.provider(t, providers.FormatGemini).Complete(context.Background(), thinkingUser("gemini-2.5-flash", &providers.Thinking{}))
	if err != nil {
		t.Fatal(err)
	}
	want := []providers.ReasoningBlock{{Text: "**Planning**\n\nI will call now. Then answer."}}
	if !reflect.DeepEqual(resp.Reasoning, want) {
		t.Errorf("reasoning = %+v, want %+v", resp.Reasoning, want)
	}
	if resp.Text != "Let me check." || resp.FinishReason != "tool_calls" {
		t.Errorf("text %q finish %q", resp.Text, resp.FinishReason)
	}
	checkCalls(t, resp.ToolCalls, []providers.ToolCall{{Name: "now", Arguments: "{}"}})
	if resp.Usage != (providers.Usage{PromptTokens: 10, CompletionTokens: 38, ReasoningTokens: 30}) {
		t.Errorf("usage = %+v", resp.Usage)
	}

	// Thought parts apart from each other are blocks apart; none, no reasoning.
	for _, tc := range []struct {
		parts string
		want  []providers.ReasoningBlock
	}{
		{`{"text":"a","thought":true},{"text":"x"},{"text":"b","thought":true}`, []providers.ReasoningBlock{{Text: "a"}, {Text: "b"}}},
		{`{"text":"","thought":true,"thoughtSignature":"c2ln"},{"text":"x"}`, nil},
		{`{"text":"x"}`, nil},
	} {
		up := newFakeUpstream(t, "application/json", `{"candidates":[{"content":{"role":"model","parts":[`+tc.parts+`]},"finishReason":"STOP"}]}`)
		resp, err := up.provider(t, providers.FormatGemini).Complete(context.Background(), thinkingUser("gemini-2.5-flash", nil))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(resp.Reasoning, tc.want) || resp.Text != "x" {
			t.Errorf("%s: reasoning %+v text %q, want %+v and \"x\"", tc.parts, resp.Reasoning, resp.Text, tc.want)
		}
	}
}

// TestGeminiStreamReasoning: each thought part is a reasoning chunk; an event with thought
// parts and text or calls gives its reasoning first, then the rest as a chunk of its own.
func TestGeminiStreamReasoning(t *testing.T) {
	event := func(parts string, extra string) string {
		return `data: {"candidates":[{"content":{"role":"model","parts":[` + parts + `]}` + extra + `,"index":0}],"responseId":"r1"}` + "\n\n"
	}
	body := event(`{"text":"Think 1.","thought":true}`, "") +
		event(`{"text":" Think 2.","thought":true},{"text":" Think 3.","thought":true},{"text":"Answer"}`, "") +
		event(`{"text":" more"}`, "") +
		event(`{"text":" Think 4.","thought":true,"thoughtSignature":"c2ln"},{"functionCall":{"name":"now","args":{}},"thoughtSignature":"c2lnMg=="}`, `,"finishReason":"STOP"`)
	up := newFakeUpstream(t, "text/event-stream", body)
	s, err := up.provider(t, providers.FormatGemini).Stream(context.Background(), thinkingUser("gemini-2.5-flash", &providers.Thinking{}))
	if err != nil {
		t.Fatal(err)
	}
	chunks := collect(t, s)
	reasoning, text, order := streamed(t, chunks)
	want := []string{"R:Think 1.", "R: Think 2.", "R: Think 3.", "T:Answer", "T: more", "R: Think 4.", "C:now", "F:tool_calls"}
	if !slices.Equal(order, want) {
		t.Errorf("chunks %q\nwant %q", order, want)
	}
	if reasoning != "Think 1. Think 2. Think 3. Think 4." || text != "Answer more" {
		t.Errorf("reasoning %q text %q", reasoning, text)
	}
	// Reasoning after the answer's text is a block of its own, as a whole answer has it.
	var blocks []int
	for _, c := range chunks {
		if c.Reasoning != nil {
			blocks = append(blocks, c.Reasoning.Index)
		}
	}
	if !slices.Equal(blocks, []int{0, 0, 0, 1}) {
		t.Errorf("reasoning block indexes %v, want [0 0 0 1]", blocks)
	}
	for _, c := range chunks {
		for _, d := range c.ToolCalls {
			if !strings.HasPrefix(d.ID, "call_") || d.Arguments != "{}" {
				t.Errorf("call %+v", d)
			}
		}
	}
	// A plain event carries no reasoning.
	up = newFakeUpstream(t, "text/event-stream", event(`{"text":"Hi"}`, `,"finishReason":"STOP"`))
	s, err = up.provider(t, providers.FormatGemini).Stream(context.Background(), thinkingUser("gemini-2.5-flash", nil))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, order := streamed(t, collect(t, s)); !slices.Equal(order, []string{"T:Hi", "F:stop"}) {
		t.Errorf("plain stream chunks %q", order)
	}
}

// TestGeminiThinkingFixtures replays the recorded Gemini 2.5 thinking streams: their thought
// summaries come out as reasoning, the answer as text, the function call as before.
func TestGeminiThinkingFixtures(t *testing.T) {
	for _, tc := range []struct {
		file                  string
		thoughts              int
		reasoningHas, wantTxt string
		wantCalls             []providers.ToolCall
		wantFinish            string
	}{
		{file: "gemini/googleai/streaming-success-thinking-reply-thought-summary.txt", thoughts: 3,
			reasoningHas: "**Exploring Sky Color**\n\nI've zeroed in on the core question",
			wantTxt:      "The sky is blue because tiny gas molecules in Earth's atmosphere scatter blue light from the sun more efficiently than other colors. Blue light has shorter, smaller wavelengths, causing it to be scattered in all directions, making the sky appear blue to our eyes.",
			wantFinish:   "stop"},
		{file: "gemini/googleai/streaming-success-thinking-function-call-thought-summary-signature.txt", thoughts: 2,
			reasoningHas: "**Determining the Approach**\n\nI'm now zeroing in on the best method.",
			wantCalls:    []providers.ToolCall{{Name: "now", Arguments: "{}"}}, wantFinish: "tool_calls"},
	} {
		t.Run(path.Base(tc.file), func(t *testing.T) {
			raw := testdata(t, tc.file)
			// The thought texts, in order, as recorded.
			var want strings.Builder
			for _, line := range strings.Split(raw, "\n") {
				data, ok := strings.CutPrefix(line, "data: ")
				if !ok {
					continue
				}
				var ev struct {
					Candidates []struct {
						Content struct {
							Parts []struct {
								Text    string `json:"text"`
								Thought bool   `json:"thought"`
							} `json:"parts"`
						} `json:"content"`
					} `json:"candidates"`
				}
				if err := json.Unmarshal([]byte(data), &ev); err != nil {
					t.Fatal(err)
				}
				for _, p := range ev.Candidates[0].Content.Parts {
					if p.Thought {
						want.WriteString(p.Text)
					}
				}
			}
			up := newFakeUpstream(t, "text/event-stream", raw)
			s, err := up.provider(t, providers.FormatGemini).Stream(context.Background(), thinkingUser("gemini-2.5-flash", &providers.Thinking{Effort: "low"}))
			if err != nil {
				t.Fatal(err)
			}
			chunks := collect(t, s)
			reasoning, text, order := streamed(t, chunks)
			if reasoning != want.String() || !strings.Contains(reasoning, tc.reasoningHas) {
				t.Errorf("reasoning = %q\nwant %q", reasoning, want.String())
			}
			if strings.Contains(reasoning, "CiIBVKhc7") || strings.Contains(text, "CiIBVKhc7") {
				t.Error("the thought signature was relayed")
			}
			if text != tc.wantTxt {
				t.Errorf("text = %q, want %q", text, tc.wantTxt)
			}
			n := 0
			for _, o := range order {
				if strings.HasPrefix(o, "R:") {
					n++
				} else if n < tc.thoughts {
					t.Errorf("%s before the reasoning ended: %q", o, order)
				}
			}
			if n != tc.thoughts {
				t.Errorf("%d reasoning chunks, want %d", n, tc.thoughts)
			}
			var calls []providers.ToolCall
			finish := ""
			for _, c := range chunks {
				for _, d := range c.ToolCalls {
					calls = append(calls, providers.ToolCall{ID: d.ID, Name: d.Name, Arguments: d.Arguments})
				}
				if c.FinishReason != "" {
					finish = c.FinishReason
				}
			}
			checkCalls(t, calls, tc.wantCalls)
			if finish != tc.wantFinish {
				t.Errorf("finish = %q, want %q", finish, tc.wantFinish)
			}
			if got := jsonOf(up.last(t)["generationConfig"]); got != `{"thinkingConfig":{"includeThoughts":true,"thinkingBudget":1024}}` {
				t.Errorf("generationConfig = %s", got)
			}
		})
	}
}

// captureTransport records request bodies and answers each with body, without a network:
// it lets a test see what an adapter configured for OpenAI's real base URL would send.
type captureTransport struct {
	mu     sync.Mutex
	bodies [][]byte
	body   string
}

// RoundTrip implements http.RoundTripper.
func (c *captureTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	b, _ := io.ReadAll(r.Body)
	c.mu.Lock()
	c.bodies = append(c.bodies, b)
	c.mu.Unlock()
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(c.body)), Request: r}, nil
}

// openAIAnswer is a minimal chat completion; message is the message object's members.
func openAIAnswer(message string) string {
	return `{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant",` + message + `},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":9}}`
}

// sentReasoningEffort is the reasoning_effort of the last body (reasoning.effort of a
// Responses API body, where a request asking a reasoning model for its reasoning goes), "-"
// when it has none.
func sentReasoningEffort(t *testing.T, m map[string]any) string {
	t.Helper()
	v, ok := m["reasoning_effort"]
	if _, responses := m["input"]; responses {
		r, _ := m["reasoning"].(map[string]any)
		v, ok = r["effort"]
	}
	if !ok {
		return "-"
	}
	s, _ := v.(string)
	return s
}

// TestOpenAIThinkingReasoningEffort: on OpenAI's own API, Thinking becomes the reasoning
// effort (reasoning.effort: Thinking takes a reasoning model to the Responses API) for its
// reasoning models only ("max"/"xhigh" high, "minimal" kept for gpt-5 and low for
// the o-series, a budget read as an effort); a request's own ReasoningEffort is sent as it
// is; compatible upstreams get nothing from Thinking.
func TestOpenAIThinkingReasoningEffort(t *testing.T) {
	up := newFakeUpstream(t, "application/json", openAIAnswer(`"content":"ok"`))
	p := up.provider(t, providers.FormatOpenAI) // named "openai"
	for _, tc := range []struct {
		model    string
		thinking *providers.Thinking
		own      string // the request's ReasoningEffort
		want     string // "-" for none
	}{
		{"o3", &providers.Thinking{Effort: "high"}, "", "high"},
		{"o3", &providers.Thinking{Effort: "minimal"}, "", "low"},
		{"o3-mini", &providers.Thinking{Effort: "none"}, "", "low"},
		{"o3-pro", &providers.Thinking{Effort: "max"}, "", "high"},
		{"o4-mini", &providers.Thinking{Effort: "xhigh"}, "", "high"},
		{"o1", &providers.Thinking{Effort: "Medium"}, "", "medium"},
		{"o1-2024-12-17", &providers.Thinking{BudgetTokens: 900}, "", "low"},
		{"gpt-5", &providers.Thinking{Effort: "minimal"}, "", "minimal"},
		{"gpt-5-mini", &providers.Thinking{Effort: "max"}, "", "high"},
		{"gpt-5-nano", &providers.Thinking{BudgetTokens: 2000}, "", "medium"},
		{"gpt-5", &providers.Thinking{BudgetTokens: 20000}, "", "high"},
		{"gpt-5.1", &providers.Thinking{}, "", "medium"},
		{"gpt-5", &providers.Thinking{BudgetTokens: 20000, Effort: "low"}, "", "low"},
		// A request's own reasoning_effort wins, and is sent as today with or without Thinking.
		{"o3", &providers.Thinking{Effort: "high"}, "low", "low"},
		{"gpt-5", &providers.Thinking{Effort: "minimal"}, "medium", "medium"},
		{"gpt-5", nil, "high", "high"},
		{"gpt-6-preview", nil, "high", "high"}, // a model not known to refuse it gets it
		// ... except on OpenAI's models known to refuse it (a fallback from a reasoning
		// model): the field would fail the call, as OpenAI answers gpt-4o-mini.
		{"gpt-4o", &providers.Thinking{Effort: "high"}, "medium", "-"},
		{"gpt-4o-mini", nil, "high", "-"},
		{"gpt-5-chat-latest", nil, "low", "-"},
		// Models that take no reasoning_effort.
		{"gpt-4o", &providers.Thinking{Effort: "high"}, "", "-"},
		{"gpt-4.1-mini", &providers.Thinking{Effort: "high"}, "", "-"},
		{"o1-mini", &providers.Thinking{Effort: "high"}, "", "-"},
		{"o1-preview-2024-09-12", &providers.Thinking{Effort: "high"}, "", "-"},
		{"gpt-5-chat-latest", &providers.Thinking{Effort: "high"}, "", "-"},
		{"o3", nil, "", "-"},
	} {
		req := thinkingUser(tc.model, tc.thinking)
		req.ReasoningEffort = tc.own
		if _, err := p.Complete(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		if got := sentReasoningEffort(t, up.last(t)); got != tc.want {
			t.Errorf("%s %+v own %q: reasoning_effort = %q, want %q", tc.model, tc.thinking, tc.own, got, tc.want)
		}
		if req.ReasoningEffort != tc.own {
			t.Errorf("%s: the request's ReasoningEffort became %q", tc.model, req.ReasoningEffort)
		}
	}

	// Compatible upstreams (presets, custom servers) get no reasoning_effort from Thinking,
	// even for OpenAI model names; their own ReasoningEffort still goes.
	for _, name := range []string{"deepseek", "openrouter", "groq", "my-vllm"} {
		cp, err := providers.New(providers.FormatOpenAI, providers.Config{Name: name, BaseURL: up.srv.URL + "/v1", APIKey: testKey, HTTPClient: up.srv.Client()})
		if err != nil {
			t.Fatal(err)
		}
		for _, model := range []string{"o3", "gpt-5", "deepseek-reasoner"} {
			if _, err := cp.Complete(context.Background(), thinkingUser(model, &providers.Thinking{Effort: "high"})); err != nil {
				t.Fatal(err)
			}
			if got := sentReasoningEffort(t, up.last(t)); got != "-" {
				t.Errorf("%s %s: reasoning_effort = %q, want none", name, model, got)
			}
		}
		req := thinkingUser("o3", &providers.Thinking{Effort: "high"})
		req.ReasoningEffort = "low"
		if _, err := cp.Complete(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		if got := sentReasoningEffort(t, up.last(t)); got != "low" {
			t.Errorf("%s: own reasoning_effort = %q, want low", name, got)
		}
	}

	// A provider of another name on OpenAI's default base URL is OpenAI's API too.
	ct := &captureTransport{body: openAIAnswer(`"content":"ok"`)}
	op, err := providers.New(providers.FormatOpenAI, providers.Config{Name: "openai-eu", APIKey: testKey, HTTPClient: &http.Client{Transport: ct}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := op.Complete(context.Background(), thinkingUser("gpt-5", &providers.Thinking{Effort: "minimal"})); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(ct.bodies[len(ct.bodies)-1], &m); err != nil {
		t.Fatal(err)
	}
	if got := sentReasoningEffort(t, m); got != "minimal" {
		t.Errorf("default base URL: reasoning_effort = %q, want minimal", got)
	}
}

// TestOpenAIHistoryReasoningNotSent: Message.Reasoning is Anthropic's; OpenAI-format
// upstreams (DeepSeek refuses reasoning_content in its input) get the assistant turn's
// content alone, on OpenAI's API and compatible ones, streamed or not.
func TestOpenAIHistoryReasoningNotSent(t *testing.T) {
	up := newFakeUpstream(t, "application/json", openAIAnswer(`"content":"ok"`))
	want := `[{"content":"Hi","role":"user"},{"content":"Hello.","role":"assistant"},{"content":"Again?","role":"user"}]`
	for _, name := range []string{"openai", "deepseek"} {
		p, err := providers.New(providers.FormatOpenAI, providers.Config{Name: name, BaseURL: up.srv.URL + "/v1", APIKey: testKey, HTTPClient: up.srv.Client()})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Complete(context.Background(), historyWithReasoning("deepseek-reasoner")); err != nil {
			t.Fatal(err)
		}
		if got := jsonOf(up.last(t)["messages"]); got != want {
			t.Errorf("%s: messages = %s\nwant %s", name, got, want)
		}
		up.mu.Lock()
		raw := string(up.bodies[len(up.bodies)-1])
		up.mu.Unlock()
		if strings.Contains(raw, "SECRET") || strings.Contains(raw, "reasoning") {
			t.Errorf("%s: body carries reasoning: %s", name, raw)
		}
	}
}

// TestOpenAICompleteReasoning: compatible servers' reasoning_content or reasoning string is
// the answer's one reasoning block (reasoning_content preferred); a reasoning value that is
// not a string is ignored without failing the answer.
func TestOpenAICompleteReasoning(t *testing.T) {
	for _, tc := range []struct {
		message string
		want    []providers.ReasoningBlock
	}{
		{`"content":"4","reasoning_content":"2+2 is 4."`, []providers.ReasoningBlock{{Text: "2+2 is 4."}}}, // DeepSeek, vLLM
		{`"content":"4","reasoning":"Adding: 4.","reasoning_details":[{"type":"reasoning.text","text":"Adding: 4."}]`, // OpenRouter
			[]providers.ReasoningBlock{{Text: "Adding: 4."}}},
		{`"content":"4","reasoning_content":"from content","reasoning":"from reasoning"`, []providers.ReasoningBlock{{Text: "from content"}}},
		{`"content":"4","reasoning_content":null,"reasoning":"only reasoning"`, []providers.ReasoningBlock{{Text: "only reasoning"}}},
		{`"content":"4","reasoning_content":"","reasoning":"only reasoning"`, []providers.ReasoningBlock{{Text: "only reasoning"}}},
		{`"content":"4","reasoning":{"effort":"low","summary":null}`, nil},
		{`"content":"4","reasoning":["a"],"reasoning_content":7`, nil},
		{`"content":"4","reasoning_content":{"text":"x"},"reasoning":"string wins"`, []providers.ReasoningBlock{{Text: "string wins"}}},
		{`"content":"4","reasoning_content":"esc \"q\" \u00e9"`, []providers.ReasoningBlock{{Text: `esc "q" é`}}},
		{`"content":"4","reasoning":null`, nil},
		{`"content":"4"`, nil},
	} {
		up := newFakeUpstream(t, "application/json", openAIAnswer(tc.message))
		resp, err := up.provider(t, providers.FormatOpenAI).Complete(context.Background(), thinkingUser("deepseek-reasoner", nil))
		if err != nil {
			t.Fatalf("%s: %v", tc.message, err)
		}
		if !reflect.DeepEqual(resp.Reasoning, tc.want) || resp.Text != "4" {
			t.Errorf("%s: reasoning %+v text %q, want %+v", tc.message, resp.Reasoning, resp.Text, tc.want)
		}
	}
}

// openAIEvents is an OpenAI-format stream of the given chunk objects, then [DONE].
func openAIEvents(events ...string) string {
	var b strings.Builder
	for _, e := range events {
		b.WriteString("data: " + e + "\n\n")
	}
	return b.String() + "data: [DONE]\n\n"
}

// TestOpenAIStreamReasoning: streamed reasoning_content / reasoning deltas are reasoning
// chunks, apart from text: an event with both gives its reasoning first, then the rest (text,
// calls, finish) as the next chunk. Events alike but for their text, which the decoder reads
// through its template, keep their reasoning or its absence right.
func TestOpenAIStreamReasoning(t *testing.T) {
	ds := func(delta string) string {
		return `{"id":"c","object":"chat.completion.chunk","created":1,"model":"deepseek-reasoner","choices":[{"index":0,"delta":` + delta + `,"logprobs":null,"finish_reason":null}]}`
	}
	finish := `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":9}}`
	for _, tc := range []struct {
		name   string
		events []string
		want   []string
	}{
		{"deepseek", []string{
			ds(`{"role":"assistant","content":null,"reasoning_content":""}`),
			ds(`{"content":null,"reasoning_content":"Let"}`),
			ds(`{"content":null,"reasoning_content":" me"}`),
			ds(`{"content":null,"reasoning_content":" see."}`),
			ds(`{"content":"Hi","reasoning_content":null}`),
			ds(`{"content":" there","reasoning_content":null}`),
			ds(`{"content":"!","reasoning_content":null}`),
			finish,
		}, []string{"R:Let", "R: me", "R: see.", "T:Hi", "T: there", "T:!", "F:stop"}},
		{"vllm", []string{
			ds(`{"reasoning_content":"a"}`), ds(`{"reasoning_content":"b"}`), ds(`{"content":"c"}`), ds(`{"content":"d"}`), finish,
		}, []string{"R:a", "R:b", "T:c", "T:d", "F:stop"}},
		{"openrouter", []string{
			ds(`{"role":"assistant","content":"","reasoning":"Think","reasoning_details":[{"type":"reasoning.text","text":"Think"}]}`),
			ds(`{"role":"assistant","content":"","reasoning":"ing","reasoning_details":[{"type":"reasoning.text","text":"ing"}]}`),
			ds(`{"role":"assistant","content":"Yes","reasoning":null}`),
			ds(`{"role":"assistant","content":"!","reasoning":null}`),
			finish,
		}, []string{"R:Think", "R:ing", "T:Yes", "T:!", "F:stop"}},
		// The text template must not serve an event with reasoning, nor lose text after one.
		{"alternating", []string{
			ds(`{"content":"a","reasoning":""}`), ds(`{"content":"b","reasoning":""}`),
			ds(`{"content":"c","reasoning":"r1"}`), ds(`{"content":"c2","reasoning":"r1"}`), ds(`{"content":"d","reasoning":""}`),
			ds(`{"content":"","reasoning":"r2"}`), ds(`{"content":"e","reasoning":""}`),
			finish,
		}, []string{"T:a", "T:b", "R:r1", "T:c", "R:r1", "T:c2", "T:d", "R:r2", "T:e", "F:stop"}},
		{"mixed events", []string{
			ds(`{"content":"Hi","reasoning_content":"first"}`),
			ds(`{"reasoning_content":"call","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"now","arguments":"{}"}}]}`),
			`{"choices":[{"index":0,"delta":{"reasoning":"last"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":9}}`,
		}, []string{"R:first", "T:Hi", "R:call", "C:now", "R:last", "F:stop"}},
		{"both names", []string{
			ds(`{"reasoning_content":"kept","reasoning":"dropped"}`), ds(`{"reasoning_content":null,"reasoning":"fallback"}`), finish,
		}, []string{"R:kept", "R:fallback", "F:stop"}},
		{"not a string", []string{
			ds(`{"content":"x","reasoning":{"effort":"low"}}`), ds(`{"content":"y","reasoning":[1]}`), ds(`{"reasoning_content":3}`), finish,
		}, []string{"T:x", "T:y", "F:stop"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := newFakeUpstream(t, "text/event-stream", openAIEvents(tc.events...))
			p, err := providers.New(providers.FormatOpenAI, providers.Config{Name: "deepseek", BaseURL: up.srv.URL + "/v1", APIKey: testKey, HTTPClient: up.srv.Client()})
			if err != nil {
				t.Fatal(err)
			}
			s, err := p.Stream(context.Background(), thinkingUser("deepseek-reasoner", &providers.Thinking{}))
			if err != nil {
				t.Fatal(err)
			}
			chunks := collect(t, s)
			if _, _, order := streamed(t, chunks); !slices.Equal(order, tc.want) {
				t.Errorf("chunks %q\nwant %q", order, tc.want)
			}
			if tc.name == "alternating" { // reasoning after text starts a new block each time
				var blocks []int
				for _, c := range chunks {
					if c.Reasoning != nil {
						blocks = append(blocks, c.Reasoning.Index)
					}
				}
				if !slices.Equal(blocks, []int{0, 1, 2}) {
					t.Errorf("reasoning block indexes %v, want [0 1 2]", blocks)
				}
			}
			if last := chunks[len(chunks)-1]; last.Usage == nil || last.Usage.CompletionTokens != 9 {
				t.Errorf("last chunk %+v, want the usage", last)
			}
		})
	}
}

// BenchmarkGeminiThoughtStream relays a stream of thought-summary events (each with a piece
// of text too), for comparison with BenchmarkGeminiTextStream.
func BenchmarkGeminiThoughtStream(b *testing.B) {
	benchGeminiStream(b, `{"candidates":[{"content":{"parts":[{"text":"hmm ","thought":true},{"text":"tok7 "}],"role":"model"},"index":0}],"modelVersion":"gemini-2.5-flash","responseId":"r1"}`)
}

// benchOpenAIStream relays an OpenAI-format stream of 1000 events, taking each of events
// in turn, through a compatible preset's adapter.
func benchOpenAIStream(b *testing.B, events ...string) {
	var body strings.Builder
	for i := range 1000 {
		body.WriteString("data: " + events[i%len(events)] + "\n\n")
	}
	body.WriteString("data: [DONE]\n\n")
	p := providers.NewOpenAI(providers.Config{Name: "deepseek", APIKey: testKey, HTTPClient: &http.Client{Transport: replayTransport{[]byte(body.String())}}})
	req := &providers.Request{Model: "deepseek-reasoner", Messages: []providers.Message{{Role: "user", Content: "Hi"}}}
	benchRelay(b, p, req)
}

// BenchmarkOpenAITextStreamFullWalk: plain text events of two layouts in turn, so none is
// read through the template (the full walk's cost on text, which reasoning must not raise).
func BenchmarkOpenAITextStreamFullWalk(b *testing.B) {
	benchOpenAIStream(b,
		`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"tok7 ","reasoning_content":null},"finish_reason":null}]}`,
		`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"tok8 "},"finish_reason":null}]}`)
}

// BenchmarkOpenAIReasoningStream: DeepSeek-style reasoning_content events.
func BenchmarkOpenAIReasoningStream(b *testing.B) {
	benchOpenAIStream(b, `{"id":"c","object":"chat.completion.chunk","created":1,"model":"deepseek-reasoner","choices":[{"index":0,"delta":{"content":null,"reasoning_content":"hmm "},"logprobs":null,"finish_reason":null}]}`)
}

// TestOpenAIReasoningNullsCostNothing: the text events of reasoning servers, which carry
// "reasoning_content": null or "reasoning": "", cost the allocations of text events without
// them, through the template and through the full walk (two layouts in turn).
func TestOpenAIReasoningNullsCostNothing(t *testing.T) {
	allocs := func(events ...string) float64 {
		var body strings.Builder
		for i := range 200 {
			body.WriteString("data: " + events[i%len(events)] + "\n\n")
		}
		body.WriteString("data: [DONE]\n\n")
		p := providers.NewOpenAI(providers.Config{Name: "deepseek", APIKey: testKey, HTTPClient: &http.Client{Transport: replayTransport{[]byte(body.String())}}})
		req := thinkingUser("deepseek-reasoner", nil)
		return testing.AllocsPerRun(10, func() {
			s, err := p.Stream(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			for {
				if _, err := s.Recv(); err != nil {
					if err != io.EOF {
						t.Fatal(err)
					}
					return
				}
			}
		})
	}
	ev := func(delta string) string {
		return `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":` + delta + `,"finish_reason":null}]}`
	}
	for _, tc := range []struct {
		name        string
		plain, with []string
	}{
		{"template", []string{ev(`{"content":"tok "}`)}, []string{ev(`{"content":"tok ","reasoning_content":null,"reasoning":""}`)}},
		{"full walk", []string{ev(`{"content":"tok "}`), ev(`{"role":"assistant","content":"tok "}`)},
			[]string{ev(`{"content":"tok ","reasoning_content":null}`), ev(`{"role":"assistant","content":"tok ","reasoning":""}`)}},
	} {
		plain, with := allocs(tc.plain...), allocs(tc.with...)
		if with > plain+20 { // one more per event would be 200 more
			t.Errorf("%s: %.0f allocations for 200 text events with reasoning nulls, %.0f without", tc.name, with, plain)
		}
		t.Logf("%s: %.0f allocations with reasoning nulls, %.0f without", tc.name, with, plain)
	}
}

// TestOpenAIReasoningModelSampling: OpenAI's reasoning models get no sampling settings but
// their defaults (they refuse others: a fallback from GPT-4o with temperature 0.2 used to
// fail there); other models, and compatible servers, get them as sent.
func TestOpenAIReasoningModelSampling(t *testing.T) {
	up := newFakeUpstream(t, "application/json", openAIAnswer(`"content":"ok"`))
	temp, topP, pen := 0.2, 0.5, 0.3
	for _, c := range []struct {
		name, model string
		dropped     bool
	}{
		{"openai", "o3", true}, {"openai", "gpt-5-mini", true}, {"openai", "o1-mini", true},
		{"openai", "gpt-4o", false}, {"openai", "gpt-5-chat-latest", false}, {"deepseek", "o3", false},
	} {
		p, err := providers.New(providers.FormatOpenAI, providers.Config{Name: c.name, BaseURL: up.srv.URL + "/v1", APIKey: testKey, HTTPClient: up.srv.Client()})
		if err != nil {
			t.Fatal(err)
		}
		req := thinkingUser(c.model, nil)
		req.Temperature, req.TopP, req.PresencePenalty = &temp, &topP, &pen
		if _, err := p.Complete(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		sent := up.last(t)
		_, hasT := sent["temperature"]
		_, hasP := sent["top_p"]
		_, hasPen := sent["presence_penalty"]
		if hasT == c.dropped || hasP == c.dropped || hasPen == c.dropped {
			t.Errorf("%s %s: temperature %v top_p %v presence_penalty %v, want dropped %v", c.name, c.model, hasT, hasP, hasPen, c.dropped)
		}
	}
}
