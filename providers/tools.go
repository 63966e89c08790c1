package providers

import "encoding/json"

// Tool calling and structured output, provider-neutral. The shapes follow OpenAI's chat
// completions (functions with JSON Schema parameters, tool calls with JSON-text arguments);
// each adapter maps them to and from its wire format:
//
//   - OpenAI(-compatible): tools, tool_choice, parallel_tool_calls, response_format,
//     assistant tool_calls and "tool" messages as they are.
//   - Anthropic: tools with input_schema; tool_choice auto/any/tool/none with
//     disable_parallel_tool_use; tool_use blocks in assistant turns and tool_result blocks
//     in user turns (consecutive tool results merged into one user turn). Structured output
//     is a forced tool (see Anthropic).
//   - Gemini: tools.functionDeclarations, toolConfig.functionCallingConfig, functionCall and
//     functionResponse parts; responseMimeType and responseSchema for structured output.
//     Schemas are converted to Gemini's OpenAPI-subset dialect (see Gemini).

// Tool is a function the model may call. Parameters is a JSON Schema object; nil means
// the function takes no parameters.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	// Strict asks for arguments that follow Parameters exactly (OpenAI's strict mode;
	// other providers ignore it).
	Strict bool `json:"strict,omitempty"`
}

// Tool choice modes (ToolChoice.Mode).
const (
	// ToolChoiceAuto lets the model answer or call tools (the default when tools are given).
	ToolChoiceAuto = "auto"
	// ToolChoiceNone forbids tool calls; the tools stay declared.
	ToolChoiceNone = "none"
	// ToolChoiceRequired makes the model call at least one tool.
	ToolChoiceRequired = "required"
	// ToolChoiceFunction makes the model call the function ToolChoice.Name.
	ToolChoiceFunction = "function"
)

// ToolChoice says whether and which tool the model must call.
type ToolChoice struct {
	// Mode is one of the ToolChoice* constants.
	Mode string `json:"mode"`
	// Name is the function to call with ToolChoiceFunction.
	Name string `json:"name,omitempty"`
}

// ToolCall is one function call made by the model: in an assistant Message of the
// conversation, and in a Response.
type ToolCall struct {
	// ID pairs the call with its result (Message.ToolCallID). Gemini has no call ids;
	// its adapter synthesizes them (see Gemini).
	ID string `json:"id"`
	// Name is the function's name.
	Name string `json:"name"`
	// Arguments is the arguments object as JSON text, as the model generated it.
	Arguments string `json:"arguments"`
	// ThoughtSignature is Gemini's thoughtSignature of the functionCall part the call came
	// in: an opaque token of the model's reasoning that Gemini 3 wants back, unchanged, on
	// the same part of the history. Only the Gemini adapter (Gemini and Vertex AI) reads or
	// writes it; other adapters never send it.
	ThoughtSignature string `json:"thought_signature,omitempty"`
}

// ToolCallDelta is a fragment of a streamed tool call. The first fragment of a call carries
// ID and Name (and possibly the first piece of Arguments); later fragments of the same Index
// carry further pieces of Arguments, to be concatenated.
type ToolCallDelta struct {
	// Index is the position of the call among the answer's tool calls, from 0.
	Index     int    `json:"index"`
	ID        string `json:"id,omitempty"`
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments,omitempty"`
	// ThoughtSignature is the call's Gemini thoughtSignature (see ToolCall), whole, on
	// whichever fragment of the call it arrived with.
	ThoughtSignature string `json:"thought_signature,omitempty"`
}

// Response format types (ResponseFormat.Type).
const (
	// ResponseText is free text, the default.
	ResponseText = "text"
	// ResponseJSONObject asks for any JSON object (OpenAI's JSON mode).
	ResponseJSONObject = "json_object"
	// ResponseJSONSchema asks for JSON that follows ResponseFormat.Schema.
	ResponseJSONSchema = "json_schema"
)

// ResponseFormat asks for structured output. The answer's text is then the JSON document.
type ResponseFormat struct {
	// Type is ResponseText, ResponseJSONObject or ResponseJSONSchema.
	Type string `json:"type"`
	// Name names the schema (ResponseJSONSchema; letters, digits, '_' and '-').
	Name string `json:"name,omitempty"`
	// Description tells the model what the output is for.
	Description string `json:"description,omitempty"`
	// Schema is the JSON Schema of the output (ResponseJSONSchema).
	Schema json.RawMessage `json:"schema,omitempty"`
	// Strict asks for output that follows Schema exactly (OpenAI's strict mode).
	Strict bool `json:"strict,omitempty"`
}

// JSON reports whether f asks for JSON output (JSON mode or a schema).
func (f *ResponseFormat) JSON() bool {
	return f != nil && (f.Type == ResponseJSONObject || f.Type == ResponseJSONSchema)
}

// UnsupportedError reports a request feature a provider cannot honour for a model, found
// before any upstream call. Field names the request field in OpenAI's terms (e.g.
// "response_format.json_schema.schema").
type UnsupportedError struct {
	Provider string
	Field    string
	Reason   string
}

// Error formats the refusal.
func (e *UnsupportedError) Error() string {
	return e.Provider + ": " + e.Field + ": " + e.Reason
}

// RequestChecker is implemented by adapters that cannot map every valid request: Check
// returns an *UnsupportedError for what model cannot be asked, so the caller can refuse the
// request before calling anyone.
type RequestChecker interface {
	Check(model string, req *Request) error
}

// BuiltinToolSupporter is implemented by providers that run Gemini's built-in code
// execution and URL context tools (Request.CodeExecution, Request.URLContext).
type BuiltinToolSupporter interface {
	SupportsBuiltinTools(model string) bool
}

// Check returns p's objection to req for model (see RequestChecker,
// BuiltinToolSupporter, LogprobsSupporter, AudioInputSupporter and
// AudioOutputSupporter), or nil.
func Check(p Provider, model string, req *Request) error {
	if req.CodeExecution || req.URLContext {
		if b, ok := p.(BuiltinToolSupporter); !ok || !b.SupportsBuiltinTools(model) {
			field := "code_execution"
			if !req.CodeExecution {
				field = "url_context"
			}
			return &UnsupportedError{Provider: p.Name(), Field: field, Reason: "only Gemini models run Google's code execution and URL context tools"}
		}
	}
	if err := checkLogprobs(p, model, req); err != nil {
		return err
	}
	if err := checkAudioInput(p, model, req); err != nil {
		return err
	}
	if err := checkAudioOutput(p, model, req); err != nil {
		return err
	}
	if rc, ok := p.(RequestChecker); ok {
		return rc.Check(model, req)
	}
	return nil
}
