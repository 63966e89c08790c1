package completions

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/switchyard-ai/switchyard/providers"
)

// The legacy functions API (functions, function_call, assistant messages' function_call and
// "function" messages) is what older agents and SDK versions still send. The gateway reads
// it as the tools API it replaced — so every provider takes it, as tools do — and answers a
// request that declared functions in its form: message.function_call and finish_reason
// "function_call", streamed as delta.function_call.

// legacyCallID is the tool call id made up for the legacy function_call of messages[i]
// (the legacy form has none; a "function" message answers the latest call of its name).
func legacyCallID(i int) string { return fmt.Sprintf("call_fn%d", i) }

// UsesLegacyFunctions reports whether r declared its functions in the legacy form
// (functions): its answer is then written in that form too (see
// OpenAIChatCompletion.AsLegacyFunctionCall; streams are written so by WriteOpenAIStream).
func (r *OpenAIChatRequest) UsesLegacyFunctions() bool {
	return r.legacyFunctions || present(r.Functions) && !rawIs(r.Functions, "[]")
}

// translateLegacyFunctions turns r's legacy functions API into the tools API: functions
// into tools, function_call into tool_choice, an assistant message's function_call into a
// tool call and a "function" message into the "tool" message answering it. r is changed
// (its messages copied first): a second call finds nothing left to translate.
func (r *OpenAIChatRequest) translateLegacyFunctions() error {
	if present(r.Functions) && !rawIs(r.Functions, "[]") {
		var fns []OpenAIFunction
		if err := json.Unmarshal(r.Functions, &fns); err != nil {
			return invalid("functions", "must be an array of functions ({name, description, parameters}): %v", err)
		}
		if len(r.Tools) > 0 {
			return invalid("functions", "give tools or the legacy functions, not both")
		}
		r.Tools = make([]OpenAITool, len(fns))
		for i, f := range fns {
			r.Tools[i] = OpenAITool{Type: "function", Function: f}
		}
		r.legacyFunctions = true
		r.renameFields(legacyFieldName)
	}
	r.Functions = nil
	if present(r.FunctionCall) {
		choice, err := legacyToolChoice(r.FunctionCall)
		if err != nil {
			return err
		}
		if r.ToolChoice != nil && r.ToolChoice.Mode != "" {
			return invalid("function_call", "give tool_choice or the legacy function_call, not both")
		}
		if choice.Mode == providers.ToolChoiceFunction && !r.legacyFunctions {
			return invalid("function_call", "names the function %q, but the request declares no functions", choice.Name)
		}
		if r.legacyFunctions {
			r.ToolChoice = &choice
		} // else "none" or "auto" without functions: nothing to choose from

	}
	r.FunctionCall = nil
	return r.translateLegacyMessages()
}

// legacyToolChoice reads function_call: "none", "auto" or {"name": …}.
func legacyToolChoice(raw json.RawMessage) (OpenAIToolChoice, error) {
	raw = bytes.TrimSpace(raw)
	var mode string
	if json.Unmarshal(raw, &mode) == nil {
		if mode != providers.ToolChoiceNone && mode != providers.ToolChoiceAuto {
			return OpenAIToolChoice{}, invalid("function_call", `must be "none", "auto" or {"name": …}, got %q`, mode)
		}
		return OpenAIToolChoice{Mode: mode}, nil
	}
	var named struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(raw, &named); err != nil || named.Name == "" {
		return OpenAIToolChoice{}, invalid("function_call", `must be "none", "auto" or {"name": …}, got %s`, raw)
	}
	return OpenAIToolChoice{Mode: providers.ToolChoiceFunction, Name: named.Name}, nil
}

// translateLegacyMessages turns assistant function_calls into tool calls and "function"
// messages into the "tool" messages answering the latest call of their name. A "function"
// message that answers no earlier call (an agent trimmed its history; OpenAI takes it) is
// given one, a call of its function with arguments "{}", so every provider gets a
// conversation it takes (Anthropic and Gemini refuse a result without its call): made by
// the assistant message just before it when that one calls nothing (Gemini refuses a call
// in a turn following another of the model's), else by an assistant message put before it
// — after a "Please continue." user turn when that message would open the conversation,
// which Gemini and Anthropic refuse. Fields of later errors keep the caller's indices.
func (r *OpenAIChatRequest) translateLegacyMessages() error {
	legacy := false
	for _, m := range r.Messages {
		if present(m.FunctionCall) || m.Role == "function" {
			legacy = true
			break
		}
	}
	if !legacy {
		return nil
	}
	msgs := make([]OpenAIMessage, 0, len(r.Messages))
	var sentIndex []int          // msgs[j] is the caller's messages[sentIndex[j]]; nil while none is added
	calls := map[string]string{} // function name → id of its latest call
	for i, orig := range r.Messages {
		m := orig
		switch {
		case present(m.FunctionCall):
			if m.Role != "assistant" {
				return invalid(fmt.Sprintf("messages[%d].function_call", i), "only assistant messages have a function_call, got one in a %q message", m.Role)
			}
			if len(m.ToolCalls) > 0 {
				return invalid(fmt.Sprintf("messages[%d].function_call", i), "give tool_calls or the legacy function_call, not both")
			}
			var fc OpenAIFunctionCall
			if err := json.Unmarshal(m.FunctionCall, &fc); err != nil || fc.Name == "" {
				return invalid(fmt.Sprintf("messages[%d].function_call", i), `must be {"name": …, "arguments": "…"}`)
			}
			id := legacyCallID(i)
			calls[fc.Name] = id
			m.ToolCalls = []OpenAIToolCall{{ID: id, Type: "function", Function: fc}}
			m.FunctionCall = nil
		case m.Role == "function":
			if m.Name == "" {
				return invalid(fmt.Sprintf("messages[%d].name", i), "is required in a function message: the function whose result it is")
			}
			id, ok := calls[m.Name]
			if !ok {
				id = legacyCallID(i)
				call := OpenAIToolCall{ID: id, Type: "function", Function: OpenAIFunctionCall{Name: m.Name, Arguments: "{}"}}
				if n := len(msgs); n > 0 && msgs[n-1].Role == "assistant" && len(msgs[n-1].ToolCalls) == 0 {
					msgs[n-1].ToolCalls = []OpenAIToolCall{call}
					m.Role, m.ToolCallID, m.Name = "tool", id, ""
					break
				}
				if sentIndex == nil {
					sentIndex = make([]int, len(msgs), len(r.Messages)+1)
					for j := range sentIndex {
						sentIndex[j] = j
					}
				}
				if opensConversation(msgs) {
					// A conversation may not open with the model's turn on Gemini and Anthropic
					// (nor Bedrock): like LiteLLM, a user turn asking to go on comes first, so
					// the result keeps its function's name and stays a function's result.
					msgs = append(msgs, OpenAIMessage{Role: "user", Content: OpenAIContent{Parts: []OpenAIContentPart{{Type: "text", Text: userContinue}}, IsString: true}})
					sentIndex = append(sentIndex, i)
				}
				msgs = append(msgs, OpenAIMessage{Role: "assistant", ToolCalls: []OpenAIToolCall{call}})
				sentIndex = append(sentIndex, i)
			}
			m.Role, m.ToolCallID, m.Name = "tool", id, ""
		}
		msgs = append(msgs, m)
		if sentIndex != nil {
			sentIndex = append(sentIndex, i)
		}
	}
	r.Messages = msgs
	if sentIndex != nil {
		r.renameFields(func(f string) string { return callerMessageField(f, sentIndex) })
	}
	return nil
}

// userContinue is the user turn put before a made-up call that would open the conversation
// (LiteLLM's default continue message).
const userContinue = "Please continue."

// opensConversation says whether a message appended to msgs would be the conversation's
// first turn: only system (or developer) messages come before it.
func opensConversation(msgs []OpenAIMessage) bool {
	for _, m := range msgs {
		if m.Role != "system" && m.Role != "developer" {
			return false
		}
	}
	return true
}

var messageField = regexp.MustCompile(`^messages\[(\d+)\]`)

// callerMessageField names field f of the messages sent as the caller gave it:
// messages[j] is the caller's messages[sentIndex[j]] (a made-up call is named after the
// "function" message it was made for).
func callerMessageField(f string, sentIndex []int) string {
	m := messageField.FindStringSubmatchIndex(f)
	if m == nil {
		return f
	}
	j, err := strconv.Atoi(f[m[2]:m[3]])
	if err != nil || j >= len(sentIndex) {
		return f
	}
	return fmt.Sprintf("messages[%d]", sentIndex[j]) + f[m[1]:]
}

// renameFields makes validation errors name the fields as the caller sent them, after
// rename (then any earlier renaming).
func (r *OpenAIChatRequest) renameFields(rename func(string) string) {
	outer := r.fieldName
	r.fieldName = func(f string) string {
		f = rename(f)
		if outer != nil {
			f = outer(f)
		}
		return f
	}
}

var legacyToolField = regexp.MustCompile(`^tools\[(\d+)\]\.function(\.|$)`)

// legacyFieldName names a field of the tools translated from functions as the caller sent
// it: tools[i].function.name is functions[i].name, tool_choice is function_call (and the
// name it chooses, tool_choice.function.name, function_call.name).
func legacyFieldName(f string) string {
	if f == "tool_choice.function.name" {
		return "function_call.name" // the legacy choice is {"name": …}
	}
	if f == "tool_choice" || strings.HasPrefix(f, "tool_choice.") {
		return "function_call" + strings.TrimPrefix(f, "tool_choice")
	}
	if m := legacyToolField.FindStringSubmatchIndex(f); m != nil {
		rest := strings.TrimPrefix(f[m[1]:], ".")
		out := "functions[" + f[m[2]:m[3]] + "]"
		if rest != "" {
			out += "." + rest
		}
		return out
	}
	if f == "tools" {
		return "functions"
	}
	return f
}

// AsLegacyFunctionCall writes c in the legacy functions API's form, for a request that
// declared functions (OpenAIChatRequest.UsesLegacyFunctions): each choice's first tool
// call becomes its message.function_call (the legacy API has one call per answer; any
// other is dropped) and finish_reason "tool_calls" becomes "function_call".
func (c *OpenAIChatCompletion) AsLegacyFunctionCall() {
	for i := range c.Choices {
		ch := &c.Choices[i]
		if len(ch.Message.ToolCalls) > 0 {
			fc := ch.Message.ToolCalls[0].Function
			ch.Message.FunctionCall, ch.Message.ToolCalls = &fc, nil
		}
		if ch.FinishReason == "tool_calls" {
			ch.FinishReason = "function_call"
		}
	}
}

// legacyFunctionChunk is the chunk of one tool-call fragment of choice index in the legacy
// form (delta.function_call); the choice's first chunk also says the role.
func legacyFunctionChunk(base OpenAIChunk, index int, d providers.ToolCallDelta, first bool) OpenAIChunk {
	ck := base
	ck.Choices = []OpenAIChunkChoice{{Index: index, Delta: OpenAIDelta{FunctionCall: &OpenAIFunctionCallDelta{Name: d.Name, Arguments: d.Arguments}}}}
	if first {
		ck.Choices[0].Delta.Role = "assistant"
	}
	return ck
}
