package providers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// benchAnthropicStream decodes an Anthropic stream of n text_delta events (or tool_use
// input_json_delta events), so the plain paths' allocations can be compared when the
// stream learns new block types.
func benchAnthropicStream(b *testing.B, tool bool) {
	var body bytes.Buffer
	const n = 1000
	body.WriteString("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5\",\"content\":[],\"usage\":{\"input_tokens\":12,\"output_tokens\":1}}}\n\n")
	if tool {
		body.WriteString("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"get_weather\",\"input\":{}}}\n\n")
	} else {
		body.WriteString("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n")
	}
	for range n {
		if tool {
			body.WriteString("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"ation\"}}\n\n")
		} else {
			body.WriteString("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"tok7 \"}}\n\n")
		}
	}
	body.WriteString("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n")
	body.WriteString("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":1000}}\n\n")
	body.WriteString("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	raw := body.Bytes()
	b.ReportAllocs()
	for b.Loop() {
		ctx, cancel := context.WithCancelCause(context.Background())
		c := &call{ctx: ctx, cancel: cancel, timer: time.AfterFunc(time.Hour, func() {}), body: bytes.NewReader(raw),
			resp: &http.Response{Body: io.NopCloser(nil)}}
		s := &anthropicStream{streamState: newStreamState(c)}
		for {
			if _, err := s.Recv(); err != nil {
				if err != io.EOF {
					b.Fatal(err)
				}
				break
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/chunk")
}

// The plain text and tool-input paths of the Anthropic stream, 1,000 fragments each.
func BenchmarkAnthropicTextDelta(b *testing.B)  { benchAnthropicStream(b, false) }
func BenchmarkAnthropicInputDelta(b *testing.B) { benchAnthropicStream(b, true) }

// thkAnswer is a minimal whole Anthropic answer, for tests that look only at what was
// sent.
const thkAnswer = `{"id":"msg_1","type":"message","role":"assistant","model":"claude","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":3,"output_tokens":1}}`

// thkUpstream serves answer (of contentType) to every request and returns an adapter
// pointed at it and a func returning the last request body received.
func thkUpstream(t *testing.T, contentType, answer string) (*Anthropic, func() []byte) {
	t.Helper()
	var mu sync.Mutex
	var last []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		last = b
		mu.Unlock()
		w.Header().Set("Content-Type", contentType)
		io.WriteString(w, answer)
	}))
	t.Cleanup(srv.Close)
	return NewAnthropic(Config{BaseURL: srv.URL, APIKey: "k", HTTPClient: srv.Client()}), func() []byte {
		mu.Lock()
		defer mu.Unlock()
		if last == nil {
			t.Fatal("no request reached the upstream")
		}
		return last
	}
}

// thkSentRaw sends req (not streamed) to a fake Anthropic upstream and returns the request
// body as it was sent.
func thkSentRaw(t *testing.T, req *Request) []byte {
	t.Helper()
	a, last := thkUpstream(t, "application/json", thkAnswer)
	if _, err := a.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	return last()
}

// thkSent is thkSentRaw decoded.
func thkSent(t *testing.T, req *Request) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(thkSentRaw(t, req), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// thkReq is a one-question request to model with thinking th.
func thkReq(model string, th *Thinking) *Request {
	return &Request{Model: model, Messages: []Message{{Role: "user", Content: "What is 27 * 453?"}}, Thinking: th}
}

// thkJSON is v as compact JSON, "" for nil (an absent member).
func thkJSON(v any) string {
	if v == nil {
		return ""
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// TestAnthropicThinksAndAdaptive pins the model classes: which Claude names take thinking
// at all, and which of them take the adaptive form.
func TestAnthropicThinksAndAdaptive(t *testing.T) {
	cases := []struct {
		model            string
		thinks, adaptive bool
	}{
		{"claude-2.1", false, false},
		{"claude-2", false, false},
		{"claude-instant-1.2", false, false},
		{"claude-instant", false, false},
		{"claude-3-opus-20240229", false, false},
		{"claude-3-haiku-20240307", false, false},
		{"claude-3-5-sonnet-20241022", false, false},
		{"claude-3-5-haiku-latest", false, false},
		{"gpt-4o", false, false},
		{"m", false, false},
		{"claude-3-7-sonnet-20250219", true, false},
		{"claude-3-7-sonnet-latest", true, false},
		{"claude-sonnet-4-20250514", true, false},
		{"claude-opus-4-20250514", true, false},
		{"claude-opus-4-1-20250805", true, false},
		{"claude-sonnet-4-5", true, false},
		{"claude-sonnet-4-5-20250929", true, false},
		{"claude-haiku-4-5", true, false},
		{"claude-opus-4-5-20251101", true, false},
		{"claude-haiku-4-6", true, false}, // adaptive is Opus and Sonnet's in 4.x
		{"claude-opus-4-6", true, true},
		{"claude-opus-4-7", true, true},
		{"claude-sonnet-4-6", true, true},
		{"claude-sonnet-4-10-20270101", true, true},
		{"Claude-Opus-4-6", true, true},
		{"anthropic.claude-opus-4-6-v1:0", true, true},
		{"claude-opus-4-6@20260101", true, true},
		{"claude-haiku-5", true, true},
		{"claude-opus-5-1", true, true},
		{"claude-5-sonnet", true, true},
		{"claude-next", true, false}, // an unknown Claude: thinking, the budget form
	}
	for _, c := range cases {
		if got := anthropicThinks(c.model); got != c.thinks {
			t.Errorf("anthropicThinks(%q) = %v, want %v", c.model, got, c.thinks)
		}
		if got := anthropicAdaptive(c.model); got != c.adaptive {
			t.Errorf("anthropicAdaptive(%q) = %v, want %v", c.model, got, c.adaptive)
		}
	}
}

// TestAnthropicThinkingByModel: the thinking member each model class gets for the same
// request — none before 3.7, a budget for 3.7 and 4.x before 4.6, adaptive with an effort
// for Opus 4.6 when no budget is given, and a budget again when one is.
func TestAnthropicThinkingByModel(t *testing.T) {
	cases := []struct {
		model            string
		th               Thinking
		thinking, output string
		maxTokens        float64
	}{
		{"claude-3-5-sonnet-20241022", Thinking{Effort: "high"}, "", "", DefaultAnthropicMaxTokens},
		{"claude-3-haiku-20240307", Thinking{BudgetTokens: 2048}, "", "", DefaultAnthropicMaxTokens},
		{"claude-3-7-sonnet-20250219", Thinking{Effort: "high"}, `{"budget_tokens":16384,"type":"enabled"}`, "", 16384 + DefaultAnthropicMaxTokens},
		{"claude-sonnet-4-5", Thinking{}, `{"budget_tokens":4096,"type":"enabled"}`, "", 4096 + DefaultAnthropicMaxTokens},
		{"claude-sonnet-4-5", Thinking{BudgetTokens: 2048}, `{"budget_tokens":2048,"type":"enabled"}`, "", 2048 + DefaultAnthropicMaxTokens},
		{"claude-opus-4-6", Thinking{Effort: "high"}, `{"type":"adaptive"}`, `{"effort":"high"}`, 16384 + DefaultAnthropicMaxTokens},
		{"claude-opus-4-6", Thinking{}, `{"type":"adaptive"}`, `{"effort":"medium"}`, 4096 + DefaultAnthropicMaxTokens},
		{"claude-sonnet-4-6", Thinking{Effort: "low"}, `{"type":"adaptive"}`, `{"effort":"low"}`, 1024 + DefaultAnthropicMaxTokens},
		{"claude-opus-4-6", Thinking{BudgetTokens: 3000}, `{"budget_tokens":3000,"type":"enabled"}`, "", 3000 + DefaultAnthropicMaxTokens},
		{"claude-opus-4-6", Thinking{Effort: "high", BudgetTokens: 3000}, `{"budget_tokens":3000,"type":"enabled"}`, "", 3000 + DefaultAnthropicMaxTokens},
	}
	for _, c := range cases {
		th := c.th
		body := thkSent(t, thkReq(c.model, &th))
		if got := thkJSON(body["thinking"]); got != c.thinking {
			t.Errorf("%s %+v: thinking %s, want %s", c.model, c.th, got, c.thinking)
		}
		if got := thkJSON(body["output_config"]); got != c.output {
			t.Errorf("%s %+v: output_config %s, want %s", c.model, c.th, got, c.output)
		}
		if body["max_tokens"] != c.maxTokens {
			t.Errorf("%s %+v: max_tokens %v, want %v", c.model, c.th, body["max_tokens"], c.maxTokens)
		}
	}
}

// TestAnthropicAdaptiveEffort: every effort maps to one of output_config.effort's values.
func TestAnthropicAdaptiveEffort(t *testing.T) {
	for effort, want := range map[string]string{"minimal": "low", "none": "low", "low": "low", "medium": "medium",
		"": "medium", "high": "high", "HIGH": "high", "max": "max", "xhigh": "max", "bogus": "medium"} {
		body := thkSent(t, thkReq("claude-opus-4-6", &Thinking{Effort: effort}))
		if got := thkJSON(body["output_config"]); got != `{"effort":"`+want+`"}` {
			t.Errorf("effort %q: output_config %s, want effort %q", effort, got, want)
		}
	}
}

// TestAnthropicThinkingBudgetAndMaxTokens: budget_tokens stays below max_tokens — the
// default max_tokens is raised by the budget, a budget not below the caller's max_tokens is
// cut to one less, and thinking is left out when that is under 1,024.
func TestAnthropicThinkingBudgetAndMaxTokens(t *testing.T) {
	cases := []struct {
		name      string
		th        Thinking
		maxTokens int
		budget    float64 // 0: no thinking
		sentMax   float64
	}{
		{"no max_tokens: raised by the budget", Thinking{BudgetTokens: 10000}, 0, 10000, 10000 + DefaultAnthropicMaxTokens},
		{"no max_tokens: budget raised to the minimum", Thinking{BudgetTokens: 100}, 0, 1024, 1024 + DefaultAnthropicMaxTokens},
		{"no max_tokens: minimal effort is the minimum", Thinking{Effort: "minimal"}, 0, 1024, 1024 + DefaultAnthropicMaxTokens},
		{"budget below max_tokens: as given", Thinking{BudgetTokens: 4096}, 10000, 4096, 10000},
		{"budget equal to max_tokens: one less", Thinking{BudgetTokens: 8000}, 8000, 7999, 8000},
		{"an explicit budget above max_tokens: one less", Thinking{BudgetTokens: 5000}, 2000, 1999, 2000},
		{"an effort's budget leaves a quarter for the answer", Thinking{Effort: "max"}, 2000, 1500, 2000},
		{"... up to an answer's default", Thinking{Effort: "max"}, 32000, 32000 - DefaultAnthropicMaxTokens, 32000},
		{"... never below the minimum", Thinking{Effort: "high"}, 1100, 1024, 1100},
		{"cut to exactly the minimum", Thinking{BudgetTokens: 4096}, 1025, 1024, 1025},
		{"cut below the minimum: no thinking", Thinking{BudgetTokens: 4096}, 1024, 0, 1024},
		{"small max_tokens: no thinking", Thinking{Effort: "low"}, 500, 0, 500},
	}
	for _, c := range cases {
		th := c.th
		req := thkReq("claude-sonnet-4-5", &th)
		req.MaxTokens = c.maxTokens
		body := thkSent(t, req)
		var budget float64
		if m, ok := body["thinking"].(map[string]any); ok {
			budget, _ = m["budget_tokens"].(float64)
		} else if body["thinking"] != nil {
			t.Fatalf("%s: thinking %v", c.name, body["thinking"])
		}
		if budget != c.budget || body["max_tokens"] != c.sentMax {
			t.Errorf("%s: budget_tokens %v max_tokens %v, want %v and %v", c.name, budget, body["max_tokens"], c.budget, c.sentMax)
		}
		if budget != 0 && budget >= body["max_tokens"].(float64) {
			t.Errorf("%s: budget_tokens %v not below max_tokens %v", c.name, budget, body["max_tokens"])
		}
	}
	// Adaptive thinking has no budget: the caller's max_tokens is kept as it is.
	req := thkReq("claude-opus-4-6", &Thinking{Effort: "max"})
	req.MaxTokens = 900
	if body := thkSent(t, req); body["max_tokens"] != 900.0 || thkJSON(body["thinking"]) != `{"type":"adaptive"}` {
		t.Errorf("adaptive with max_tokens 900: max_tokens %v thinking %v", body["max_tokens"], body["thinking"])
	}
}

// TestAnthropicThinkingSampling: with thinking on, a temperature other than 1, top_k and a
// top_p under 0.95 are left out; without it they are all sent.
func TestAnthropicThinkingSampling(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	k := 40
	cases := []struct {
		name            string
		model           string
		temp, topP      *float64
		wantTemp, wantP any
		wantK           any
	}{
		{"temperature 0.7 and top_p 0.9 dropped", "claude-sonnet-4-5", f(0.7), f(0.9), nil, nil, nil},
		{"temperature 1 and top_p 0.95 kept (Claude 4.1+: the temperature alone)", "claude-sonnet-4-5", f(1), f(0.95), 1.0, nil, nil},
		{"temperature 1 and top_p 0.95 kept", "claude-sonnet-4-20250514", f(1), f(0.95), 1.0, 0.95, nil},
		{"temperature 0 dropped, top_p 1 kept", "claude-opus-4-6", f(0), f(1), nil, 1.0, nil},
		{"no thinking: all kept", "claude-3-5-sonnet-20241022", f(0.7), f(0.9), 0.7, 0.9, 40.0},
	}
	for _, c := range cases {
		req := thkReq(c.model, &Thinking{Effort: "low"})
		req.Temperature, req.TopP, req.TopK = c.temp, c.topP, &k
		body := thkSent(t, req)
		if body["temperature"] != c.wantTemp || body["top_p"] != c.wantP || body["top_k"] != c.wantK {
			t.Errorf("%s: temperature %v top_p %v top_k %v, want %v %v %v", c.name, body["temperature"], body["top_p"], body["top_k"], c.wantTemp, c.wantP, c.wantK)
		}
	}
}

// thkWeatherTool is a caller's function for the tool tests.
var thkWeatherTool = Tool{Name: "get_weather", Description: "Weather of a city", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)}

// thkToolTurn is a history in which the assistant called get_weather with reasoning rs, the
// tool answered, and the assistant must now go on.
func thkToolTurn(rs ...ReasoningBlock) []Message {
	return []Message{
		{Role: "user", Content: "Weather in Paris?"},
		{Role: "assistant", ToolCalls: []ToolCall{{ID: "toolu_01", Name: "get_weather", Arguments: `{"city":"Paris"}`}}, Reasoning: rs},
		{Role: "tool", ToolCallID: "toolu_01", Content: "18°C, sunny"},
	}
}

// TestAnthropicThinkingLeftOutWhenRefused: a request Claude would refuse with thinking —
// a forced tool, structured output, a prefill, a last tool-calling turn without signed
// reasoning — is sent byte for byte as without Thinking; the near misses keep it.
func TestAnthropicThinkingLeftOutWhenRefused(t *testing.T) {
	withTools := func(mode, name string) *Request {
		r := thkReq("claude-sonnet-4-5", nil)
		r.Tools, r.ToolChoice = []Tool{thkWeatherTool}, &ToolChoice{Mode: mode, Name: name}
		return r
	}
	structured := func() *Request {
		r := thkReq("claude-sonnet-4-5", nil)
		r.ResponseFormat = &ResponseFormat{Type: ResponseJSONSchema, Name: "answer", Schema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`)}
		return r
	}
	prefill := func() *Request {
		r := thkReq("claude-sonnet-4-5", nil)
		r.AssistantPrefix = "The answer is"
		return r
	}
	history := func(rs ...ReasoningBlock) func() *Request {
		return func() *Request {
			return &Request{Model: "claude-sonnet-4-5", Messages: thkToolTurn(rs...), Tools: []Tool{thkWeatherTool}}
		}
	}
	refused := []struct {
		name string
		req  func() *Request
	}{
		{"tool_choice required", func() *Request { return withTools(ToolChoiceRequired, "") }},
		{"tool_choice function", func() *Request { return withTools(ToolChoiceFunction, "get_weather") }},
		{"structured output", structured},
		{"JSON mode", func() *Request {
			r := thkReq("claude-sonnet-4-5", nil)
			r.ResponseFormat = &ResponseFormat{Type: ResponseJSONObject}
			return r
		}},
		{"assistant prefix", prefill},
		{"last tool turn without reasoning (answered by GPT)", history()},
		{"last tool turn with unsigned reasoning only", history(ReasoningBlock{Text: "the user wants weather"})},
		{"a loop begun without reasoning, signed later", func() *Request {
			msgs := append(thkToolTurn(), Message{Role: "assistant", ToolCalls: []ToolCall{{ID: "toolu_02", Name: "get_weather", Arguments: `{}`}},
				Reasoning: []ReasoningBlock{{Text: "again", Signature: "sig"}}}, Message{Role: "tool", ToolCallID: "toolu_02", Content: "rain"})
			return &Request{Model: "claude-sonnet-4-5", Messages: msgs, Tools: []Tool{thkWeatherTool}}
		}},
	}
	for _, c := range refused {
		want := thkSentRaw(t, c.req())
		req := c.req()
		req.Thinking = &Thinking{Effort: "high"}
		if got := thkSentRaw(t, req); string(got) != string(want) {
			t.Errorf("%s: sent with Thinking\n%s\nwant as without it\n%s", c.name, got, want)
		}
	}

	kept := []struct {
		name string
		req  func() *Request
	}{
		{"tool_choice auto", func() *Request { return withTools(ToolChoiceAuto, "") }},
		{"tool_choice none", func() *Request { return withTools(ToolChoiceNone, "") }},
		{"last tool turn with a signed block", history(ReasoningBlock{Text: "weather: call the tool", Signature: "sig"})},
		{"last tool turn with a redacted block", history(ReasoningBlock{Redacted: "EmwKAhgB"})},
		{"a loop's later calls without reasoning (Claude thinks at the turn's start)", func() *Request {
			msgs := append(thkToolTurn(ReasoningBlock{Text: "weather: call the tool", Signature: "sig"}),
				Message{Role: "assistant", Content: "Checking Rome too.", ToolCalls: []ToolCall{{ID: "toolu_02", Name: "get_weather", Arguments: `{}`}}},
				Message{Role: "tool", ToolCallID: "toolu_02", Content: "rain"},
				Message{Role: "user", Content: "<system-reminder>sent with the results</system-reminder>"})
			return &Request{Model: "claude-sonnet-4-5", Messages: msgs, Tools: []Tool{thkWeatherTool}}
		}},
		{"unsigned tool turn followed by a text answer", func() *Request {
			msgs := append(thkToolTurn(), Message{Role: "assistant", Content: "It is sunny."}, Message{Role: "user", Content: "And Rome?"})
			return &Request{Model: "claude-sonnet-4-5", Messages: msgs, Tools: []Tool{thkWeatherTool}}
		}},
	}
	for _, c := range kept {
		req := c.req()
		req.Thinking = &Thinking{Effort: "high"}
		if body := thkSent(t, req); body["thinking"] == nil {
			t.Errorf("%s: thinking left out", c.name)
		}
	}
}

// thkBlockTypes lists the types of the content blocks of a sent turn ("string" for a string
// content).
func thkBlockTypes(turn any) []string {
	m := turn.(map[string]any)
	blocks, ok := m["content"].([]any)
	if !ok {
		return []string{"string"}
	}
	var out []string
	for _, b := range blocks {
		out = append(out, b.(map[string]any)["type"].(string))
	}
	return out
}

// TestAnthropicThinkingHistory: with thinking on, an assistant turn's signed and redacted
// reasoning goes first in its turn, unsigned reasoning is dropped, and a text turn with
// reasoning becomes blocks; with thinking off no reasoning is sent at all.
func TestAnthropicThinkingHistory(t *testing.T) {
	msgs := []Message{
		{Role: "user", Content: "What is 27 * 453?"},
		{Role: "assistant", Content: "12231.", Reasoning: []ReasoningBlock{{Text: "27*453 = 12231", Signature: "sig-1"}}},
		{Role: "user", Content: "Weather in Paris?"},
		{Role: "assistant", Content: "Let me check.", ToolCalls: []ToolCall{{ID: "toolu_01", Name: "get_weather", Arguments: `{"city":"Paris"}`}},
			Reasoning: []ReasoningBlock{
				{Text: "from GPT: no signature"},
				{Text: "", Signature: "sig-2"}, // text omitted by the API: still sent, with its member
				{Redacted: "EmwKAhgBEgy3"},
			}},
		{Role: "tool", ToolCallID: "toolu_01", Content: "18°C"},
		{Role: "assistant", Content: "It is 18°C.", Reasoning: []ReasoningBlock{{Text: "from Gemini: unsigned"}}},
		{Role: "assistant", Content: " ", Reasoning: []ReasoningBlock{{Text: "signed but empty turn", Signature: "sig-3"}}},
		{Role: "user", Content: "Thanks"},
	}
	req := &Request{Model: "claude-sonnet-4-5", Messages: msgs, Tools: []Tool{thkWeatherTool}, Thinking: &Thinking{BudgetTokens: 2048}}
	body := thkSent(t, req)
	if body["thinking"] == nil {
		t.Fatal("thinking left out")
	}
	turns := body["messages"].([]any)
	var shapes [][]string
	for _, turn := range turns {
		shapes = append(shapes, thkBlockTypes(turn))
	}
	want := [][]string{{"string"}, {"thinking", "text"}, {"string"}, {"thinking", "redacted_thinking", "text", "tool_use"}, {"tool_result"}, {"string"}, {"string"}}
	if thkJSON(shapes) != thkJSON(want) {
		t.Fatalf("turn shapes %v, want %v (the empty assistant turn left out)", shapes, want)
	}
	first := turns[1].(map[string]any)["content"].([]any)
	if thkJSON(first[0]) != `{"signature":"sig-1","thinking":"27*453 = 12231","type":"thinking"}` || thkJSON(first[1]) != `{"text":"12231.","type":"text"}` {
		t.Errorf("text turn with reasoning: %s", thkJSON(first))
	}
	call := turns[3].(map[string]any)["content"].([]any)
	if thkJSON(call[0]) != `{"signature":"sig-2","thinking":"","type":"thinking"}` || thkJSON(call[1]) != `{"data":"EmwKAhgBEgy3","type":"redacted_thinking"}` {
		t.Errorf("tool turn reasoning: %s", thkJSON(call[:2]))
	}
	if raw := string(thkSentRaw(t, req)); strings.Contains(raw, "from GPT") || strings.Contains(raw, "from Gemini") || strings.Contains(raw, "signed but empty") {
		t.Errorf("unsigned reasoning or an empty turn was sent: %s", raw)
	}

	// Thinking off (not asked for, or a model without it): no reasoning, turns as before.
	for _, r := range []*Request{
		{Model: "claude-sonnet-4-5", Messages: msgs, Tools: []Tool{thkWeatherTool}},
		{Model: "claude-3-5-sonnet-20241022", Messages: msgs, Tools: []Tool{thkWeatherTool}, Thinking: &Thinking{Effort: "high"}},
	} {
		raw := thkSentRaw(t, r)
		if strings.Contains(string(raw), "thinking") || strings.Contains(string(raw), "sig-") {
			t.Errorf("%s without thinking sent reasoning: %s", r.Model, raw)
		}
		var b map[string]any
		json.Unmarshal(raw, &b)
		var shapes [][]string
		for _, turn := range b["messages"].([]any) {
			shapes = append(shapes, thkBlockTypes(turn))
		}
		want := [][]string{{"string"}, {"string"}, {"string"}, {"text", "tool_use"}, {"tool_result"}, {"string"}, {"string"}}
		if thkJSON(shapes) != thkJSON(want) {
			t.Errorf("%s without thinking: turn shapes %v, want %v", r.Model, shapes, want)
		}
	}
}

// TestAnthropicThinkingCacheControl: the prompt-cache breakpoint of the conversation lands
// on the last block that is not reasoning — Anthropic refuses cache_control on thinking.
func TestAnthropicThinkingCacheControl(t *testing.T) {
	msgs := []Message{
		{Role: "user", Content: "What is 27 * 453?"},
		{Role: "assistant", Content: "12231.", Reasoning: []ReasoningBlock{{Text: "27*453", Signature: "sig"}, {Redacted: "xyz"}}},
	}
	body := thkSent(t, &Request{Model: "claude-sonnet-4-5", Messages: msgs, PromptCache: true, Thinking: &Thinking{}})
	turns := body["messages"].([]any)
	blocks := turns[len(turns)-1].(map[string]any)["content"].([]any)
	for i, b := range blocks {
		_, marked := b.(map[string]any)["cache_control"]
		if marked != (i == len(blocks)-1) {
			t.Errorf("block %d (%s): cache_control %v", i, thkJSON(b), marked)
		}
	}
	if thkBlockTypes(turns[len(turns)-1])[2] != "text" {
		t.Fatalf("last turn %s", thkJSON(blocks))
	}

	// A turn that ends in reasoning (not one body builds, but markCachePrefix must not care).
	b := anthropicRequest{Messages: []anthropicMessage{{Role: "assistant", Content: []anthropicBlock{
		{Type: "text", Text: "a"}, {Type: "thinking", Signature: "s"}, {Type: "redacted_thinking", Data: "d"}}}}}
	markCachePrefix(&b, "", "", "")
	got := b.Messages[0].Content.([]anthropicBlock)
	if got[0].CacheControl == nil || got[1].CacheControl != nil || got[2].CacheControl != nil {
		t.Errorf("cache_control on %+v", got)
	}
}

// TestAnthropicRequestWithoutThinkingUnchanged: a request without Thinking (or whose model
// cannot think) is the same body, byte for byte, as before thinking existed.
func TestAnthropicRequestWithoutThinkingUnchanged(t *testing.T) {
	temp, k := 0.3, 5
	req := func(model string) *Request {
		return &Request{Model: model, MaxTokens: 300, Temperature: &temp, TopK: &k, PromptCache: true,
			Messages: []Message{
				{Role: "system", Content: "Be brief."},
				{Role: "user", Content: "Weather in Paris?"},
				{Role: "assistant", ToolCalls: []ToolCall{{ID: "toolu_01", Name: "get_weather", Arguments: `{"city":"Paris"}`}},
					Reasoning: []ReasoningBlock{{Text: "r", Signature: "s"}}},
				{Role: "tool", ToolCallID: "toolu_01", Content: "18C"},
				{Role: "assistant", Content: "18C.", Reasoning: []ReasoningBlock{{Text: "r2", Signature: "s2"}}},
				{Role: "user", Content: "Thanks"},
			},
			Tools: []Tool{thkWeatherTool}}
	}
	const golden = `{"model":"claude-sonnet-4-5","max_tokens":300,"system":[{"type":"text","text":"Be brief.","cache_control":{"type":"ephemeral"}}],` +
		`"messages":[{"role":"user","content":"Weather in Paris?"},` +
		`{"role":"assistant","content":[{"type":"tool_use","id":"toolu_01","name":"get_weather","input":{"city":"Paris"}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01","content":"18C"}]},` +
		`{"role":"assistant","content":"18C."},` +
		`{"role":"user","content":[{"type":"text","text":"Thanks","cache_control":{"type":"ephemeral"}}]}],` +
		`"temperature":0.3,"top_k":5,` +
		`"tools":[{"name":"get_weather","description":"Weather of a city","input_schema":{"type":"object","properties":{"city":{"type":"string"}}},"cache_control":{"type":"ephemeral"}}]}`
	if got := string(thkSentRaw(t, req("claude-sonnet-4-5"))); got != golden {
		t.Errorf("request without thinking:\n%s\nwant\n%s", got, golden)
	}
	old := req("claude-3-5-sonnet-20241022")
	want := thkSentRaw(t, old)
	old.Thinking = &Thinking{Effort: "high"}
	if got := thkSentRaw(t, old); string(got) != string(want) {
		t.Errorf("model without thinking, with Thinking:\n%s\nwant\n%s", got, want)
	}
}

// TestAnthropicCompleteReasoning: a whole answer's thinking and redacted_thinking blocks
// are its Reasoning, in order; its text and tool calls are as before.
func TestAnthropicCompleteReasoning(t *testing.T) {
	answer := `{"id":"msg_01","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[` +
		`{"type":"thinking","thinking":"The user wants the weather.\nI should call get_weather.","signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3h"},` +
		`{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix/LafPsn4a"},` +
		`{"type":"text","text":"Let me check "},{"type":"text","text":"the weather."},` +
		`{"type":"tool_use","id":"toolu_01A","name":"get_weather","input":{"city":"Paris"}}],` +
		`"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":120,"output_tokens":80}}`
	a, _ := thkUpstream(t, "application/json", answer)
	resp, err := a.Complete(context.Background(), &Request{Model: "claude-sonnet-4-5", Messages: []Message{{Role: "user", Content: "Weather in Paris?"}},
		Tools: []Tool{thkWeatherTool}, Thinking: &Thinking{}})
	if err != nil {
		t.Fatal(err)
	}
	want := []ReasoningBlock{
		{Text: "The user wants the weather.\nI should call get_weather.", Signature: "EqQBCgIYAhIM1gbcDa9GJwZA2b3h"},
		{Redacted: "EmwKAhgBEgy3va3pzix/LafPsn4a"},
	}
	if !slices.Equal(resp.Reasoning, want) {
		t.Errorf("Reasoning %+v, want %+v", resp.Reasoning, want)
	}
	if resp.Text != "Let me check the weather." || resp.FinishReason != "tool_calls" || len(resp.ToolCalls) != 1 ||
		resp.ToolCalls[0] != (ToolCall{ID: "toolu_01A", Name: "get_weather", Arguments: `{"city":"Paris"}`}) {
		t.Errorf("text %q finish %q calls %+v", resp.Text, resp.FinishReason, resp.ToolCalls)
	}
	if resp.Usage.PromptTokens != 120 || resp.Usage.CompletionTokens != 80 {
		t.Errorf("usage %+v", resp.Usage)
	}
}

// thkSSE writes Anthropic stream events: each a name and its data.
func thkSSE(events ...string) string {
	var b strings.Builder
	for i := 0; i+1 < len(events); i += 2 {
		b.WriteString("event: " + events[i] + "\ndata: " + events[i+1] + "\n\n")
	}
	return b.String()
}

// thkDescribe is a chunk in a comparable one-line form.
func thkDescribe(c Chunk) string {
	var parts []string
	if r := c.Reasoning; r != nil {
		parts = append(parts, fmt.Sprintf("reasoning[%d] text=%q sig=%q redacted=%q", r.Index, r.Text, r.Signature, r.Redacted))
		if c.Text != "" || c.ToolCalls != nil || c.Refusal != "" {
			parts = append(parts, "AND MORE")
		}
	}
	if c.Text != "" {
		parts = append(parts, fmt.Sprintf("text=%q", c.Text))
	}
	for _, d := range c.ToolCalls {
		parts = append(parts, fmt.Sprintf("call[%d] id=%q name=%q args=%q", d.Index, d.ID, d.Name, d.Arguments))
	}
	if c.FinishReason != "" {
		parts = append(parts, "finish="+c.FinishReason)
	}
	if c.Usage != nil {
		parts = append(parts, fmt.Sprintf("usage=%d/%d", c.Usage.PromptTokens, c.Usage.CompletionTokens))
	}
	return strings.Join(parts, " ")
}

// thkStreamChunks streams req from an upstream answering sse and describes every chunk.
func thkStreamChunks(t *testing.T, sse string, req *Request) []string {
	t.Helper()
	a, _ := thkUpstream(t, "text/event-stream", sse)
	st, err := a.Stream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var out []string
	for {
		c, err := st.Recv()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("after %q: %v", out, err)
		}
		out = append(out, thkDescribe(c))
	}
}

// TestAnthropicStreamReasoning: a streamed answer that thinks (several thinking_delta
// events and a signature_delta), answers with text, calls a tool and ends yields its
// reasoning fragments, then its text, then its call, in order.
func TestAnthropicStreamReasoning(t *testing.T) {
	sse := thkSSE(
		"message_start", `{"type":"message_start","message":{"id":"msg_01","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5-20250929","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":120,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":4}}}`,
		"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`,
		"ping", `{"type": "ping"}`,
		"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"The user asks about the weather in Paris."}}`,
		"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"\nI have a get_weather tool"}}`,
		"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"; I should call it."}}`,
		"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"}}`,
		"content_block_stop", `{"type":"content_block_stop","index":0}`,
		"content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`,
		"content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Let me check "}}`,
		"content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"the weather."}}`,
		"content_block_stop", `{"type":"content_block_stop","index":1}`,
		"content_block_start", `{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_01A","name":"get_weather","input":{}}}`,
		"content_block_delta", `{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":""}}`,
		"content_block_delta", `{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"city\": "}}`,
		"content_block_delta", `{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"\"Paris\"}"}}`,
		"content_block_stop", `{"type":"content_block_stop","index":2}`,
		"message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":89}}`,
		"message_stop", `{"type":"message_stop"}`,
	)
	got := thkStreamChunks(t, sse, &Request{Model: "claude-sonnet-4-5", Messages: []Message{{Role: "user", Content: "Weather in Paris?"}},
		Tools: []Tool{thkWeatherTool}, Thinking: &Thinking{BudgetTokens: 2048}})
	want := []string{
		`reasoning[0] text="The user asks about the weather in Paris." sig="" redacted=""`,
		`reasoning[0] text="\nI have a get_weather tool" sig="" redacted=""`,
		`reasoning[0] text="; I should call it." sig="" redacted=""`,
		`reasoning[0] text="" sig="EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds" redacted=""`,
		`text="Let me check "`,
		`text="the weather."`,
		`call[0] id="toolu_01A" name="get_weather" args=""`,
		`call[0] id="" name="" args="{\"city\": "`,
		`call[0] id="" name="" args="\"Paris\"}"`,
		`finish=tool_calls usage=120/89`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("chunks\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestAnthropicStreamRedactedThinking: a redacted_thinking block is one chunk carrying its
// data; reasoning blocks are numbered in the order they come, whatever their kind, and a
// thinking block whose start already carries text and a signature yields both.
func TestAnthropicStreamRedactedThinking(t *testing.T) {
	sse := thkSSE(
		"message_start", `{"type":"message_start","message":{"id":"msg_02","type":"message","role":"assistant","content":[],"model":"claude-3-7-sonnet-20250219","usage":{"input_tokens":50,"output_tokens":1}}}`,
		"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`,
		"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me think."}}`,
		"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"sig-A"}}`,
		"content_block_stop", `{"type":"content_block_stop","index":0}`,
		"content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix/LafPsn4a"}}`,
		"content_block_stop", `{"type":"content_block_stop","index":1}`,
		"content_block_start", `{"type":"content_block_start","index":2,"content_block":{"type":"thinking","thinking":"Whole at once.","signature":"sig-C"}}`,
		"content_block_stop", `{"type":"content_block_stop","index":2}`,
		"content_block_start", `{"type":"content_block_start","index":3,"content_block":{"type":"text","text":""}}`,
		"content_block_delta", `{"type":"content_block_delta","index":3,"delta":{"type":"text_delta","text":"42"}}`,
		"content_block_stop", `{"type":"content_block_stop","index":3}`,
		"message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":30}}`,
		"message_stop", `{"type":"message_stop"}`,
	)
	got := thkStreamChunks(t, sse, thkReq("claude-3-7-sonnet-20250219", &Thinking{}))
	want := []string{
		`reasoning[0] text="Let me think." sig="" redacted=""`,
		`reasoning[0] text="" sig="sig-A" redacted=""`,
		`reasoning[1] text="" sig="" redacted="EmwKAhgBEgy3va3pzix/LafPsn4a"`,
		`reasoning[2] text="Whole at once." sig="" redacted=""`,
		`reasoning[2] text="" sig="sig-C" redacted=""`,
		`text="42"`,
		`finish=stop usage=50/30`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("chunks\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestAnthropicInterleavedThinkingBeta: a thinking request that asks for interleaved
// thinking carries Anthropic's beta header to Claude 4 models with a budget; not to Claude
// 3.7 (which has none), not to adaptive models (which interleave by themselves), not when
// thinking is left out, and not unasked.
func TestAnthropicInterleavedThinkingBeta(t *testing.T) {
	var mu sync.Mutex
	var beta []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		beta = r.Header.Values("Anthropic-Beta")
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, thkAnswer)
	}))
	t.Cleanup(srv.Close)
	a := NewAnthropic(Config{BaseURL: srv.URL, APIKey: "k", HTTPClient: srv.Client()})
	for _, c := range []struct {
		model string
		th    *Thinking
		tools string
		want  bool
	}{
		{"claude-sonnet-4-5", &Thinking{BudgetTokens: 4096, Interleaved: true}, "", true},
		{"claude-opus-4-1-20250805", &Thinking{Effort: "high", Interleaved: true}, "", true},
		{"claude-sonnet-4-5", &Thinking{BudgetTokens: 4096}, "", false},
		{"claude-3-7-sonnet-20250219", &Thinking{BudgetTokens: 4096, Interleaved: true}, "", false},
		{"claude-opus-4-6", &Thinking{Effort: "high", Interleaved: true}, "", false},
		{"claude-sonnet-4-5", &Thinking{BudgetTokens: 4096, Interleaved: true}, ToolChoiceRequired, false},
		{"claude-sonnet-4-5", nil, "", false},
	} {
		req := thkReq(c.model, c.th)
		if c.tools != "" {
			req.Tools, req.ToolChoice = []Tool{thkWeatherTool}, &ToolChoice{Mode: c.tools}
		}
		if _, err := a.Complete(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		got := slices.Contains(beta, AnthropicInterleavedThinkingBeta)
		mu.Unlock()
		if got != c.want {
			t.Errorf("%s %+v tool_choice %q: beta %v, want interleaved %v", c.model, c.th, c.tools, beta, c.want)
		}
	}
}

// TestAnthropicTemperatureAboveOne: an OpenAI-range temperature above Claude's 1 is sent as
// 1 (a request falling back from GPT is answered, not refused); others as they are.
func TestAnthropicTemperatureAboveOne(t *testing.T) {
	for in, want := range map[float64]float64{1.5: 1, 2: 1, 0.7: 0.7, 1: 1} {
		v := in
		req := thkReq("claude-3-5-haiku-20241022", nil)
		req.Temperature = &v
		if got := thkSent(t, req)["temperature"]; got != want {
			t.Errorf("temperature %v sent as %v, want %v", in, got, want)
		}
	}
}

// TestAnthropicTemperatureAndTopP: Claude 4.1 and later refuse temperature and top_p
// together: top_p is left out when both are given; older models get both.
func TestAnthropicTemperatureAndTopP(t *testing.T) {
	temp, topP := 0.3, 0.9
	for model, both := range map[string]bool{"claude-sonnet-4-5": false, "claude-opus-4-1-20250805": false, "claude-haiku-4-5": false,
		"claude-sonnet-4-20250514": true, "claude-3-5-haiku-20241022": true} {
		req := thkReq(model, nil)
		req.Temperature, req.TopP = &temp, &topP
		sent := thkSent(t, req)
		if _, hasP := sent["top_p"]; hasP != both || sent["temperature"] != temp {
			t.Errorf("%s: temperature %v top_p %v, want both %v", model, sent["temperature"], sent["top_p"], both)
		}
		req.Temperature = nil // top_p alone is kept
		if sent := thkSent(t, req); sent["top_p"] != topP {
			t.Errorf("%s: top_p alone sent as %v", model, sent["top_p"])
		}
	}
}

// TestAnthropicWhitespaceStops: Claude refuses whitespace-only stop sequences ("\n", common
// from OpenAI clients): they are left out, the others kept in order.
func TestAnthropicWhitespaceStops(t *testing.T) {
	for in, want := range map[string]string{
		`["\n","END"," ","STOP"]`: `["END","STOP"]`, `["\n"]`: ``, `["END"]`: `["END"]`,
	} {
		var stop []string
		json.Unmarshal([]byte(in), &stop)
		req := thkReq("claude-sonnet-4-5", nil)
		req.Stop = stop
		if got := thkJSON(thkSent(t, req)["stop_sequences"]); got != want {
			t.Errorf("stop %s sent as %s, want %s", in, got, want)
		}
	}
}
