package completions

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// agentBodies are an agent's request in both wire formats (the same content): a 6 kB
// system prompt, 15 tools and 20 turns of tool calls and results, as a coding agent sends.
func agentBodies() (anthropicBody, openAIBody []byte) {
	system := strings.Repeat("You are a careful coding agent. Follow the rules. ", 120)
	var aTools, oTools []string
	for i := range 15 {
		schema := fmt.Sprintf(`{"type":"object","properties":{"path":{"type":"string","description":"file %d"},"limit":{"type":"integer"}},"required":["path"]}`, i)
		aTools = append(aTools, fmt.Sprintf(`{"name":"tool_%d","description":"Tool number %d","input_schema":%s}`, i, i, schema))
		oTools = append(oTools, fmt.Sprintf(`{"type":"function","function":{"name":"tool_%d","description":"Tool number %d","parameters":%s}}`, i, i, schema))
	}
	aMsgs := []string{`{"role":"user","content":"Fix the failing test in pkg/foo."}`}
	oMsgs := []string{fmt.Sprintf(`{"role":"system","content":%q}`, system), `{"role":"user","content":"Fix the failing test in pkg/foo."}`}
	for i := range 10 {
		out := strings.Repeat("line of tool output\n", 40)
		aMsgs = append(aMsgs,
			fmt.Sprintf(`{"role":"assistant","content":[{"type":"text","text":"Reading file %d."},{"type":"tool_use","id":"toolu_%d","name":"tool_%d","input":{"path":"pkg/foo/f%d.go"}}]}`, i, i, i, i),
			fmt.Sprintf(`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_%d","content":%q}]}`, i, out))
		oMsgs = append(oMsgs,
			fmt.Sprintf(`{"role":"assistant","content":"Reading file %d.","tool_calls":[{"id":"toolu_%d","type":"function","function":{"name":"tool_%d","arguments":"{\"path\":\"pkg/foo/f%d.go\"}"}}]}`, i, i, i, i),
			fmt.Sprintf(`{"role":"tool","tool_call_id":"toolu_%d","content":%q}`, i, out))
	}
	anthropicBody = fmt.Appendf(nil, `{"model":"a/m","max_tokens":4096,"system":[{"type":"text","text":%q,"cache_control":{"type":"ephemeral"}}],"tools":[%s],"messages":[%s]}`,
		system, strings.Join(aTools, ","), strings.Join(aMsgs, ","))
	openAIBody = fmt.Appendf(nil, `{"model":"a/m","max_tokens":4096,"tools":[%s],"messages":[%s]}`, strings.Join(oTools, ","), strings.Join(oMsgs, ","))
	return anthropicBody, openAIBody
}

var agentAnswer = &Response{ResponseMessageID: "r1", Provider: "a", Model: "m", FinishReason: "tool_calls",
	Message:   AssistantMessage{Role: "assistant", Type: "text", Content: []ContentBlock{{Type: "text", Text: "Running the tests."}}},
	ToolCalls: []providers.ToolCall{{ID: "call_1", Name: "tool_3", Arguments: `{"path":"pkg/foo"}`}}, Usage: Usage{PromptTokens: 9000, CompletionTokens: 40}}

// BenchmarkAnthropicMessagesTranslation is /v1/messages' own work per request beside the
// gateway's: decoding the body, translating it to a gateway request and encoding the
// answer as a message object.
func BenchmarkAnthropicMessagesTranslation(b *testing.B) {
	body, _ := agentBodies()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		var r AnthropicMessagesRequest
		if err := json.Unmarshal(body, &r); err != nil {
			b.Fatal(err)
		}
		c, err := r.ToChatRequest()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := c.ToRequest(); err != nil {
			b.Fatal(err)
		}
		if _, err := json.Marshal(NewAnthropicResponse(agentAnswer, r.Model)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOpenAIChatTranslation is the same for /v1/chat/completions and the same request,
// for comparison.
func BenchmarkOpenAIChatTranslation(b *testing.B) {
	_, body := agentBodies()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		var r OpenAIChatRequest
		if err := json.Unmarshal(body, &r); err != nil {
			b.Fatal(err)
		}
		if _, err := r.ToRequest(); err != nil {
			b.Fatal(err)
		}
		if _, err := json.Marshal(NewOpenAIChatCompletion(agentAnswer, time.Time{})); err != nil {
			b.Fatal(err)
		}
	}
}
