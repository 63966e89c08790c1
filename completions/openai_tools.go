package completions

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/invopop/jsonschema"
	"github.com/switchyard-ai/switchyard/providers"
)

// OpenAI-compatible tool calling and structured output: the request and response types of
// POST /v1/chat/completions that carry tools, tool calls and response_format, in OpenAI's
// shapes. They translate to and from the provider-neutral providers.Tool, ToolChoice,
// ToolCall, ToolCallDelta and ResponseFormat.

// OpenAITool is one entry of tools: {"type": "function", "function": {...}}.
type OpenAITool struct {
	// Type must be "function".
	Type     string         `json:"type" jsonschema:"required,enum=function"`
	Function OpenAIFunction `json:"function" jsonschema:"required"`
}

// OpenAIFunction declares a function the model may call.
type OpenAIFunction struct {
	// Name is 1-64 letters, digits, '_' or '-'.
	Name        string `json:"name" jsonschema:"required"`
	Description string `json:"description,omitempty"`
	// Parameters is the JSON Schema of the arguments object; absent means no parameters.
	Parameters json.RawMessage `json:"parameters,omitempty" jsonschema:"type=object"`
	// Strict asks for arguments that follow Parameters exactly (OpenAI's strict mode;
	// other providers ignore it).
	Strict *bool `json:"strict,omitempty"`
}

// OpenAIToolChoice is tool_choice: "none", "auto", "required",
// {"type": "function", "function": {"name": "..."}} to force one function, or
// {"type": "allowed_tools", "allowed_tools": {...}} to let the model call only some of the
// tools (see OpenAIAllowedTools). Mode holds the string form, or the object's type.
type OpenAIToolChoice struct {
	Mode string
	Name string
	// AllowedTools is the allowed_tools member, with Mode ToolChoiceAllowedTools.
	AllowedTools *OpenAIAllowedTools
}

type openAIToolChoiceObject struct {
	Type     string `json:"type"`
	Function *struct {
		Name string `json:"name"`
	} `json:"function,omitempty"`
	AllowedTools *OpenAIAllowedTools `json:"allowed_tools,omitempty"`
}

// UnmarshalJSON reads the string or the object form.
func (c *OpenAIToolChoice) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	*c = OpenAIToolChoice{}
	if len(b) > 0 && b[0] == '"' {
		return json.Unmarshal(b, &c.Mode)
	}
	if bytes.Equal(b, []byte("null")) {
		return nil
	}
	var o openAIToolChoiceObject
	if err := json.Unmarshal(b, &o); err != nil {
		return err
	}
	c.Mode, c.AllowedTools = o.Type, o.AllowedTools
	if o.Function != nil {
		c.Name = o.Function.Name
	}
	if c.Mode == "" {
		c.Mode = "function"
	}
	return nil
}

// MarshalJSON writes the string form, or the object form for a named function or
// allowed_tools.
func (c OpenAIToolChoice) MarshalJSON() ([]byte, error) {
	switch c.Mode {
	case providers.ToolChoiceFunction:
		o := openAIToolChoiceObject{Type: c.Mode, Function: &struct {
			Name string `json:"name"`
		}{c.Name}}
		return json.Marshal(o)
	case ToolChoiceAllowedTools:
		return json.Marshal(openAIToolChoiceObject{Type: c.Mode, AllowedTools: c.AllowedTools})
	}
	return json.Marshal(c.Mode)
}

// JSONSchema describes tool_choice for invopop/jsonschema.
func (OpenAIToolChoice) JSONSchema() *jsonschema.Schema {
	fn := jsonschema.NewProperties()
	fn.Set("name", &jsonschema.Schema{Type: "string"})
	obj := jsonschema.NewProperties()
	obj.Set("type", &jsonschema.Schema{Type: "string", Enum: []any{"function"}})
	obj.Set("function", &jsonschema.Schema{Type: "object", Properties: fn, Required: []string{"name"}})
	allowed := jsonschema.NewProperties()
	allowed.Set("type", &jsonschema.Schema{Type: "string", Enum: []any{ToolChoiceAllowedTools}})
	allowed.Set("allowed_tools", &jsonschema.Schema{Type: "object", Required: []string{"mode", "tools"},
		Description: `{"mode": "auto" or "required", "tools": [{"type": "function", "function": {"name": …}}]}: the tools the model may call`})
	return &jsonschema.Schema{OneOf: []*jsonschema.Schema{
		{Type: "string", Enum: []any{"none", "auto", "required"}},
		{Type: "object", Properties: obj, Required: []string{"type", "function"}},
		{Type: "object", Properties: allowed, Required: []string{"type", "allowed_tools"}},
	}}
}

// OpenAIResponseFormat is response_format: {"type": "text"}, {"type": "json_object"} or
// {"type": "json_schema", "json_schema": {...}}.
type OpenAIResponseFormat struct {
	Type       string            `json:"type" jsonschema:"required,enum=text,enum=json_object,enum=json_schema"`
	JSONSchema *OpenAIJSONSchema `json:"json_schema,omitempty"`
}

// OpenAIJSONSchema is the json_schema member of response_format.
type OpenAIJSONSchema struct {
	// Name is 1-64 letters, digits, '_' or '-'.
	Name        string          `json:"name" jsonschema:"required"`
	Description string          `json:"description,omitempty"`
	Schema      json.RawMessage `json:"schema,omitempty" jsonschema:"type=object"`
	Strict      *bool           `json:"strict,omitempty"`
}

// OpenAIToolCall is a complete tool call: in an assistant message of the request, and in
// message.tool_calls of a response.
type OpenAIToolCall struct {
	ID string `json:"id"`
	// Type is "function".
	Type     string             `json:"type"`
	Function OpenAIFunctionCall `json:"function"`
	// ExtraContent carries Gemini's thought signature of the call, as Google's own
	// OpenAI-compatible endpoint does; a client sends it back with the call.
	ExtraContent *OpenAIExtraContent `json:"extra_content,omitempty"`
	// ProviderSpecificFields is LiteLLM's place for the same signature; it is read from
	// requests and never written.
	ProviderSpecificFields *OpenAIProviderFields `json:"provider_specific_fields,omitempty"`
}

// OpenAIExtraContent is Google's extension of an OpenAI tool call (extra_content).
type OpenAIExtraContent struct {
	// Google holds what Gemini needs back.
	Google *OpenAIGoogleExtra `json:"google,omitempty"`
}

// OpenAIGoogleExtra is extra_content.google: Gemini's opaque thought signature.
type OpenAIGoogleExtra struct {
	// ThoughtSignature is the thoughtSignature of the call's functionCall part; send it back unchanged.
	ThoughtSignature string `json:"thought_signature,omitempty" jsonschema:"description=Gemini's thoughtSignature of the call; send it back unchanged"`
}

// OpenAIProviderFields is LiteLLM's provider_specific_fields of a tool call.
type OpenAIProviderFields struct {
	// ThoughtSignature is Gemini's thoughtSignature of the call.
	ThoughtSignature string `json:"thought_signature,omitempty"`
}

// liteLLMThoughtSeparator joins a tool call id and Gemini's thought signature in the ids
// LiteLLM gives Gemini's calls ("call_…__thought__<signature>").
const liteLLMThoughtSeparator = "__thought__"

// thoughtSignature is the Gemini thought signature a tool call of a request carries:
// Google's extra_content, else LiteLLM's provider_specific_fields or the signature LiteLLM
// appends to the call's id.
func (c *OpenAIToolCall) thoughtSignature() string {
	if e := c.ExtraContent; e != nil && e.Google != nil && e.Google.ThoughtSignature != "" {
		return e.Google.ThoughtSignature
	}
	if f := c.ProviderSpecificFields; f != nil && f.ThoughtSignature != "" {
		return f.ThoughtSignature
	}
	if _, sig, ok := strings.Cut(c.ID, liteLLMThoughtSeparator); ok {
		return sig
	}
	return ""
}

// googleExtra is the extra_content of a call with Gemini's thought signature sig; nil
// without one.
func googleExtra(sig string) *OpenAIExtraContent {
	if sig == "" {
		return nil
	}
	return &OpenAIExtraContent{Google: &OpenAIGoogleExtra{ThoughtSignature: sig}}
}

// OpenAIFunctionCall is the function of a tool call; Arguments is JSON text.
type OpenAIFunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// OpenAIToolCallDelta is one entry of delta.tool_calls in a streamed chunk. The first
// fragment of a call has ID, Type and Function.Name; later ones (same Index) have pieces of
// Function.Arguments only.
type OpenAIToolCallDelta struct {
	Index    int                     `json:"index"`
	ID       string                  `json:"id,omitempty"`
	Type     string                  `json:"type,omitempty"`
	Function OpenAIFunctionCallDelta `json:"function"`
	// ExtraContent is the call's Gemini thought signature (see OpenAIToolCall), on the
	// fragment it arrived with.
	ExtraContent *OpenAIExtraContent `json:"extra_content,omitempty"`
}

// OpenAIFunctionCallDelta is the function of a tool-call fragment.
type OpenAIFunctionCallDelta struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

func openAIToolCalls(calls []providers.ToolCall) []OpenAIToolCall {
	if len(calls) == 0 {
		return nil
	}
	out := make([]OpenAIToolCall, len(calls))
	for i, c := range calls {
		out[i] = OpenAIToolCall{ID: c.ID, Type: "function", Function: OpenAIFunctionCall{Name: c.Name, Arguments: c.Arguments},
			ExtraContent: googleExtra(c.ThoughtSignature)}
	}
	return out
}

func openAIToolCallDelta(d providers.ToolCallDelta) OpenAIToolCallDelta {
	out := OpenAIToolCallDelta{Index: d.Index, ID: d.ID, Function: OpenAIFunctionCallDelta{Name: d.Name, Arguments: d.Arguments},
		ExtraContent: googleExtra(d.ThoughtSignature)}
	if d.ID != "" || d.Name != "" {
		out.Type = "function"
	}
	return out
}

// errNotJSON is the cause of a JSON text that does not parse.
var errNotJSON = errors.New("not valid JSON")

// MaxTools is the most tools a request may declare (OpenAI's limit).
const MaxTools = 128

// toolRequest copies tools, tool_choice, parallel_tool_calls and response_format into req,
// checking what the OpenAI API checks about their shape. Schemas are checked by the gateway
// (see validateTools).
func (r *OpenAIChatRequest) toolRequest(req *Request) error {
	if len(r.Tools) > MaxTools {
		return invalid("tools", "at most %d tools, got %d", MaxTools, len(r.Tools))
	}
	for i, t := range r.Tools {
		if t.Type != "function" {
			return invalid(fmt.Sprintf("tools[%d].type", i), `must be "function", got %q`, t.Type)
		}
		req.Tools = append(req.Tools, providers.Tool{Name: t.Function.Name, Description: t.Function.Description,
			Parameters: t.Function.Parameters, Strict: t.Function.Strict != nil && *t.Function.Strict})
	}
	if c := r.ToolChoice; c != nil && c.Mode != "" {
		switch c.Mode {
		case providers.ToolChoiceNone, providers.ToolChoiceAuto, providers.ToolChoiceRequired, providers.ToolChoiceFunction:
			req.ToolChoice = &providers.ToolChoice{Mode: c.Mode, Name: c.Name}
		case ToolChoiceAllowedTools:
			if err := allowedToolsRequest(c, req); err != nil {
				return err
			}
		default:
			return invalid("tool_choice", `must be "none", "auto", "required", {"type":"function","function":{"name":…}} or {"type":"allowed_tools","allowed_tools":{…}}, got %q`, c.Mode)
		}
	}
	req.ParallelToolCalls = r.ParallelToolCalls
	if f := r.ResponseFormat; f != nil {
		switch f.Type {
		case providers.ResponseText:
		case providers.ResponseJSONObject:
			req.ResponseFormat = &providers.ResponseFormat{Type: f.Type}
		case providers.ResponseJSONSchema:
			s := f.JSONSchema
			if s == nil {
				return invalid("response_format.json_schema", `is required with type "json_schema"`)
			}
			req.ResponseFormat = &providers.ResponseFormat{Type: f.Type, Name: s.Name, Description: s.Description,
				Schema: s.Schema, Strict: s.Strict != nil && *s.Strict}
		default:
			return invalid("response_format.type", `must be "text", "json_object" or "json_schema", got %q`, f.Type)
		}
	}
	return nil
}

// messageToolCalls converts the tool calls of messages[i].
func messageToolCalls(i int, m OpenAIMessage) ([]providers.ToolCall, error) {
	if len(m.ToolCalls) == 0 {
		return nil, nil
	}
	if m.Role != "assistant" {
		return nil, invalid(fmt.Sprintf("messages[%d].tool_calls", i), "only assistant messages have tool calls")
	}
	out := make([]providers.ToolCall, len(m.ToolCalls))
	for j, c := range m.ToolCalls {
		if c.Type != "" && c.Type != "function" {
			return nil, invalid(fmt.Sprintf("messages[%d].tool_calls[%d].type", i, j), `must be "function", got %q`, c.Type)
		}
		out[j] = providers.ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments, ThoughtSignature: c.thoughtSignature()}
	}
	return out, nil
}

// openAIResponseMessage is the message of r's choice: content null when the answer is only
// tool calls, refusal null unless the model refused.
func openAIResponseMessage(r *Response) OpenAIResponseMessage {
	m := OpenAIResponseMessage{Role: "assistant", ToolCalls: openAIToolCalls(r.ToolCalls), Audio: r.Audio}
	if text := r.Text(); text != "" || len(r.ToolCalls) == 0 && r.Refusal == "" && r.Audio == nil {
		m.Content = &text
	}
	if r.Refusal != "" {
		refusal := r.Refusal
		m.Refusal = &refusal
	}
	m.ReasoningContent, m.ThinkingBlocks = reasoningText(r.Reasoning), openAIThinkingBlocks(r.Reasoning)
	if m.Content != nil {
		m.Annotations = openAIAnnotations(*m.Content, r.Sources)
	}
	return m
}

// openAIAnnotations are the url_citation annotations of an answer's text for the web pages
// the provider's search found, each spanning the whole text; nil when there are none.
func openAIAnnotations(text string, sources []providers.Source) []OpenAIAnnotation {
	var out []OpenAIAnnotation
	end := utf8.RuneCountInString(text)
	for _, s := range sources {
		out = append(out, OpenAIAnnotation{Type: "url_citation", URLCitation: OpenAIURLCitation{StartIndex: 0, EndIndex: end, URL: s.URL, Title: s.Title}})
	}
	return out
}
