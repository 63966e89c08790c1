package client

import (
	"bytes"
	"encoding/json"
)

// Tool calling and structured output on the OpenAI-compatible endpoint, in OpenAI's shapes.
// A tool loop: send Tools; when the answer's FinishReason is "tool_calls", append
// Message.Param() and one ToolResult per call to the messages, and ask again.
//
//	res, _ := c.ChatCompletion(ctx, req)
//	for res.Choices[0].FinishReason == "tool_calls" {
//		m := res.Choices[0].Message
//		req.Messages = append(req.Messages, m.Param())
//		for _, call := range m.ToolCalls {
//			req.Messages = append(req.Messages, client.ToolResult(call.ID, run(call.Function)))
//		}
//		res, _ = c.ChatCompletion(ctx, req)
//	}

// ChatTool is one entry of tools: {"type": "function", "function": {...}}.
type ChatTool struct {
	// Type is "function".
	Type     string       `json:"type"`
	Function ChatFunction `json:"function"`
}

// ChatFunction declares a function the model may call.
type ChatFunction struct {
	// Name is 1-64 letters, digits, '_' or '-'.
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Parameters is the JSON Schema of the arguments object; nil for none.
	Parameters json.RawMessage `json:"parameters,omitempty"`
	// Strict asks for arguments that follow Parameters exactly (where the provider can).
	Strict *bool `json:"strict,omitempty"`
}

// FunctionTool returns a function tool; parameters is its JSON Schema (nil for none).
func FunctionTool(name, description string, parameters json.RawMessage) ChatTool {
	return ChatTool{Type: "function", Function: ChatFunction{Name: name, Description: description, Parameters: parameters}}
}

// Tool choice modes (ChatToolChoice.Mode).
const (
	ToolChoiceAuto     = "auto"
	ToolChoiceNone     = "none"
	ToolChoiceRequired = "required"
	// ToolChoiceFunction forces the function ChatToolChoice.Name.
	ToolChoiceFunction = "function"
)

// ChatToolChoice is tool_choice: "none", "auto", "required", or a named function, sent as
// {"type": "function", "function": {"name": …}}.
type ChatToolChoice struct {
	Mode string
	Name string
}

// ForceFunction is the tool choice that makes the model call the function name.
func ForceFunction(name string) *ChatToolChoice {
	return &ChatToolChoice{Mode: ToolChoiceFunction, Name: name}
}

type chatToolChoiceObject struct {
	Type     string `json:"type"`
	Function struct {
		Name string `json:"name"`
	} `json:"function"`
}

// MarshalJSON writes the string form, or the object form for a named function.
func (c ChatToolChoice) MarshalJSON() ([]byte, error) {
	if c.Mode != ToolChoiceFunction {
		return json.Marshal(c.Mode)
	}
	var o chatToolChoiceObject
	o.Type, o.Function.Name = c.Mode, c.Name
	return json.Marshal(o)
}

// UnmarshalJSON reads either form.
func (c *ChatToolChoice) UnmarshalJSON(b []byte) error {
	*c = ChatToolChoice{}
	if b = bytes.TrimSpace(b); len(b) > 0 && b[0] == '"' {
		return json.Unmarshal(b, &c.Mode)
	}
	var o chatToolChoiceObject
	if err := json.Unmarshal(b, &o); err != nil {
		return err
	}
	c.Mode, c.Name = o.Type, o.Function.Name
	return nil
}

// ChatToolCall is a call the model made: in message.tool_calls of an answer, and in an
// assistant message sent back.
type ChatToolCall struct {
	ID string `json:"id"`
	// Type is "function".
	Type     string           `json:"type"`
	Function ChatFunctionCall `json:"function"`
}

// ChatFunctionCall is the function of a tool call; Arguments is JSON text.
type ChatFunctionCall struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

// ChatToolCallDelta is one entry of delta.tool_calls in a streamed chunk: the first
// fragment of a call (by Index) has ID, Type and Function.Name, later ones pieces of
// Function.Arguments. ChatCompletionStream.ToolCalls assembles them.
type ChatToolCallDelta struct {
	Index    int              `json:"index"`
	ID       string           `json:"id,omitempty"`
	Type     string           `json:"type,omitempty"`
	Function ChatFunctionCall `json:"function"`
}

// Response format types (ChatResponseFormat.Type).
const (
	ResponseFormatText       = "text"
	ResponseFormatJSONObject = "json_object"
	ResponseFormatJSONSchema = "json_schema"
)

// ChatResponseFormat is response_format: JSON mode ({"type": "json_object"}) or structured
// output ({"type": "json_schema", "json_schema": {...}}). The answer's content is then the
// JSON document.
type ChatResponseFormat struct {
	Type       string          `json:"type"`
	JSONSchema *ChatJSONSchema `json:"json_schema,omitempty"`
}

// ChatJSONSchema is the json_schema member of response_format.
type ChatJSONSchema struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Schema      json.RawMessage `json:"schema,omitempty"`
	Strict      *bool           `json:"strict,omitempty"`
}

// JSONSchemaFormat is the response format asking for JSON that follows schema.
func JSONSchemaFormat(name string, schema json.RawMessage) *ChatResponseFormat {
	return &ChatResponseFormat{Type: ResponseFormatJSONSchema, JSONSchema: &ChatJSONSchema{Name: name, Schema: schema}}
}

// ToolResult is the "tool" message answering the call callID with content.
func ToolResult(callID, content string) ChatCompletionMessage {
	return ChatCompletionMessage{Role: "tool", ToolCallID: callID, Content: content}
}

// Param returns the answer as the assistant message to send back in the next request of
// a tool loop (its content, tool calls and signed reasoning blocks).
func (m ChatCompletionResponseMessage) Param() ChatCompletionMessage {
	return ChatCompletionMessage{Role: "assistant", Content: m.Content, ToolCalls: m.ToolCalls, ThinkingBlocks: m.ThinkingBlocks}
}

// toolCallAssembler assembles streamed tool-call fragments.
type toolCallAssembler struct {
	calls []ChatToolCall
}

func (a *toolCallAssembler) add(ds []ChatToolCallDelta) {
	for _, d := range ds {
		if d.Index < 0 || d.Index > 1<<10 {
			continue
		}
		for len(a.calls) <= d.Index {
			a.calls = append(a.calls, ChatToolCall{})
		}
		c := &a.calls[d.Index]
		if d.ID != "" {
			c.ID = d.ID
		}
		if d.Type != "" {
			c.Type = d.Type
		}
		if d.Function.Name != "" {
			c.Function.Name = d.Function.Name
		}
		c.Function.Arguments += d.Function.Arguments
	}
}
