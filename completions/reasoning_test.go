package completions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// claudeThought is a signed thinking block followed by a redacted one, as Claude answers.
var claudeThought = []providers.ReasoningBlock{{Text: "The user wants the weather.", Signature: "sig-1"}, {Redacted: "ENCRYPTED"}}

func chatBody(t *testing.T, body string) (*Request, error) {
	t.Helper()
	var o OpenAIChatRequest
	if err := json.Unmarshal([]byte(body), &o); err != nil {
		t.Fatal(err)
	}
	return o.ToRequest()
}

// TestChatThinkingRequest: reasoning_effort and LiteLLM's thinking object become the
// request's Thinking (the object asks to see the reasoning too: Summary; an effort alone
// does not); thinking_blocks (or reasoning_content) of assistant messages its
// history's reasoning; bad values name their field.
func TestChatThinkingRequest(t *testing.T) {
	const msgs = `"messages":[{"role":"user","content":"hi"}]`
	for body, want := range map[string]*providers.Thinking{
		`{"model":"a/m",` + msgs + `}`:                                                                              nil,
		`{"model":"a/m","reasoning_effort":"high",` + msgs + `}`:                                                    {Effort: "high"},
		`{"model":"a/m","reasoning_effort":"none",` + msgs + `}`:                                                    nil,
		`{"model":"a/m","thinking":{"type":"enabled","budget_tokens":2048},` + msgs + `}`:                           {BudgetTokens: 2048, Summary: true},
		`{"model":"a/m","thinking":{"type":"adaptive"},"reasoning_effort":"low",` + msgs + `}`:                      {Effort: "low", Summary: true},
		`{"model":"a/m","thinking":{"type":"disabled"},"reasoning_effort":"high",` + msgs + `}`:                     nil,
		`{"model":"a/m","thinking":{"type":"enabled","budget_tokens":5000},"reasoning_effort":"high",` + msgs + `}`: {BudgetTokens: 5000, Effort: "high", Summary: true},
	} {
		req, err := chatBody(t, body)
		if err != nil {
			t.Errorf("%s: %v", body, err)
			continue
		}
		if !reflect.DeepEqual(req.Thinking, want) {
			t.Errorf("%s: thinking %+v, want %+v", body, req.Thinking, want)
		}
	}
	// reasoning_effort still reaches OpenAI-format upstreams as it is.
	if req, _ := chatBody(t, `{"model":"a/m","reasoning_effort":"high",`+msgs+`}`); req.ReasoningEffort != "high" {
		t.Errorf("reasoning_effort %q", req.ReasoningEffort)
	}
	for body, field := range map[string]string{
		`{"model":"a/m","thinking":{"type":"enabled"},` + msgs + `}`:                                                                                       "thinking.budget_tokens",
		`{"model":"a/m","reasoning_effort":"extreme",` + msgs + `}`:                                                                                        "reasoning_effort",
		`{"model":"a/m","thinking":{"type":"sometimes"},` + msgs + `}`:                                                                                     "thinking.type",
		`{"model":"a/m","thinking":{},` + msgs + `}`:                                                                                                       "thinking.type",
		`{"model":"a/m","thinking":{"type":"disabled","budget_tokens":10},` + msgs + `}`:                                                                   "thinking.budget_tokens",
		`{"model":"a/m","messages":[{"role":"user","content":"hi","reasoning_content":"x"}]}`:                                                              "messages[0].thinking_blocks",
		`{"model":"a/m","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"yo","thinking_blocks":[{"type":"redacted_thinking"}]}]}`: "messages[1].thinking_blocks[0].data",
		`{"model":"a/m","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"yo","thinking_blocks":[{"type":"idea"}]}]}`:              "messages[1].thinking_blocks[0].type",
	} {
		_, err := chatBody(t, body)
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != field {
			t.Errorf("%s: error %v, want one naming %s", body, err, field)
		}
	}

	req, err := chatBody(t, `{"model":"a/m","messages":[{"role":"user","content":"Weather?"},
		{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"w","arguments":"{}"}}],
		 "thinking_blocks":[{"type":"thinking","thinking":"The user wants the weather.","signature":"sig-1"},{"type":"redacted_thinking","data":"ENCRYPTED"}]},
		{"role":"tool","tool_call_id":"c1","content":"sunny"},
		{"role":"assistant","content":"Sunny.","reasoning_content":"Easy."},{"role":"user","content":"Thanks"}]}`)
	if err != nil {
		t.Fatal(err)
	}
	if got := req.Messages[1].Reasoning; !reflect.DeepEqual(got, claudeThought) {
		t.Errorf("thinking_blocks read as %+v", got)
	}
	if got := req.Messages[3].Reasoning; !reflect.DeepEqual(got, []providers.ReasoningBlock{{Text: "Easy."}}) {
		t.Errorf("reasoning_content read as %+v", got)
	}
}

// TestThinkingThroughTheGateway: the request's Thinking and its history's reasoning reach
// the provider; the provider's reasoning comes back whole (Complete) and streamed as
// reasoning fragments before the text, assembled again in the final response.
func TestThinkingThroughTheGateway(t *testing.T) {
	h := newHarness(t, nil)
	h.a.on("m", step{text: "It is sunny today", reasoning: claudeThought, usage: providers.Usage{PromptTokens: 5, CompletionTokens: 9}})
	req := userReq("Weather?", "a/m")
	req.Thinking = &providers.Thinking{BudgetTokens: 3000}
	req.Messages = append([]Message{TextMessage("user", "Hi"), {Role: "assistant", Content: []ContentBlock{{Type: "text", Text: "Hello"}},
		Reasoning: []providers.ReasoningBlock{{Text: "greet", Signature: "s0"}}}}, req.Messages...)
	resp, err := h.g.Complete(context.Background(), Scope{Owner: "o"}, req)
	if err != nil {
		t.Fatal(err)
	}
	sent := h.a.lastRequest()
	if sent.Thinking == nil || sent.Thinking.BudgetTokens != 3000 || !reflect.DeepEqual(sent.Messages[1].Reasoning, []providers.ReasoningBlock{{Text: "greet", Signature: "s0"}}) {
		t.Errorf("sent thinking %+v, history %+v", sent.Thinking, sent.Messages)
	}
	if !reflect.DeepEqual(resp.Reasoning, claudeThought) || resp.Text() != "It is sunny today" {
		t.Errorf("complete: reasoning %+v, text %q", resp.Reasoning, resp.Text())
	}

	st, err := h.g.Stream(context.Background(), Scope{Owner: "o"}, req)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var kinds []string
	var thinking strings.Builder
	for {
		c, err := st.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		kinds = append(kinds, c.Type)
		if c.Type == EventReasoning {
			thinking.WriteString(c.Reasoning.Text)
		}
	}
	// 5 words and the signature of block 0, the redacted block 1, then 4 words of text.
	want := "reasoning reasoning reasoning reasoning reasoning reasoning reasoning text text text text"
	if got := strings.Join(kinds, " "); got != want {
		t.Errorf("stream events %s\nwant %s", got, want)
	}
	if thinking.String() != "The user wants the weather." {
		t.Errorf("streamed thinking %q", thinking.String())
	}
	if r := st.Response(); !reflect.DeepEqual(r.Reasoning, claudeThought) || r.Text() != "It is sunny today" {
		t.Errorf("stream's final response: reasoning %+v, text %q", r.Reasoning, r.Text())
	}
}

// TestStreamReasoningIsTheFirstFragment: a model that thinks longer than the first-token
// timeout before its first word is not cut off: its reasoning is its first fragment.
func TestStreamReasoningIsTheFirstFragment(t *testing.T) {
	h := newHarness(t, nil)
	h.a.on("m", step{text: "Done", reasoning: []providers.ReasoningBlock{{Text: "think"}}})
	st, err := h.g.Stream(context.Background(), Scope{Owner: "o"}, thinkingReq("Q", "a/m"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	c, err := st.Recv()
	if err != nil || c.Type != EventReasoning || c.Reasoning.Text != "think" || c.Text != "" {
		t.Fatalf("first chunk %+v, %v", c, err)
	}
	if !strings.Contains(st.p.attempts[0].Outcome, OutcomeOK) {
		t.Errorf("attempt %+v", st.p.attempts[0])
	}
}

// TestChatReasoningResponse: a chat completion carries the reasoning as reasoning_content
// and Claude's signed blocks as thinking_blocks; an answer without reasoning has neither;
// reasoning without signatures has reasoning_content only.
func TestChatReasoningResponse(t *testing.T) {
	resp := &Response{ResponseMessageID: "r", Provider: "a", Model: "m", Message: assistantText("Sunny."), Reasoning: claudeThought}
	got, _ := json.Marshal(NewOpenAIChatCompletion(resp, time.Unix(0, 0)).Choices[0].Message)
	want := `{"role":"assistant","content":"Sunny.","refusal":null,"reasoning_content":"The user wants the weather.",` +
		`"thinking_blocks":[{"type":"thinking","thinking":"The user wants the weather.","signature":"sig-1"},{"type":"redacted_thinking","data":"ENCRYPTED"}]}`
	if string(got) != want {
		t.Errorf("message\n%s\nwant\n%s", got, want)
	}
	resp.Reasoning = []providers.ReasoningBlock{{Text: "Gemini thought"}}
	got, _ = json.Marshal(NewOpenAIChatCompletion(resp, time.Unix(0, 0)).Choices[0].Message)
	if want := `{"role":"assistant","content":"Sunny.","refusal":null,"reasoning_content":"Gemini thought"}`; string(got) != want {
		t.Errorf("unsigned reasoning: %s", got)
	}
	resp.Reasoning = nil
	got, _ = json.Marshal(NewOpenAIChatCompletion(resp, time.Unix(0, 0)).Choices[0].Message)
	if strings.Contains(string(got), "reasoning") || strings.Contains(string(got), "thinking") {
		t.Errorf("no reasoning: %s", got)
	}
}

// TestChatReasoningStream: reasoning streams as delta.reasoning_content, the first such
// chunk carrying the role; a signed block comes whole in a thinking_blocks delta once its
// signature arrives (an accumulator that keeps a field's last value still has it whole);
// then the text.
func TestChatReasoningStream(t *testing.T) {
	h := newHarness(t, nil)
	h.a.on("m", step{text: "Sunny now", reasoning: []providers.ReasoningBlock{{Text: "Check it", Signature: "sig"}}})
	st, err := h.g.Stream(context.Background(), Scope{Owner: "o"}, thinkingReq("Q", "a/m"))
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	if err := WriteOpenAIStream(rec, st, false); err != nil {
		t.Fatal(err)
	}
	var deltas []string
	for _, ev := range parseSSE(t, rec.Body.String()) {
		if ev.data == "[DONE]" {
			continue
		}
		var ck OpenAIChunk
		if err := json.Unmarshal([]byte(ev.data), &ck); err != nil {
			t.Fatal(err)
		}
		d, _ := json.Marshal(ck.Choices[0].Delta)
		deltas = append(deltas, string(d))
	}
	want := []string{
		`{"role":"assistant","reasoning_content":"Check"}`,
		`{"reasoning_content":" it"}`,
		`{"thinking_blocks":[{"type":"thinking","thinking":"Check it","signature":"sig"}]}`,
		`{"content":"Sunny"}`, `{"content":" now"}`, `{}`,
	}
	if !reflect.DeepEqual(deltas, want) {
		t.Errorf("deltas\n%s\nwant\n%s", strings.Join(deltas, "\n"), strings.Join(want, "\n"))
	}
}

// responsesToRequest is the gateway request a /v1/responses body becomes, failing the test
// when it is refused.
func responsesToRequest(t *testing.T, body string) *Request {
	t.Helper()
	var r ResponsesRequest
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatal(err)
	}
	c, err := r.ToChatRequest()
	if err != nil {
		t.Fatal(err)
	}
	req, err := c.ToRequest()
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// TestResponsesThinkingRequest: /v1/responses' reasoning becomes the request's Thinking: a
// summary asks to see the reasoning (Summary; at the default effort when none is given), an
// effort alone asks only how hard to think.
func TestResponsesThinkingRequest(t *testing.T) {
	for reasoning, want := range map[string]*providers.Thinking{
		`{"effort":"low","summary":"auto"}`: {Effort: "low", Summary: true},
		`{"summary":"detailed"}`:            {Summary: true},
		`{"effort":"high"}`:                 {Effort: "high"},
		`{"summary":null}`:                  nil,
		`{}`:                                nil,
	} {
		req := responsesToRequest(t, `{"model":"a/m","input":"hi","reasoning":`+reasoning+`}`)
		if !reflect.DeepEqual(req.Thinking, want) {
			t.Errorf("reasoning %s: thinking %+v, want %+v", reasoning, req.Thinking, want)
		}
	}
}

// TestMessagesThinkingRequest: /v1/messages' thinking and output_config.effort become the
// request's Thinking (the effort never as reasoning_effort, which non-reasoning models
// refuse); thinking blocks of assistant turns its history's reasoning.
func TestMessagesThinkingRequest(t *testing.T) {
	for body, want := range map[string]*providers.Thinking{
		`"thinking":{"type":"enabled","budget_tokens":31999}`:              {BudgetTokens: 31999, Summary: true},
		`"thinking":{"type":"adaptive"},"output_config":{"effort":"high"}`: {Effort: "high", Summary: true},
		`"thinking":{"type":"adaptive"}`:                                   {Summary: true},
		`"thinking":{"type":"disabled"}`:                                   nil,
		`"output_config":{"effort":"high"}`:                                nil,
	} {
		_, c, err := messagesRequest(t, `{"model":"a/m","max_tokens":32000,`+body+`,"messages":[{"role":"user","content":"hi"}]}`)
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		req, err := c.ToRequest()
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		if !reflect.DeepEqual(req.Thinking, want) || req.ReasoningEffort != "" {
			t.Errorf("%s: thinking %+v (reasoning_effort %q), want %+v", body, req.Thinking, req.ReasoningEffort, want)
		}
	}
	// Claude Code's anthropic-beta asks for interleaved thinking; without it, none.
	for betas, want := range map[string]bool{"": false, "claude-code-20250219,interleaved-thinking-2025-05-14": true, "context-management-2025-06-27": false} {
		var r AnthropicMessagesRequest
		json.Unmarshal([]byte(`{"model":"a/m","max_tokens":32000,"thinking":{"type":"enabled","budget_tokens":31999},"messages":[{"role":"user","content":"hi"}]}`), &r)
		if betas != "" {
			r.Betas = strings.Split(betas, ",")
		}
		c, err := r.ToChatRequest()
		if err != nil {
			t.Fatal(err)
		}
		req, err := c.ToRequest()
		if err != nil || req.Thinking == nil || req.Thinking.Interleaved != want {
			t.Errorf("betas %q: thinking %+v (%v), want interleaved %v", betas, req.Thinking, err, want)
		}
	}

	_, c, err := messagesRequest(t, `{"model":"a/m","max_tokens":100,"thinking":{"type":"enabled"},"messages":[{"role":"user","content":"hi"}]}`)
	if err == nil {
		_, err = c.ToRequest()
	}
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Field != "thinking.budget_tokens" {
		t.Errorf("thinking without a budget: %v", err)
	}

	_, c, err = messagesRequest(t, `{"model":"a/m","max_tokens":100,"thinking":{"type":"enabled","budget_tokens":2000},"messages":[
		{"role":"user","content":[{"type":"text","text":"Weather?"}]},
		{"role":"assistant","content":[{"type":"thinking","thinking":"The user wants the weather.","signature":"sig-1"},{"type":"redacted_thinking","data":"ENCRYPTED"},
			{"type":"tool_use","id":"toolu_1","name":"w","input":{}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"sunny"}]}],
		"tools":[{"name":"w","input_schema":{"type":"object"}}]}`)
	if err != nil {
		t.Fatal(err)
	}
	req, err := c.ToRequest()
	if err != nil {
		t.Fatal(err)
	}
	if req.Messages[0].Reasoning != nil || !reflect.DeepEqual(req.Messages[1].Reasoning, claudeThought) {
		t.Errorf("history reasoning: user %+v, assistant %+v", req.Messages[0].Reasoning, req.Messages[1].Reasoning)
	}
	// As Anthropic's API answers: a budget under 1,024 tokens, an effort it does not know,
	// thinking in a user turn.
	for body, field := range map[string]string{
		`"thinking":{"type":"enabled","budget_tokens":500},"messages":[{"role":"user","content":"hi"}]`:                           "thinking.budget_tokens",
		`"thinking":{"type":"adaptive"},"output_config":{"effort":"extreme"},"messages":[{"role":"user","content":"hi"}]`:         "output_config.effort",
		`"messages":[{"role":"user","content":[{"type":"thinking","thinking":"x","signature":"s"},{"type":"text","text":"hi"}]}]`: "messages[0].content[0].type",
	} {
		_, c, err := messagesRequest(t, `{"model":"a/m","max_tokens":2000,`+body+`}`)
		if err == nil {
			_, err = c.ToRequest()
		}
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != field {
			t.Errorf("%s: %v, want an error naming %s", body, err, field)
		}
	}
}

// TestMessagesThinkingResponse: the answer's reasoning comes first as thinking blocks
// (with Claude's signature, empty for other models' reasoning) and redacted_thinking
// blocks; streamed, each is a block of its own before the text block.
func TestMessagesThinkingResponse(t *testing.T) {
	resp := &Response{ResponseMessageID: "r", Message: assistantText("Sunny."), FinishReason: "stop",
		Reasoning: append([]providers.ReasoningBlock{{Text: "gemini"}}, claudeThought...)}
	got, _ := json.Marshal(NewAnthropicResponse(resp, "m").Content)
	want := `[{"type":"thinking","thinking":"gemini","signature":""},{"type":"thinking","thinking":"The user wants the weather.","signature":"sig-1"},` +
		`{"type":"redacted_thinking","data":"ENCRYPTED"},{"type":"text","text":"Sunny."}]`
	if string(got) != want {
		t.Errorf("content\n%s\nwant\n%s", got, want)
	}

	h := newHarness(t, nil)
	h.a.on("m", step{text: "Sunny now", reasoning: claudeThought})
	st, err := h.g.Stream(context.Background(), Scope{Owner: "o"}, thinkingReq("Q", "a/m"))
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	if err := WriteAnthropicStream(rec, st, "a/m"); err != nil {
		t.Fatal(err)
	}
	var evs []string
	for _, ev := range parseSSE(t, rec.Body.String()) {
		var m map[string]any
		json.Unmarshal([]byte(ev.data), &m)
		s := ev.name
		if i, ok := m["index"]; ok {
			s += " " + mustJSON(i)
		}
		if cb, ok := m["content_block"]; ok {
			s += " " + mustJSON(cb)
		}
		if d, ok := m["delta"]; ok && ev.name == "content_block_delta" {
			s += " " + mustJSON(d)
		}
		evs = append(evs, s)
	}
	wantEvs := []string{
		"message_start", "ping",
		`content_block_start 0 {"signature":"","thinking":"","type":"thinking"}`,
		`content_block_delta 0 {"thinking":"The","type":"thinking_delta"}`,
		`content_block_delta 0 {"thinking":" user","type":"thinking_delta"}`,
		`content_block_delta 0 {"thinking":" wants","type":"thinking_delta"}`,
		`content_block_delta 0 {"thinking":" the","type":"thinking_delta"}`,
		`content_block_delta 0 {"thinking":" weather.","type":"thinking_delta"}`,
		`content_block_delta 0 {"signature":"sig-1","type":"signature_delta"}`,
		`content_block_stop 0`,
		`content_block_start 1 {"data":"ENCRYPTED","type":"redacted_thinking"}`,
		`content_block_stop 1`,
		`content_block_start 2 {"text":"","type":"text"}`,
		`content_block_delta 2 {"text":"Sunny","type":"text_delta"}`,
		`content_block_delta 2 {"text":" now","type":"text_delta"}`,
		`content_block_stop 2`, "message_delta", "message_stop",
	}
	if !reflect.DeepEqual(evs, wantEvs) {
		t.Errorf("events\n%s\nwant\n%s", strings.Join(evs, "\n"), strings.Join(wantEvs, "\n"))
	}
}

// thinkingReq is a request that asks for reasoning (so its stream shows it).
func thinkingReq(text, model string) *Request {
	r := userReq(text, model)
	r.Thinking = &providers.Thinking{}
	return r
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestResponsesReasoningItems: the answer's reasoning comes first as reasoning items (the
// text as a summary_text part, Claude's signature or redacted data wrapped in
// encrypted_content); sent back in the next request's input, they reach the assistant turn
// that follows them, while encrypted reasoning the gateway did not return is left out.
func TestResponsesReasoningItems(t *testing.T) {
	var bad ResponsesRequest
	json.Unmarshal([]byte(`{"model":"a/m","reasoning":{"effort":"extreme"},"input":"hi"}`), &bad)
	if _, err := bad.ToChatRequest(); err == nil || !strings.Contains(err.Error(), "reasoning.effort") {
		t.Errorf("an unknown effort: %v", err)
	}
	o := &ResponseObject{}
	o.Complete(&Response{ResponseMessageID: "m1", Provider: "a", Model: "m", FinishReason: "tool_calls", Reasoning: claudeThought,
		ToolCalls: []providers.ToolCall{{ID: "c1", Name: "w", Arguments: "{}"}}})
	out, _ := json.Marshal(o.Output)
	want := `[{"id":"rs_m1_0","type":"reasoning","status":"completed","summary":[{"type":"summary_text","text":"The user wants the weather."}],"encrypted_content":"claude-thinking:sig-1"},` +
		`{"id":"rs_m1_1","type":"reasoning","status":"completed","summary":[],"encrypted_content":"claude-redacted:ENCRYPTED"},` +
		`{"id":"fc_m1_0","type":"function_call","status":"completed","call_id":"c1","name":"w","arguments":"{}"}]`
	if string(out) != want {
		t.Fatalf("output\n%s\nwant\n%s", out, want)
	}
	body := `{"model":"a/m","input":[{"role":"user","content":"Weather?"},` + strings.Trim(string(out), "[]") +
		`,{"type":"function_call_output","call_id":"c1","output":"sunny"},` +
		`{"type":"reasoning","id":"rs_x","summary":[{"type":"summary_text","text":"OpenAI's"}],"encrypted_content":"gAAAA-openai"},` +
		`{"role":"assistant","content":[{"type":"output_text","text":"Sunny."}]},{"role":"user","content":"Thanks"}]}`
	var r ResponsesRequest
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatal(err)
	}
	c, err := r.ToChatRequest()
	if err != nil {
		t.Fatal(err)
	}
	req, err := c.ToRequest()
	if err != nil {
		t.Fatal(err)
	}
	if len(req.Messages) != 5 || !reflect.DeepEqual(req.Messages[1].Reasoning, claudeThought) || len(req.Messages[1].ToolCalls) != 1 {
		t.Fatalf("the calls' turn %+v", req.Messages)
	}
	// OpenAI's own encrypted reasoning goes back to OpenAI's Responses API (and only there:
	// it is not Signed, so never sent to Claude).
	if want := []providers.ReasoningBlock{{Text: "OpenAI's", Encrypted: "gAAAA-openai"}}; !reflect.DeepEqual(req.Messages[3].Reasoning, want) ||
		providers.HasSigned(req.Messages[3].Reasoning) {
		t.Errorf("OpenAI's encrypted reasoning read back as %+v, want %+v", req.Messages[3].Reasoning, want)
	}

	// The usual shape: the model says what it is about to do, then calls. The text and the
	// call are one answer, one assistant turn, and the reasoning leads it.
	o.Complete(&Response{ResponseMessageID: "m2", Provider: "a", Model: "m", FinishReason: "tool_calls", Reasoning: claudeThought[:1],
		Message: assistantText("Let me check."), ToolCalls: []providers.ToolCall{{ID: "c1", Name: "w", Arguments: "{}"}}})
	out, _ = json.Marshal(o.Output)
	body = `{"model":"a/m","input":[{"role":"user","content":"Weather?"},` + strings.Trim(string(out), "[]") +
		`,{"type":"function_call_output","call_id":"c1","output":"sunny"}]}`
	r = ResponsesRequest{}
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatal(err)
	}
	if c, err = r.ToChatRequest(); err == nil {
		req, err = c.ToRequest()
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(req.Messages) != 3 || req.Messages[1].Text() != "Let me check." || len(req.Messages[1].ToolCalls) != 1 ||
		!reflect.DeepEqual(req.Messages[1].Reasoning, claudeThought[:1]) {
		t.Errorf("text, call and reasoning of one answer: %+v", req.Messages)
	}
}

// TestResponsesReasoningStream: streamed reasoning is a reasoning item per block, with its
// summary part and text deltas, closed before the message; the completed response holds
// the same items with their encrypted_content.
func TestResponsesReasoningStream(t *testing.T) {
	h := newHarness(t, nil)
	h.a.on("m", step{text: "Sunny now", reasoning: claudeThought})
	evs := streamResponses(t, h.g, `{"model":"a/m","stream":true,"input":"Weather?","reasoning":{"effort":"low"}}`)
	var names []string
	for _, ev := range evs {
		names = append(names, ev["type"].(string))
	}
	want := "response.created response.in_progress " +
		"response.output_item.added response.reasoning_summary_part.added " + strings.Repeat("response.reasoning_summary_text.delta ", 5) +
		"response.reasoning_summary_text.done response.reasoning_summary_part.done response.output_item.done " +
		"response.output_item.added response.output_item.done " +
		"response.output_item.added response.content_part.added response.output_text.delta response.output_text.delta " +
		"response.output_text.done response.content_part.done response.output_item.done response.completed"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("events\n%s\nwant\n%s", got, want)
	}
	if d := evs[9]["text"]; d != "The user wants the weather." {
		t.Errorf("summary text done: %v", d)
	}
	final, _ := json.Marshal(evs[len(evs)-1]["response"].(map[string]any)["output"])
	for _, w := range []string{`"encrypted_content":"claude-thinking:sig-1"`, `"summary":[{"text":"The user wants the weather.","type":"summary_text"}]`,
		`"encrypted_content":"claude-redacted:ENCRYPTED"`, `"summary":[]`, `"text":"Sunny now"`} {
		if !strings.Contains(string(final), w) {
			t.Errorf("final output %s\nlacks %s", final, w)
		}
	}
}

// TestThinkingMaxTokensWithinTheModelsLimit: a thinking request without max_tokens is
// bounded by the model's catalogued output limit when an adapter's own room (budget plus a
// default answer) would exceed it; otherwise it is left to the adapter, and a request's
// own bound is kept.
func TestThinkingMaxTokensWithinTheModelsLimit(t *testing.T) {
	claude := newFake("anthropic")
	g, err := New(Options{Providers: fakeRegistry{"anthropic": claude}, Prices: providers.DefaultCatalog()})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		model    string
		thinking *providers.Thinking
		max      int
		want     int
	}{
		{"anthropic/claude-opus-4-1", &providers.Thinking{Effort: "max"}, 0, 32000},         // 32,000 + 4,096 > 32,000
		{"anthropic/claude-sonnet-4-5", &providers.Thinking{Effort: "max"}, 0, 0},           // fits in 64,000
		{"anthropic/claude-opus-4-1", &providers.Thinking{Effort: "low"}, 0, 0},             // fits
		{"anthropic/claude-opus-4-1", nil, 0, 0},                                            // no thinking
		{"anthropic/claude-opus-4-1", &providers.Thinking{BudgetTokens: 30000}, 5000, 5000}, // the request's own
	} {
		req := userReq("hi", c.model)
		req.Thinking, req.MaxTokens = c.thinking, c.max
		if _, err := g.Complete(context.Background(), Scope{}, req); err != nil {
			t.Fatal(err)
		}
		if got := claude.lastRequest().MaxTokens; got != c.want {
			t.Errorf("%s %+v max %d: sent max_tokens %d, want %d", c.model, c.thinking, c.max, got, c.want)
		}
	}
}

// TestStreamRestartsAfterReasoningOnly: a model that breaks while it is still reasoning
// (the client saw its thinking, no answer) is followed by the next model of the request —
// any model, which answers afresh: the stream goes on with its reasoning and text, and the
// answer says it was continued from character 0.
func TestStreamRestartsAfterReasoningOnly(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.Providers.(fakeRegistry)["c"] = s8ThinkThenBreak{} })
	h.b.on("m", step{text: "Fine answer", reasoning: []providers.ReasoningBlock{{Text: "Second thoughts"}}})
	req := thinkingReq("hi", "c/thinker")
	req.FallbackModels = []string{"b/m"}
	st, err := h.g.Stream(context.Background(), Scope{Owner: "o"}, req)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var got []string
	for {
		c, err := st.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("after %v: %v", got, err)
		}
		if c.Type == EventReasoning {
			got = append(got, fmt.Sprintf("R%d:%s", c.Reasoning.Index, c.Reasoning.Text))
		} else {
			got = append(got, "T:"+c.Text)
		}
	}
	want := []string{"R0:Let me think about that.", "R1:Second", "R1: thoughts", "T:Fine", "T: answer"}
	if !slices.Equal(got, want) {
		t.Errorf("stream %q, want %q", got, want)
	}
	r := st.Response()
	if r.Continued == nil || r.Continued.Model != "b/m" || r.Continued.FromChar != 0 || r.Text() != "Fine answer" ||
		len(r.Reasoning) != 2 || r.Attempts[0].Outcome != OutcomeError {
		t.Errorf("final %+v", r)
	}
	// The broken attempt is billed for the reasoning it showed.
	if u := r.Attempts[0].Usage; u == nil || u.ReasoningTokens == 0 {
		t.Errorf("broken attempt's usage %+v", u)
	}
}

// TestMessagesStreamRefusal: a refusal (whole only at the end of a stream) is the streamed
// message's text, as in the whole message — after reasoning too.
func TestMessagesStreamRefusal(t *testing.T) {
	h := newHarness(t, func(o *Options) {
		o.Providers.(fakeRegistry)["c"] = s8Scripted{chunks: []providers.Chunk{
			{Reasoning: &providers.ReasoningDelta{Text: "Must decline."}},
			{Refusal: "I can't help with that."},
			{FinishReason: "stop", Usage: &providers.Usage{PromptTokens: 5, CompletionTokens: 12}},
		}}
	})
	st, err := h.g.Stream(context.Background(), Scope{}, thinkingReq("Do it", "c/m"))
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	if err := WriteAnthropicStream(rec, st, "c/m"); err != nil {
		t.Fatal(err)
	}
	if body := rec.Body.String(); !strings.Contains(body, `"text":"I can't help with that."`) || !strings.Contains(body, `"thinking":"Must decline."`) {
		t.Errorf("stream lacks the refusal or the thinking:\n%s", body)
	}
}

// TestUnaskedReasoning: reasoning a model sends though the request asked for none (DeepSeek's
// reasoning_content) is shown on chat completions, as DeepSeek and LiteLLM return it, and
// left out of /v1/messages and /v1/responses answers — whose clients get thinking blocks
// and reasoning items only when they ask, as from Anthropic and OpenAI — whole and streamed.
func TestUnaskedReasoning(t *testing.T) {
	h := newHarness(t, nil)
	h.a.on("m", step{text: "Hi there", reasoning: []providers.ReasoningBlock{{Text: "unasked thoughts"}}})
	chat, err := chatBody(t, `{"model":"a/m","messages":[{"role":"user","content":"hi"}]}`)
	if err != nil {
		t.Fatal(err)
	}
	_, mc, _ := messagesRequest(t, `{"model":"a/m","max_tokens":100,"messages":[{"role":"user","content":"hi"}]}`)
	msgs, err := mc.ToRequest()
	if err != nil {
		t.Fatal(err)
	}
	var rr ResponsesRequest
	json.Unmarshal([]byte(`{"model":"a/m","input":"hi"}`), &rr)
	rc, _ := rr.ToChatRequest()
	resps, err := rc.ToRequest()
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		req  *Request
		want bool
	}{"chat": {chat, true}, "messages": {msgs, false}, "responses": {resps, false}, "native": {userReq("hi", "a/m"), false}} {
		resp, err := h.g.Complete(context.Background(), Scope{Owner: "o"}, c.req)
		if err != nil {
			t.Fatal(err)
		}
		if got := len(resp.Reasoning) > 0; got != c.want {
			t.Errorf("%s, whole: reasoning shown %v, want %v", name, got, c.want)
		}
		st, err := h.g.Stream(context.Background(), Scope{Owner: "o"}, c.req)
		if err != nil {
			t.Fatal(err)
		}
		shown := false
		for {
			ck, err := st.Recv()
			if err != nil {
				break
			}
			shown = shown || ck.Type == EventReasoning
		}
		st.Close()
		if shown != c.want {
			t.Errorf("%s, streamed: reasoning shown %v, want %v", name, shown, c.want)
		}
	}
}

// TestResponsesReasoningBetweenTextAndCall: a reasoning item between an answer's message
// and its function_call belongs to that answer's turn (it was dropped).
func TestResponsesReasoningBetweenTextAndCall(t *testing.T) {
	var r ResponsesRequest
	if err := json.Unmarshal([]byte(`{"model":"a/m","input":[{"role":"user","content":"Weather?"},
		{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Let me check."}]},
		{"type":"reasoning","summary":[{"type":"summary_text","text":"call it"}],"encrypted_content":"claude-thinking:sig-2"},
		{"type":"function_call","call_id":"c1","name":"w","arguments":"{}"},
		{"type":"function_call_output","call_id":"c1","output":"sunny"}]}`), &r); err != nil {
		t.Fatal(err)
	}
	c, err := r.ToChatRequest()
	if err != nil {
		t.Fatal(err)
	}
	req, err := c.ToRequest()
	if err != nil {
		t.Fatal(err)
	}
	if len(req.Messages) != 3 || !reflect.DeepEqual(req.Messages[1].Reasoning, []providers.ReasoningBlock{{Text: "call it", Signature: "sig-2"}}) {
		t.Errorf("messages %+v", req.Messages)
	}
}
