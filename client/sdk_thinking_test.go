package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	anthropicopt "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go"
	"github.com/openai/openai-go/option"

	"github.com/switchyard-ai/switchyard/client"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/server"
	"github.com/switchyard-ai/switchyard/store"
)

// fakeClaude is a scripted Anthropic Messages server for tests: Claude with extended
// thinking. Asked without a tool result, it thinks (a signed thinking block) and calls
// get_weather; given the result, it answers — and fails, as Claude does, when thinking is
// on and the assistant turn with the call does not start with its signed thinking block.
type fakeClaude struct {
	srv      *httptest.Server
	mu       sync.Mutex
	requests []map[string]any
	betas    []string // each request's anthropic-beta header
}

const claudeSignature = "EqQBCkYIBxgCKkD-signature-of-the-thinking"

func newFakeClaude(t *testing.T) *fakeClaude {
	u := &fakeClaude{}
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req map[string]any
		json.NewDecoder(r.Body).Decode(&req)
		u.mu.Lock()
		u.requests = append(u.requests, req)
		u.mu.Unlock()
		msgs := req["messages"].([]any)
		last := msgs[len(msgs)-1].(map[string]any)
		answered := false
		if blocks, ok := last["content"].([]any); ok {
			answered = blocks[0].(map[string]any)["type"] == "tool_result"
		}
		u.mu.Lock()
		u.betas = append(u.betas, r.Header.Get("Anthropic-Beta"))
		u.mu.Unlock()
		if answered && req["thinking"] != nil {
			prev := msgs[len(msgs)-2].(map[string]any)["content"].([]any)[0].(map[string]any)
			if prev["type"] != "thinking" || prev["signature"] != claudeSignature {
				w.WriteHeader(400)
				fmt.Fprint(w, `{"type":"error","error":{"type":"invalid_request_error","message":"messages.1.content.0.type: Expected thinking or redacted_thinking, but found tool_use"}}`)
				return
			}
		}
		usage := `{"input_tokens":50,"output_tokens":20}`
		if stream, _ := req["stream"].(bool); stream && !answered {
			w.Header().Set("Content-Type", "text/event-stream")
			for _, ev := range []string{
				`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"usage":{"input_tokens":50,"output_tokens":1}}}`,
				`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`,
				`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"The user wants "}}`,
				`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"the weather."}}`,
				`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"` + claudeSignature + `"}}`,
				`{"type":"content_block_stop","index":0}`,
				`{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{}}}`,
				`{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"city\": \"Paris\"}"}}`,
				`{"type":"content_block_stop","index":1}`,
				`{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":20}}`,
				`{"type":"message_stop"}`,
			} {
				var typ struct{ Type string }
				json.Unmarshal([]byte(ev), &typ)
				fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ.Type, ev)
			}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if answered {
			fmt.Fprintf(w, `{"id":"msg_2","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"Sunny in Paris."}],"stop_reason":"end_turn","usage":%s}`, usage)
			return
		}
		fmt.Fprintf(w, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[`+
			`{"type":"thinking","thinking":"The user wants the weather.","signature":"%s"},`+
			`{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"city":"Paris"}}],"stop_reason":"tool_use","usage":%s}`, claudeSignature, usage)
	}))
	t.Cleanup(u.srv.Close)
	return u
}

func (u *fakeClaude) last() map[string]any {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.requests[len(u.requests)-1]
}

func (u *fakeClaude) options(t *testing.T) func(st *store.Store, _ string) []server.Option {
	return envGateway(t, map[string]string{"ANTHROPIC_API_KEY": "sk-ant-test", "ANTHROPIC_BASE_URL": u.srv.URL})
}

// TestExtendedThinkingWithTheAnthropicSDK: Claude Code's tool loop with extended thinking,
// through /v1/messages with the official Anthropic Go SDK: the streamed answer's thinking
// block arrives with its signature (assembled by the SDK's Accumulate), and sent back with
// the tool result it reaches Claude first in the assistant turn, as Claude requires.
func TestExtendedThinkingWithTheAnthropicSDK(t *testing.T) {
	up := newFakeClaude(t)
	_, base := realServerURL(t, up.options(t))
	ctx := context.Background()
	c := anthropic.NewClient(anthropicopt.WithBaseURL(base), anthropicopt.WithAPIKey(testKey), anthropicopt.WithMaxRetries(0),
		anthropicopt.WithHeader("anthropic-beta", "claude-code-20250219,interleaved-thinking-2025-05-14"))
	weather := anthropic.ToolUnionParam{OfTool: &anthropic.ToolParam{Name: "get_weather",
		InputSchema: anthropic.ToolInputSchemaParam{Properties: map[string]any{"city": map[string]any{"type": "string"}}}}}
	params := anthropic.MessageNewParams{
		Model: "anthropic/claude-sonnet-4-5", MaxTokens: 32000, Thinking: anthropic.ThinkingConfigParamOfEnabled(31999),
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Weather in Paris?"))},
		Tools:    []anthropic.ToolUnionParam{weather},
	}
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
	if len(acc.Content) != 2 || acc.Content[0].Type != "thinking" || acc.Content[0].Thinking != "The user wants the weather." ||
		acc.Content[0].Signature != claudeSignature || acc.Content[1].Type != "tool_use" || acc.Content[1].Name != "get_weather" {
		t.Fatalf("streamed message %+v", acc.Content)
	}
	sent := up.last()
	if th, _ := sent["thinking"].(map[string]any); th["type"] != "enabled" || th["budget_tokens"] != float64(31999) {
		t.Errorf("thinking sent to Claude: %v", sent["thinking"])
	}

	params.Messages = append(params.Messages, acc.ToParam(),
		anthropic.NewUserMessage(anthropic.NewToolResultBlock("toolu_1", "sunny", false)))
	// Whole this time (the SDK streams a max_tokens as large as Claude Code's only).
	params.MaxTokens, params.Thinking = 4096, anthropic.ThinkingConfigParamOfEnabled(2048)
	msg, err := c.Messages.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if len(msg.Content) != 1 || msg.Content[0].Text != "Sunny in Paris." {
		t.Fatalf("answer %+v", msg.Content)
	}
	up.mu.Lock()
	if len(up.betas) != 2 || up.betas[0] != "interleaved-thinking-2025-05-14" || up.betas[1] != up.betas[0] {
		t.Errorf("anthropic-beta sent to Claude: %q, want the interleaved-thinking beta alone", up.betas)
	}
	up.mu.Unlock()
	turn := up.last()["messages"].([]any)[1].(map[string]any)["content"].([]any)
	if b := turn[0].(map[string]any); b["type"] != "thinking" || b["thinking"] != "The user wants the weather." || b["signature"] != claudeSignature {
		t.Errorf("the assistant turn reached Claude as %v", turn)
	}
}

// TestClaudeThinkingWithTheOpenAISDK: through /v1/chat/completions with the official
// openai-go, reasoning_effort asks Claude to think; the answer carries its reasoning as
// reasoning_content and the signed block as thinking_blocks (LiteLLM's fields), which sent
// back with the tool result reach Claude again.
func TestClaudeThinkingWithTheOpenAISDK(t *testing.T) {
	up := newFakeClaude(t)
	_, base := realServerURL(t, up.options(t))
	ctx := context.Background()
	c := openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey(testKey), option.WithMaxRetries(0))
	params := openai.ChatCompletionNewParams{
		Model: "anthropic/claude-sonnet-4-5", ReasoningEffort: "high",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Weather in Paris?")},
		Tools: []openai.ChatCompletionToolParam{{Function: openai.FunctionDefinitionParam{Name: "get_weather",
			Parameters: openai.FunctionParameters{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}}}},
	}
	resp, err := c.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	th, _ := up.last()["thinking"].(map[string]any)
	if th["type"] != "enabled" || th["budget_tokens"] != float64(providers.BudgetForEffort("high")) {
		t.Errorf("reasoning_effort high reached Claude as thinking %v", up.last()["thinking"])
	}
	m := resp.Choices[0].Message
	var content string
	json.Unmarshal([]byte(m.JSON.ExtraFields["reasoning_content"].Raw()), &content)
	var blocks []map[string]any
	json.Unmarshal([]byte(m.JSON.ExtraFields["thinking_blocks"].Raw()), &blocks)
	if content != "The user wants the weather." || len(blocks) != 1 || blocks[0]["signature"] != claudeSignature || len(m.ToolCalls) != 1 {
		t.Fatalf("message: reasoning_content %q, thinking_blocks %v, calls %v", content, blocks, m.ToolCalls)
	}

	assistant := m.ToParam()
	params.Messages = append(params.Messages, assistant, openai.ToolMessage("sunny", m.ToolCalls[0].ID))
	resp, err = c.Chat.Completions.New(ctx, params, option.WithJSONSet("messages.1.thinking_blocks", blocks))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Choices[0].Message.Content != "Sunny in Paris." {
		t.Fatalf("answer %+v", resp.Choices[0].Message)
	}
}

// TestClaudeThinkingWithoutItsBlocks: a client that does not send the thinking blocks
// back (most OpenAI-SDK agents) still gets its tool loop answered: Claude is then asked
// without thinking, instead of failing on the unsigned turn.
func TestClaudeThinkingWithoutItsBlocks(t *testing.T) {
	up := newFakeClaude(t)
	_, base := realServerURL(t, up.options(t))
	c := openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey(testKey), option.WithMaxRetries(0))
	resp, err := c.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
		Model: "anthropic/claude-sonnet-4-5", ReasoningEffort: "low",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Weather in Paris?"),
			openai.AssistantMessage(""), openai.ToolMessage("sunny", "toolu_1")},
	}, option.WithJSONSet("messages.1.tool_calls", []map[string]any{{"id": "toolu_1", "type": "function", "function": map[string]any{"name": "get_weather", "arguments": `{"city":"Paris"}`}}}))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Choices[0].Message.Content != "Sunny in Paris." || up.last()["thinking"] != nil {
		t.Errorf("answer %q; thinking sent %v", resp.Choices[0].Message.Content, up.last()["thinking"])
	}
}

// TestClaudeThinkingWithTheGoClient: the project's own client asks Claude to think with
// ReasoningEffort, reads the reasoning whole and streamed (ThinkingBlocks gathers the signed
// block), and Param carries the block back in the tool loop, as Claude requires.
func TestClaudeThinkingWithTheGoClient(t *testing.T) {
	up := newFakeClaude(t)
	c, _ := realServer(t, up.options(t))
	ctx := context.Background()
	req := &client.ChatCompletionRequest{Model: "anthropic/claude-sonnet-4-5", ReasoningEffort: "high",
		Messages: []client.ChatCompletionMessage{{Role: "user", Content: "Weather in Paris?"}},
		Tools:    []client.ChatTool{client.FunctionTool("get_weather", "Current weather of a city", nil)}}
	resp, err := c.ChatCompletion(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	m := resp.Choices[0].Message
	if m.ReasoningContent != "The user wants the weather." || len(m.ThinkingBlocks) != 1 || m.ThinkingBlocks[0].Signature != claudeSignature {
		t.Fatalf("message %+v", m)
	}

	st, err := c.ChatCompletionStream(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	var reasoning string
	for st.Next() {
		if ck := st.Chunk(); len(ck.Choices) > 0 {
			reasoning += ck.Choices[0].Delta.ReasoningContent
		}
	}
	if err := st.Err(); err != nil {
		t.Fatal(err)
	}
	blocks := st.ThinkingBlocks()
	if reasoning != "The user wants the weather." || len(blocks) != 1 || blocks[0].Thinking != reasoning || blocks[0].Signature != claudeSignature {
		t.Fatalf("streamed reasoning %q, blocks %+v", reasoning, blocks)
	}

	req.Messages = append(req.Messages, m.Param(), client.ToolResult(m.ToolCalls[0].ID, "sunny"))
	resp, err = c.ChatCompletion(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text() != "Sunny in Paris." || up.last()["thinking"] == nil {
		t.Errorf("answer %q, thinking sent %v", resp.Text(), up.last()["thinking"])
	}
}

// TestClaudeThinkingToolLoopWithPlainOpenAISDK: an agent on the official openai-go that sends
// the assistant message back as the SDK builds it (ToParam drops thinking_blocks) keeps
// Claude thinking through its tool loop: the gateway kept the signed block it answered with.
func TestClaudeThinkingToolLoopWithPlainOpenAISDK(t *testing.T) {
	up := newFakeClaude(t)
	_, base := realServerURL(t, up.options(t))
	ctx := context.Background()
	c := openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey(testKey), option.WithMaxRetries(0))
	params := openai.ChatCompletionNewParams{
		Model: "anthropic/claude-sonnet-4-5", ReasoningEffort: "high",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Weather in Paris?")},
		Tools: []openai.ChatCompletionToolParam{{Function: openai.FunctionDefinitionParam{Name: "get_weather",
			Parameters: openai.FunctionParameters{"type": "object"}}}},
	}
	resp, err := c.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	m := resp.Choices[0].Message
	params.Messages = append(params.Messages, m.ToParam(), openai.ToolMessage("sunny", m.ToolCalls[0].ID))
	resp, err = c.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	sent := up.last()
	turn := sent["messages"].([]any)[1].(map[string]any)["content"].([]any)
	if resp.Choices[0].Message.Content != "Sunny in Paris." || sent["thinking"] == nil ||
		turn[0].(map[string]any)["signature"] != claudeSignature {
		t.Errorf("answer %q; thinking %v; the turn reached Claude as %v", resp.Choices[0].Message.Content, sent["thinking"], turn)
	}
}
