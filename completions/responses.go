package completions

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/invopop/jsonschema"
	"github.com/switchyard-ai/switchyard/providers"
)

// OpenAI's Responses API (POST /v1/responses), the subset SDKs use for chat: a request is
// translated to an OpenAIChatRequest and served by the same gateway (fallbacks, retries,
// usage, cost, ledger) as /v1/chat/completions; the answer is translated back into a
// "response" object or its typed stream events. Answers are kept in the gateway's store
// unless the request says store: false (responsestore.go), so previous_response_id
// continues a conversation; background: true runs the request on after answering
// (background.go).

// ResponsesRequest is the body of POST /v1/responses.
type ResponsesRequest struct {
	Model string `json:"model" jsonschema:"required"`
	// Input is a string (one user message) or a list of items: messages (role user,
	// system, developer or assistant; content a string or input_text parts, output_text
	// and refusal parts in assistant messages only, and input_image and input_file parts
	// in user messages),
	// function_call items (the model's earlier calls) and function_call_output items (their
	// results), custom_tool_call and custom_tool_call_output items, reasoning items, and
	// item_reference items naming an item of one of the caller's recent answers.
	Input        ResponsesInput `json:"input" jsonschema:"required"`
	Instructions string         `json:"instructions,omitempty"`
	// Tools are functions in the Responses API's flat shape, and mcp tools naming the MCP
	// servers the gateway configures (see Gateway.RespondWithMCP).
	Tools []ResponsesTool `json:"tools,omitempty"`
	// MaxToolCalls bounds the calls of MCP tools the gateway makes for one response (OpenAI's
	// max_tool_calls): when the model asks for more the response ends incomplete.
	MaxToolCalls      *int                 `json:"max_tool_calls,omitempty" jsonschema:"minimum=1"`
	ToolChoice        *ResponsesToolChoice `json:"tool_choice,omitempty"`
	ParallelToolCalls *bool                `json:"parallel_tool_calls,omitempty"`
	// Text.Format asks for JSON output (json_object or json_schema).
	Text        *ResponsesText `json:"text,omitempty"`
	Temperature *float64       `json:"temperature,omitempty" jsonschema:"minimum=0,maximum=2"`
	TopP        *float64       `json:"top_p,omitempty" jsonschema:"minimum=0,maximum=1"`
	// MaxOutputTokens bounds the answer: at least 16, OpenAI's minimum on this API.
	MaxOutputTokens *int `json:"max_output_tokens,omitempty" jsonschema:"minimum=16"`
	Stream          bool `json:"stream,omitempty"`
	// Store false asks the gateway not to keep the answer (kept by default, as OpenAI does:
	// see StoredResponsesOptions).
	Store *bool `json:"store,omitempty"`
	// Reasoning's effort, User, ServiceTier, SafetyIdentifier and PromptCacheKey reach the
	// upstream as on chat completions (reasoning_effort, user, …); text.verbosity too.
	Reasoning        *ResponsesReasoning `json:"reasoning,omitempty"`
	User             string              `json:"user,omitempty"`
	ServiceTier      string              `json:"service_tier,omitempty"`
	SafetyIdentifier string              `json:"safety_identifier,omitempty"`
	PromptCacheKey   string              `json:"prompt_cache_key,omitempty"`
	// Include lists extra output to return: "message.output_text.logprobs" asks for the log
	// probability of each token of the answer (each output_text part's logprobs), as
	// OpenAI's API; other values are accepted and ignored. TopLogprobs (0 to 20) asks for
	// that many likeliest alternatives at each position too. Either asks only the models
	// that give them (as logprobs on chat completions).
	Include     []string `json:"include,omitempty"`
	TopLogprobs *int     `json:"top_logprobs,omitempty" jsonschema:"minimum=0,maximum=20"`
	// PreviousResponseID continues the conversation a stored answer ends: its items come
	// before input (Gateway.ContinueResponse).
	PreviousResponseID string `json:"previous_response_id,omitempty"`
	// Conversation names an OpenAI conversation (its id, or {"id": …}): its items come
	// before input, and the request's and the answer's items are added to it
	// (Gateway.ContinueResponse, Gateway.StoreResponse). Not with previous_response_id.
	Conversation json.RawMessage `json:"conversation,omitempty" jsonschema:"oneof_type=string;object"`
	// Background answers at once with the response queued and runs the request on
	// (Gateway.StartBackgroundResponse): poll GET /v1/responses/{id}, cancel with POST
	// /v1/responses/{id}/cancel. It needs store (not false); not with stream or
	// conversation on this gateway.
	Background *bool `json:"background,omitempty"`
	// FallbackModels and MaxRetries are Switchyard extensions, as on chat completions.
	FallbackModels []string `json:"fallback_models,omitempty"`
	MaxRetries     *int     `json:"max_retries,omitempty" jsonschema:"minimum=0,maximum=10"`
	// LiteLLMFallbacks are LiteLLM's request fallbacks and context_window_fallbacks, as on
	// chat completions.
	LiteLLMFallbacks
	// Metadata is OpenAI's key-value pairs (not stored); LiteLLM's "tags" in it become the
	// request's tags, as on chat completions.
	Metadata json.RawMessage `json:"metadata,omitempty" jsonschema:"type=object"`
	// Tags is LiteLLM's request-body "tags" (an array of strings or one comma-separated
	// string), as on chat completions: the request's tags beside metadata's.
	Tags json.RawMessage `json:"tags,omitempty" jsonschema:"oneof_type=array;string,description=LiteLLM's request tags (an array of strings or one comma-separated string): added to metadata.tags"`
	// LiteLLMMetadata is LiteLLM's litellm_metadata: its user names the request's end user
	// when the body's user does not.
	LiteLLMMetadata *LiteLLMMetadata `json:"litellm_metadata,omitempty" jsonschema:"description=LiteLLM's metadata for the gateway (never sent upstream): its user names the request's end user"`
	// FaultPolicy holds the extension fields for timeouts, hedging and content filters.
	FaultPolicy
	// Cache is the request's say over the gateway's response cache (an extension, LiteLLM's
	// cache object: no-cache, no-store, ttl, s-maxage, namespace, use-cache).
	Cache *CacheControl `json:"cache,omitempty"`
	// Guardrails names opt-in guardrails to run on the request (an extension, LiteLLM's
	// request-body "guardrails"; see Request.Guardrails).
	Guardrails []string `json:"guardrails,omitempty"`
	// LiteLLMMocks are LiteLLM's testing switches, as on chat completions: answered in
	// this route's shape.
	LiteLLMMocks

	// continued is set by ContinueResponse once the items of previous_response_id's
	// conversation are in Input: the first history of them.
	continued        bool
	history          int
	historyBytes     int64
	conversationID   string // the conversation the request names, once read
	conversationLock string // the lease this request holds on it (ReleaseResponse)
	stopLease        func() // stops the lease's renewal
}

// ResponsesInput is input: a string or a list of items.
type ResponsesInput struct {
	Text  string
	Items []ResponsesItem
	// IsText records the string form.
	IsText bool
}

// UnmarshalJSON reads the string or the list form.
func (in *ResponsesInput) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	*in = ResponsesInput{}
	if len(b) > 0 && b[0] == '"' {
		in.IsText = true
		return json.Unmarshal(b, &in.Text)
	}
	return json.Unmarshal(b, &in.Items)
}

// MarshalJSON writes the form it was read in.
func (in ResponsesInput) MarshalJSON() ([]byte, error) {
	if in.IsText {
		return json.Marshal(in.Text)
	}
	return json.Marshal(in.Items)
}

// JSONSchema describes input: a string or an array of items.
func (ResponsesInput) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{OneOf: []*jsonschema.Schema{
		{Type: "string"}, {Type: "array", Items: &jsonschema.Schema{Type: "object"}},
	}}
}

// ResponsesItem is one input item: a message (Type "message" or empty, with Role and
// Content), a function_call (CallID, Name, Arguments) or a function_call_output (CallID,
// Output).
type ResponsesItem struct {
	Type      string           `json:"type,omitempty"`
	Role      string           `json:"role,omitempty"`
	Content   ResponsesContent `json:"content,omitzero"`
	ID        string           `json:"id,omitempty"`
	CallID    string           `json:"call_id,omitempty"`
	Name      string           `json:"name,omitempty"`
	Arguments string           `json:"arguments,omitempty"`
	// Namespace is a function_call's namespace (a function of a namespace tool); Input a
	// custom_tool_call's input.
	Namespace string          `json:"namespace,omitempty"`
	Input     string          `json:"input,omitempty"`
	Output    json.RawMessage `json:"output,omitempty"`
	Status    string          `json:"status,omitempty"`
	// Summary and EncryptedContent are a reasoning item's, as the gateway returned it:
	// Claude's reasoning goes back to Claude with the assistant turn that follows it.
	Summary          []ResponseSummaryPart `json:"summary,omitempty"`
	EncryptedContent string                `json:"encrypted_content,omitempty"`
	// ServerLabel, Tools, Error, ApprovalRequestID, Approve and Reason are the MCP items'
	// (mcp_list_tools, mcp_call, mcp_approval_request and mcp_approval_response).
	ServerLabel       string    `json:"server_label,omitempty"`
	Tools             []MCPTool `json:"tools,omitempty"`
	Error             *string   `json:"error,omitempty"`
	ApprovalRequestID string    `json:"approval_request_id,omitempty"`
	Approve           *bool     `json:"approve,omitempty"`
	Reason            string    `json:"reason,omitempty"`
}

// ResponsesContent is a message content: a string or a list of parts (input_text,
// output_text, refusal, input_image, input_file).
type ResponsesContent struct {
	Parts []ResponsesPart
}

// ResponsesPart is one content part: input_text, output_text or refusal (only in an
// assistant message, read as its text), input_image
// (ImageURL, an http(s) URL or a base64 data URL, and Detail) or input_file (a PDF; see
// FileData). FileID is refused: the gateway stores no files.
type ResponsesPart struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	Refusal  string `json:"refusal,omitempty"`
	ImageURL string `json:"image_url,omitempty"`
	Detail   string `json:"detail,omitempty"`
	FileID   string `json:"file_id,omitempty"`
	// FileData, FileURL and Filename are an input_file part's PDF: a base64 data URL, or
	// an http(s) URL (for providers that fetch one), and its name.
	FileData string `json:"file_data,omitempty"`
	FileURL  string `json:"file_url,omitempty"`
	Filename string `json:"filename,omitempty"`
}

// UnmarshalJSON reads a string or a list of parts.
func (c *ResponsesContent) UnmarshalJSON(b []byte) (err error) {
	*c = ResponsesContent{}
	c.Parts, _, err = decodeStringOrList(b, func(s string) ResponsesPart { return ResponsesPart{Type: "input_text", Text: s} })
	return err
}

// MarshalJSON writes the parts.
func (c ResponsesContent) MarshalJSON() ([]byte, error) { return json.Marshal(c.Parts) }

// JSONSchema describes content: a string or an array of parts.
func (ResponsesContent) JSONSchema() *jsonschema.Schema {
	props := jsonschema.NewProperties()
	props.Set("type", &jsonschema.Schema{Type: "string", Enum: []any{"input_text", "output_text", "refusal", "input_image", "input_file"}})
	props.Set("file_data", &jsonschema.Schema{Type: "string", Description: "input_file: a base64 data URL of a PDF"})
	props.Set("file_url", &jsonschema.Schema{Type: "string", Description: "input_file: an http(s) URL of a PDF (Anthropic and Gemini models)"})
	props.Set("filename", &jsonschema.Schema{Type: "string"})
	props.Set("text", &jsonschema.Schema{Type: "string"})
	props.Set("refusal", &jsonschema.Schema{Type: "string"})
	props.Set("image_url", &jsonschema.Schema{Type: "string", Description: "input_image: an http(s) URL or a base64 data URL of a PNG or JPEG or GIF or WebP image"})
	props.Set("detail", &jsonschema.Schema{Type: "string", Description: "input_image: OpenAI's fidelity hint; passed to OpenAI-format upstreams as it is"})
	part := &jsonschema.Schema{Type: "object", Properties: props, Required: []string{"type"}}
	return &jsonschema.Schema{OneOf: []*jsonschema.Schema{
		{Type: "string"}, {Type: "array", Items: part},
	}}
}

// ResponsesTool is a tool in the Responses API's flat shape: a function, a custom
// (freeform) tool, or a namespace of functions (see responsesTools for how each reaches
// the model). web_search gives the model its provider's own search where it has one, and
// tool_search is left out; other built-in tools (file_search, code_interpreter, …) are
// refused.
type ResponsesTool struct {
	Type        string          `json:"type" jsonschema:"required"`
	Name        string          `json:"name,omitempty"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty" jsonschema:"type=object"`
	Strict      *bool           `json:"strict,omitempty"`
	// Tools are a namespace's functions.
	Tools []ResponsesFunctionTool `json:"tools,omitempty"`
	// Format is a custom tool's input format: {"type": "text"} or {"type": "grammar",
	// "syntax": "lark", "definition": …}.
	Format json.RawMessage `json:"format,omitempty" jsonschema:"type=object"`
	// SearchContextSize, UserLocation and Filters are a web_search tool's options: low,
	// medium or high; {"type": "approximate", "city", "region", "country", "timezone"};
	// {"allowed_domains": […]}.
	SearchContextSize string                    `json:"search_context_size,omitempty" jsonschema:"enum=low,enum=medium,enum=high"`
	UserLocation      *providers.SearchLocation `json:"user_location,omitempty"`
	Filters           *struct {
		AllowedDomains []string `json:"allowed_domains,omitempty"`
	} `json:"filters,omitempty"`
	// ServerLabel names the MCP server of an mcp tool: one the gateway configures. ServerURL
	// is refused unless absent or "litellm_proxy" (the gateway dials no URL a request
	// names); ConnectorID is refused. AllowedTools is a list of tool names or
	// {"tool_names": […]}; RequireApproval "always" (the default), "never" or
	// {"never": {"tool_names": […]}}. Headers are accepted and not sent on: the operator
	// configures each server's credentials.
	ServerLabel       string            `json:"server_label,omitempty"`
	ServerURL         string            `json:"server_url,omitempty"`
	ServerDescription string            `json:"server_description,omitempty"`
	ConnectorID       string            `json:"connector_id,omitempty"`
	AllowedTools      json.RawMessage   `json:"allowed_tools,omitempty" jsonschema:"oneof_type=array;object"`
	RequireApproval   json.RawMessage   `json:"require_approval,omitempty" jsonschema:"oneof_type=string;object"`
	Headers           map[string]string `json:"headers,omitempty"`
}

// ResponsesFunctionTool is a function of a namespace tool (Type "function").
type ResponsesFunctionTool struct {
	Type        string          `json:"type" jsonschema:"required"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty" jsonschema:"type=object"`
	Strict      *bool           `json:"strict,omitempty"`
}

// ResponsesToolChoice is tool_choice: "none", "auto", "required",
// {"type": "function", "name": "..."}, {"type": "custom", "name": "..."} (a custom tool),
// {"type": "allowed_tools", "mode": "auto" or "required", "tools": [...]} (the tools the
// model may call, see ResponsesAllowedTool), a web search tool's type
// ({"type": "web_search_preview"}: the model searches) or {"type": "mcp", "server_label",
// "name"} (the model calls a tool of that MCP server); see responsesToolChoice. Mode holds
// the string form or the object's type.
type ResponsesToolChoice struct {
	Mode, Name string
	// ServerLabel is an mcp choice's server.
	ServerLabel string
	// AllowedMode and Allowed are an allowed_tools choice's mode and tools.
	AllowedMode string
	Allowed     []ResponsesAllowedTool
}

type responsesToolChoiceObject struct {
	Type        string                 `json:"type"`
	Name        string                 `json:"name,omitempty"`
	ServerLabel string                 `json:"server_label,omitempty"`
	Mode        string                 `json:"mode,omitempty"`
	Tools       []ResponsesAllowedTool `json:"tools,omitempty"`
}

// UnmarshalJSON reads the string or the object form.
func (c *ResponsesToolChoice) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	*c = ResponsesToolChoice{}
	if len(b) > 0 && b[0] == '"' {
		return json.Unmarshal(b, &c.Mode)
	}
	var o responsesToolChoiceObject
	if err := json.Unmarshal(b, &o); err != nil {
		return err
	}
	c.Mode, c.Name, c.AllowedMode, c.Allowed, c.ServerLabel = o.Type, o.Name, o.Mode, o.Tools, o.ServerLabel
	return nil
}

// MarshalJSON writes the form the API uses.
func (c ResponsesToolChoice) MarshalJSON() ([]byte, error) {
	switch c.Mode {
	case providers.ToolChoiceFunction, "custom":
		return json.Marshal(responsesToolChoiceObject{Type: c.Mode, Name: c.Name})
	case ToolChoiceAllowedTools:
		return json.Marshal(responsesToolChoiceObject{Type: c.Mode, Mode: c.AllowedMode, Tools: c.Allowed})
	case "mcp":
		return json.Marshal(responsesToolChoiceObject{Type: c.Mode, Name: c.Name, ServerLabel: c.ServerLabel})
	case providers.ToolChoiceNone, providers.ToolChoiceAuto, providers.ToolChoiceRequired:
		return json.Marshal(c.Mode)
	}
	if c.Mode != "" { // a built-in tool's type
		return json.Marshal(responsesToolChoiceObject{Type: c.Mode})
	}
	return json.Marshal(c.Mode)
}

// chat is the chat request's tool_choice for c: a custom tool is offered to the model as a
// function of its name.
func (c ResponsesToolChoice) chat() (*OpenAIToolChoice, error) {
	switch c.Mode {
	case providers.ToolChoiceNone, providers.ToolChoiceAuto, providers.ToolChoiceRequired:
		return &OpenAIToolChoice{Mode: c.Mode}, nil
	case providers.ToolChoiceFunction, "custom":
		if c.Name == "" {
			return nil, invalid("tool_choice.name", "is required with type %q", c.Mode)
		}
		return &OpenAIToolChoice{Mode: providers.ToolChoiceFunction, Name: c.Name}, nil
	case ToolChoiceAllowedTools:
		return responsesAllowedTools(c)
	}
	return nil, invalid("tool_choice", `must be "none", "auto", "required", {"type":"function","name":…}, {"type":"custom","name":…}, {"type":"allowed_tools","mode":…,"tools":[…]}, a web search tool ({"type":"web_search_preview"}) or {"type":"mcp","server_label":…}; of the built-in tools this gateway supports web search and mcp only, got %q`, c.Mode)
}

// JSONSchema describes tool_choice.
func (ResponsesToolChoice) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{OneOf: []*jsonschema.Schema{
		{Type: "string", Enum: []any{"none", "auto", "required"}}, {Type: "object"},
	}}
}

// ResponsesText is the text member: its Format asks for plain text or JSON.
type ResponsesText struct {
	Format *ResponsesFormat `json:"format,omitempty"`
	// Verbosity is GPT-5's answer length ("low", "medium", "high").
	Verbosity string `json:"verbosity,omitempty"`
}

// ResponsesReasoning is the reasoning object: its effort ("minimal", "low", "medium",
// "high"), which asks every model that can reason to (see OpenAIChatRequest.Thinking).
// Summary ("auto", "concise", "detailed") asks to see the reasoning: models that reason
// only when asked do so (at the default effort when none is given), and OpenAI's reasoning
// models answer through its Responses API, the one that returns a summary; the reasoning
// items carry what the provider shows, whichever value was asked.
type ResponsesReasoning struct {
	Effort  string          `json:"effort,omitempty"`
	Summary json.RawMessage `json:"summary,omitempty" jsonschema:"-"`
}

// ResponsesFormat is text.format: {"type": "text"}, {"type": "json_object"} or
// {"type": "json_schema", "name", "schema", "strict", "description"} (flat, unlike chat).
type ResponsesFormat struct {
	Type        string          `json:"type" jsonschema:"required,enum=text,enum=json_object,enum=json_schema"`
	Name        string          `json:"name,omitempty"`
	Description string          `json:"description,omitempty"`
	Schema      json.RawMessage `json:"schema,omitempty" jsonschema:"type=object"`
	Strict      *bool           `json:"strict,omitempty"`
}

// minOutputTokens is the least max_output_tokens OpenAI's Responses API takes.
const minOutputTokens = 16

// ToChatRequest translates r into the equivalent chat completions request; ToRequest then
// gives the gateway's request. Unsupported features are validation errors naming the field.
func (r *ResponsesRequest) ToChatRequest() (*OpenAIChatRequest, error) {
	switch {
	case r.PreviousResponseID != "" && !r.continued:
		return nil, invalid("previous_response_id", "needs the stored conversation: call Gateway.ContinueResponse first")
	case present(r.Conversation) && !r.continued:
		return nil, invalid("conversation", "needs the stored conversation: call Gateway.ContinueResponse first")
	}
	if err := r.checkBackground(); err != nil {
		return nil, err
	}
	if n := r.MaxOutputTokens; n != nil && *n < minOutputTokens {
		return nil, invalid("max_output_tokens", "must be at least %d, got %d", minOutputTokens, *n)
	}
	c := &OpenAIChatRequest{Model: r.Model, Temperature: r.Temperature, TopP: r.TopP, MaxCompletionTokens: r.MaxOutputTokens,
		Stream: r.Stream, ParallelToolCalls: r.ParallelToolCalls, FallbackModels: r.FallbackModels, MaxRetries: r.MaxRetries, FaultPolicy: r.FaultPolicy, Cache: r.Cache,
		Metadata: r.Metadata, Tags: r.Tags, LiteLLMMetadata: r.LiteLLMMetadata, Guardrails: r.Guardrails,
		LiteLLMMocks: r.LiteLLMMocks, LiteLLMFallbacks: r.LiteLLMFallbacks}
	if r.Stream {
		c.StreamOptions = &OpenAIStreamOptions{IncludeUsage: true}
	}
	if slices.Contains(r.Include, ResponsesLogprobsInclude) || r.TopLogprobs != nil && *r.TopLogprobs > 0 {
		c.Logprobs = json.RawMessage("true")
	}
	if r.TopLogprobs != nil {
		c.TopLogprobs = json.RawMessage(strconv.Itoa(*r.TopLogprobs))
	}
	c.User, c.ServiceTier, c.SafetyIdentifier, c.PromptCacheKey = r.User, r.ServiceTier, r.SafetyIdentifier, r.PromptCacheKey
	if r.Reasoning != nil {
		if err := checkEffort("reasoning.effort", r.Reasoning.Effort); err != nil {
			return nil, err
		}
		c.ReasoningEffort = r.Reasoning.Effort
	}
	if r.Text != nil {
		c.Verbosity = r.Text.Verbosity
	}
	fields := map[int]string{}       // chat message index -> the input it came from
	partFields := map[int][]string{} // chat message index -> its parts' inputs, when they came from several (tool outputs' images and files)
	fileURLs := map[string]bool{}    // input_file parts given by file_url
	if r.Instructions != "" {
		fields[len(c.Messages)] = "instructions"
		c.Messages = append(c.Messages, OpenAIMessage{Role: "system", Content: textContent(r.Instructions)})
	}
	if r.Input.IsText {
		fields[len(c.Messages)] = "input"
		c.Messages = append(c.Messages, OpenAIMessage{Role: "user", Content: textContent(r.Input.Text)})
	}
	var toolSet responsesToolSet // set below; errors are named only after
	c.fieldName = func(f string) string { return toolSet.field(responsesField(fields, partFields, fileURLs, f)) }
	// Reasoning items only when reasoning is asked for: an effort (which also asks models to
	// think) or a summary.
	c.hideUnaskedReasoning = r.Reasoning == nil || r.Reasoning.Effort == "" && !present(r.Reasoning.Summary)
	c.showReasoning = r.Reasoning != nil && present(r.Reasoning.Summary)
	// Reasoning items wait for the turn made after them: an assistant turn (a message or
	// function calls) takes them; any other turn means they led nowhere.
	var pendingReasoning []OpenAIThinkingBlock
	pendingAt := 0
	var signatures map[string]string // call id -> Gemini thought signature, from reasoning items
	placeReasoning := func() {
		if len(pendingReasoning) == 0 || len(c.Messages) <= pendingAt {
			return
		}
		if m := &c.Messages[pendingAt]; m.Role == "assistant" {
			m.ThinkingBlocks = append(pendingReasoning, m.ThinkingBlocks...)
		}
		pendingReasoning = nil
	}
	chatTools, toolSet, err := responsesTools(r.Tools)
	if err != nil {
		return nil, err
	}
	if _, err := mcpTools(r.Tools); err != nil {
		return nil, err
	}
	var mcpTaken map[string]int // the request's own tool names, once an mcp_call needs them
	c.Tools = chatTools
	if i := slices.IndexFunc(r.Tools, func(t ResponsesTool) bool { return webSearchTools[t.Type] }); i >= 0 {
		t := r.Tools[i]
		var domains []string
		if t.Filters != nil {
			domains = t.Filters.AllowedDomains
		}
		o, err := searchOptions(fmt.Sprintf("tools[%d]", i), t.SearchContextSize, t.UserLocation, 0, domains)
		if err != nil {
			return nil, err
		}
		c.searchIfAvailable, c.searchOptions = true, o
	}
	var resultMedia []OpenAIContentPart // images and files of consecutive tool results
	var mediaFields []string            // the output part each of them came from
	mediaFrom := ""                     // the field of the first of them
	for i, it := range r.Input.Items {
		placeReasoning()
		field := fmt.Sprintf("input[%d]", i-r.history)
		if i < r.history { // an item of the stored conversation
			field = fmt.Sprintf("previous_response_id (item %d of its conversation)", i)
		}
		switch it.Type {
		case "", "message":
			switch it.Role {
			case "user", "system", "developer", "assistant":
			default:
				return nil, invalid(field+".role", `must be "user", "system", "developer" or "assistant", got %q`, it.Role)
			}
			var text bytes.Buffer
			parts := make([]OpenAIContentPart, len(it.Content.Parts)) // one per input part, for the images
			images := false
			for j, p := range it.Content.Parts {
				if i >= r.history { // what was stored before these checks is read as it was
					if err := checkResponsesPartRole(fmt.Sprintf("%s.content[%d].type", field, j), it.Role, p.Type); err != nil {
						return nil, err
					}
				}
				switch p.Type {
				case "input_text", "output_text", "text":
					text.WriteString(p.Text)
					parts[j] = OpenAIContentPart{Type: "text", Text: p.Text}
				case "refusal":
					text.WriteString(p.Refusal)
					parts[j] = OpenAIContentPart{Type: "text", Text: p.Refusal}
				case "input_image", "input_file":
					pf := fmt.Sprintf("%s.content[%d]", field, j)
					if it.Role != "user" {
						return nil, invalid(pf+".type", "images and files are accepted in user messages only, got one in a %q message", it.Role)
					}
					part, err := mediaPart(p, pf, fileURLs)
					if err != nil {
						return nil, err
					}
					parts[j], images = part, true
				default:
					return nil, invalid(fmt.Sprintf("%s.content[%d].type", field, j), "only %s parts are supported in %s messages, got %q", responsesPartTypes(it.Role), it.Role, p.Type)
				}
			}
			if images { // text parts stay apart from each other and the images, as on the chat surface
				fields[len(c.Messages)] = field
				c.Messages = append(c.Messages, OpenAIMessage{Role: it.Role, Content: OpenAIContent{Parts: parts}})
				continue
			}
			fields[len(c.Messages)] = field
			c.Messages = append(c.Messages, OpenAIMessage{Role: it.Role, Content: textContent(text.String())})
		case "function_call", "custom_tool_call":
			if it.CallID == "" || it.Name == "" {
				return nil, invalid(field, "a %s item needs call_id and name", it.Type)
			}
			call := OpenAIToolCall{ID: it.CallID, Type: "function", Function: OpenAIFunctionCall{Name: toolSet.modelName(it.Namespace, it.Name, false),
				Arguments: it.Arguments}}
			if it.Type == "custom_tool_call" {
				call.Function = OpenAIFunctionCall{Name: toolSet.modelName("", it.Name, true), Arguments: customToolArguments(it.Input)}
			}
			// Calls belong to the assistant turn they follow: consecutive calls, and the text
			// the model wrote before them ("Let me check…"), which is one answer's output.
			if n := len(c.Messages); n > 0 && c.Messages[n-1].Role == "assistant" {
				m := &c.Messages[n-1]
				m.ToolCalls = append(m.ToolCalls, call)
				if len(pendingReasoning) > 0 && pendingAt == n {
					// Reasoning between the text and the call (Claude thinking again before
					// it calls): the same answer's.
					m.ThinkingBlocks = append(m.ThinkingBlocks, pendingReasoning...)
					pendingReasoning = nil
				}
			} else {
				fields[len(c.Messages)] = field
				c.Messages = append(c.Messages, OpenAIMessage{Role: "assistant", ToolCalls: []OpenAIToolCall{call}})
			}
		case "function_call_output", "custom_tool_call_output":
			if it.CallID == "" {
				return nil, invalid(field+".call_id", "is required")
			}
			out, media, mfs, err := functionCallOutput(it.Output, field+".output", fileURLs)
			if err != nil {
				return nil, err
			}
			fields[len(c.Messages)] = field
			c.Messages = append(c.Messages, OpenAIMessage{Role: "tool", ToolCallID: it.CallID, Content: textContent(out)})
			if len(media) > 0 {
				// Tool results carry text only on most providers: the images and files go in a
				// user turn of their own after the results, as on /v1/messages.
				if len(resultMedia) == 0 {
					mediaFrom = field + ".output"
				}
				resultMedia, mediaFields = append(resultMedia, media...), append(mediaFields, mfs...)
			}
			if next := i + 1; len(resultMedia) > 0 && (next == len(r.Input.Items) || !isCallOutput(r.Input.Items[next].Type)) {
				fields[len(c.Messages)], partFields[len(c.Messages)] = mediaFrom, mediaFields
				c.Messages = append(c.Messages, OpenAIMessage{Role: "user", Content: OpenAIContent{Parts: resultMedia}})
				resultMedia, mediaFields = nil, nil
			}
		case "mcp_list_tools", "mcp_approval_request", "mcp_approval_response":
			continue // the gateway's (RespondWithMCP): an approved or declined call is an mcp_call
		case "mcp_call":
			if it.ID == "" || it.ServerLabel == "" || it.Name == "" {
				return nil, invalid(field, "an mcp_call item needs id, server_label and name")
			}
			if mcpTaken == nil {
				mcpTaken = userToolNames(r.Tools)
			}
			call := OpenAIToolCall{ID: it.ID, Type: "function", Function: OpenAIFunctionCall{Name: mcpModelName(it.ServerLabel, it.Name, mcpTaken), Arguments: it.Arguments}}
			if n := len(c.Messages); n > 0 && c.Messages[n-1].Role == "assistant" && len(c.Messages[n-1].ToolCalls) > 0 {
				c.Messages[n-1].ToolCalls = append(c.Messages[n-1].ToolCalls, call)
			} else {
				fields[len(c.Messages)] = field
				c.Messages = append(c.Messages, OpenAIMessage{Role: "assistant", ToolCalls: []OpenAIToolCall{call}})
			}
			fields[len(c.Messages)] = field
			c.Messages = append(c.Messages, OpenAIMessage{Role: "tool", ToolCallID: it.ID, Content: textContent(mcpCallResultText(it))})
		case "reasoning":
			if id, sig, ok := parseThoughtSignatureToken(it.EncryptedContent); ok {
				// A Gemini thought signature: it goes back on its call (see thoughtSignatureToken).
				if signatures == nil {
					signatures = map[string]string{}
				}
				signatures[id] = sig
				continue
			}
			// Reasoning the gateway returned: it belongs to the assistant turn that follows
			// (a message or function calls), where Claude takes its own back.
			if b, ok := reasoningFromItem(it); ok {
				if len(pendingReasoning) == 0 {
					pendingAt = len(c.Messages)
				}
				pendingReasoning = append(pendingReasoning, b)
			}
			continue
		default:
			return nil, invalid(field+".type", "only message, reasoning, function_call, function_call_output, custom_tool_call, custom_tool_call_output and MCP (mcp_list_tools, mcp_call, mcp_approval_request, mcp_approval_response) items are supported, got %q", it.Type)
		}
	}
	placeReasoning()
	attachThoughtSignatures(c.Messages, signatures)
	if len(c.Messages) == 0 {
		return nil, invalid("input", "must hold at least one message")
	}
	if tc := r.ToolChoice; tc != nil && tc.Mode != "" {
		choice, err := responsesToolChoice(*tc, r.Tools)
		if err != nil {
			return nil, err
		}
		c.ToolChoice = choice
		switch {
		case tc.Mode == providers.ToolChoiceNone:
			// The model may call no tool, so the provider's search (billed per search) is
			// left out: OpenAI does not search with "none" either.
			c.searchIfAvailable = false
		case tc.Mode == ToolChoiceAllowedTools && !slices.ContainsFunc(tc.Allowed, func(t ResponsesAllowedTool) bool { return webSearchTools[t.Type] }):
			c.searchIfAvailable = false // a web search tool allowed_tools does not list may not be called
		}
		if webSearchTools[tc.Mode] { // the model must search: see responsesToolChoice
			if c.searchOptions == nil {
				c.searchOptions = &providers.SearchOptions{}
			}
			c.searchOptions.Required = true
		}
	}
	if r.Text != nil && r.Text.Format != nil {
		f := r.Text.Format
		c.ResponseFormat = &OpenAIResponseFormat{Type: f.Type}
		if f.Type == providers.ResponseJSONSchema {
			c.ResponseFormat.JSONSchema = &OpenAIJSONSchema{Name: f.Name, Description: f.Description, Schema: f.Schema, Strict: f.Strict}
		}
	}
	return c, nil
}

// checkResponsesPartRole refuses, at field, an input message part of type typ that a
// message of role may not hold: output_text and refusal are the content of assistant
// messages (OpenAI's output message), and a user, system or developer message takes input
// content only (input_text, input_image, input_file), as OpenAI's Responses API refuses it.
func checkResponsesPartRole(field, role, typ string) error {
	if (typ == "output_text" || typ == "refusal") && role != "assistant" {
		return invalid(field, "%s parts are accepted in assistant messages only; %s messages take %s parts, got %q", typ, role, responsesPartTypes(role), typ)
	}
	return nil
}

// responsesPartTypes is the content part types the gateway accepts in an input message of
// role, as a refusal of another type lists them: a user's may have images and files, an assistant's
// is the model's earlier output (input_text too, as string content is read).
func responsesPartTypes(role string) string {
	switch role {
	case "user":
		return "input_text, input_image and input_file"
	case "assistant":
		return "output_text, refusal and input_text"
	default:
		return "input_text"
	}
}

// responsesField is the /v1/responses name of a field the chat request's validation named:
// messages[i] becomes the input item (or instructions) message i came from (its
// content[k] the output part it came from, for the user turn made of tool outputs' images
// and files: partFields), an image_url object's url and detail become an input_image
// part's image_url and detail, and a file object (the part a guardrail could not read, see
// uncheckedParts) the input_file part itself, which has no member of that name.
func responsesField(fields map[int]string, partFields map[int][]string, fileURLs map[string]bool, f string) string {
	rest, ok := strings.CutPrefix(f, "messages[")
	if !ok {
		return f
	}
	end := strings.IndexByte(rest, ']')
	i, err := strconv.Atoi(rest[:max(end, 0)])
	base, known := fields[i]
	if end < 0 || err != nil || !known {
		return f
	}
	if base == "instructions" || base == "input" {
		return base
	}
	f = base + rest[end+1:]
	if pr, ok := strings.CutPrefix(rest[end+1:], ".content["); ok && partFields[i] != nil {
		if pe := strings.IndexByte(pr, ']'); pe > 0 {
			if k, err := strconv.Atoi(pr[:pe]); err == nil && k < len(partFields[i]) {
				f = partFields[i][k] + pr[pe+1:]
			}
		}
	}
	if part, ok := strings.CutSuffix(f, ".file.file_data"); ok && fileURLs[part] {
		return part + ".file_url" // the caller gave the file as file_url
	}
	return responsesPartField(f)
}

// responsesPartField renames an image_url object's fields to an input_image part's, and a
// file object's to an input_file part's (the object itself to the part).
func responsesPartField(f string) string {
	for chat, resp := range map[string]string{".image_url.url": ".image_url", ".image_url.detail": ".detail",
		".file.file_data": ".file_data", ".file.filename": ".filename", ".file": ""} {
		if s, ok := strings.CutSuffix(f, chat); ok {
			return s + resp
		}
	}
	return f
}

// responsesImageError renames the field of an image's validation error (see
// responsesPartField).
func responsesImageError(part string, err error) error {
	if ve := (*ValidationError)(nil); errors.As(err, &ve) {
		ve.Field = responsesPartField(ve.Field)
	}
	return err
}

func textContent(s string) OpenAIContent {
	return OpenAIContent{Parts: []OpenAIContentPart{{Type: "text", Text: s}}, IsString: true}
}

// isCallOutput reports whether an input item of type typ is a tool call's output.
func isCallOutput(typ string) bool {
	return typ == "function_call_output" || typ == "custom_tool_call_output"
}

// functionCallOutput is a function_call_output's output: the tool turn's text and its
// images and files, with the field of each (field[i]). A string is the text as it is; a
// list of parts (the newer SDKs' shape: an Agents SDK tool that returns an image) its text
// parts joined, and its input_image and input_file parts, checked as in message content
// (fileURLs records a file given by URL); any other JSON is the text as it is.
func functionCallOutput(raw json.RawMessage, field string, fileURLs map[string]bool) (string, []OpenAIContentPart, []string, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil, nil, nil
	}
	var parts []ResponsesPart
	if json.Unmarshal(raw, &parts) != nil || len(parts) == 0 || parts[0].Type == "" {
		return string(raw), nil, nil, nil
	}
	var b strings.Builder
	var media []OpenAIContentPart
	var mediaFields []string
	for i, p := range parts {
		switch p.Type {
		case "input_text", "output_text", "text":
			b.WriteString(p.Text)
		case "input_image", "input_file":
			pf := fmt.Sprintf("%s[%d]", field, i)
			part, err := mediaPart(p, pf, fileURLs)
			if err != nil {
				return "", nil, nil, err
			}
			media, mediaFields = append(media, part), append(mediaFields, pf)
		default:
			return "", nil, nil, invalid(fmt.Sprintf("%s[%d].type", field, i), "only input_text, input_image and input_file parts are supported, got %q", p.Type)
		}
	}
	return b.String(), media, mediaFields, nil
}

// mediaPart is an input_image or input_file part (at field pf) as a chat content part,
// checked as the providers take it; fileURLs records a file given by URL.
func mediaPart(p ResponsesPart, pf string, fileURLs map[string]bool) (OpenAIContentPart, error) {
	if p.Type == "input_image" {
		switch {
		case p.FileID != "":
			return OpenAIContentPart{}, invalid(pf+".file_id", "is not supported: the gateway stores no files; send image_url (an http(s) URL or a base64 data URL)")
		case p.ImageURL == "":
			return OpenAIContentPart{}, invalid(pf+".image_url", "is required")
		}
		if err := providers.CheckImage(providers.Image{URL: p.ImageURL, Detail: p.Detail}); err != nil {
			return OpenAIContentPart{}, responsesImageError(pf, imageFieldError(pf+".image_url", err))
		}
		return OpenAIContentPart{Type: "image_url", ImageURL: &OpenAIImageURL{URL: p.ImageURL, Detail: p.Detail}}, nil
	}
	src, srcField := p.FileData, ".file_data"
	if src == "" {
		src, srcField = p.FileURL, ".file_url"
		fileURLs[pf] = true
	}
	switch {
	case p.FileID != "":
		return OpenAIContentPart{}, invalid(pf+".file_id", "is not supported: the gateway stores no files; send file_data (a base64 data URL of a PDF) or file_url")
	case src == "":
		return OpenAIContentPart{}, invalid(pf+".file_data", "file_data or file_url is required")
	}
	if err := providers.CheckFile(providers.File{URL: src, Filename: p.Filename}); err != nil {
		var ie *providers.ImageError
		if errors.As(err, &ie) && ie.Field == "filename" {
			return OpenAIContentPart{}, invalid(pf+".filename", "%s", ie.Reason)
		}
		return OpenAIContentPart{}, invalid(pf+srcField, "%s", ie.Reason)
	}
	return OpenAIContentPart{Type: "file", File: &OpenAIFile{FileData: src, Filename: p.Filename}}, nil
}

// ResponseObject is OpenAI's "response" object.
type ResponseObject struct {
	ID        string `json:"id"`
	Object    string `json:"object"`
	CreatedAt int64  `json:"created_at"`
	// Status is queued or in_progress while a background response runs, then its end:
	// completed, incomplete, failed or cancelled.
	Status            string               `json:"status" jsonschema:"enum=queued,enum=in_progress,enum=completed,enum=incomplete,enum=failed,enum=cancelled"`
	Error             *ResponseError       `json:"error" jsonschema:"nullable"`
	IncompleteDetails *IncompleteDetails   `json:"incomplete_details" jsonschema:"nullable"`
	Instructions      *string              `json:"instructions" jsonschema:"nullable"`
	MaxOutputTokens   *int                 `json:"max_output_tokens" jsonschema:"nullable"`
	Model             string               `json:"model"`
	Output            []ResponseOutputItem `json:"output"`
	ParallelToolCalls bool                 `json:"parallel_tool_calls"`
	Temperature       *float64             `json:"temperature" jsonschema:"nullable"`
	TopP              *float64             `json:"top_p" jsonschema:"nullable"`
	ToolChoice        any                  `json:"tool_choice" jsonschema:"nullable"`
	Tools             []ResponsesTool      `json:"tools"`
	Text              ResponsesText        `json:"text"`
	Usage             *ResponseUsage       `json:"usage" jsonschema:"nullable"`
	Metadata          map[string]string    `json:"metadata"`
	// PreviousResponseID is the request's; Store says whether the answer is kept (see
	// Gateway.StoreResponse).
	PreviousResponseID *string `json:"previous_response_id" jsonschema:"nullable"`
	Store              bool    `json:"store"`
	// Background says the response was asked in the background (status queued or
	// in_progress until it ends: completed, incomplete, failed or cancelled).
	Background bool `json:"background,omitempty"`
	// Conversation is the conversation the request named (absent when none).
	Conversation *OpenAIConversationRef `json:"conversation,omitempty"`
	// Switchyard carries the answering provider, costs and attempts (extension).
	Switchyard *OpenAIExtension `json:"switchyard,omitempty"`

	// tools maps the names the model was offered back to the request's namespaces and
	// custom tools, for the output items of its calls.
	tools responsesToolSet
	// masked is the answer's Response.masked: StoreResponse stores the input items masked.
	masked map[string]string
}

// ResponseError is a failed response's error.
type ResponseError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// IncompleteDetails says why a response is incomplete: max_output_tokens or content_filter.
type IncompleteDetails struct {
	Reason string `json:"reason"`
}

// ResponseOutputItem is an output item: a message (with output_text or refusal content), a
// function_call, or reasoning (Summary: the model's reasoning as one summary_text part;
// EncryptedContent: what Claude needs to take it back, which a client returns with the
// item in its next request's input).
type ResponseOutputItem struct {
	ID     string `json:"id"`
	Type   string `json:"type"`
	Status string `json:"status"`
	Role   string `json:"role,omitempty"`
	// Content is a message's parts. A message always has it, as an empty array while
	// nothing is streamed yet (OpenAI's SDKs push the parts of content_part.added into it):
	// it is non-nil on every message item, and nil on a function_call, whose JSON has none.
	Content   []ResponseOutputPart `json:"content,omitzero"`
	CallID    string               `json:"call_id,omitempty"`
	Name      string               `json:"name,omitempty"`
	Arguments *string              `json:"arguments,omitempty"`
	// Namespace names the namespace tool of a function_call's function; Input is a
	// custom_tool_call's input.
	Namespace string  `json:"namespace,omitempty"`
	Input     *string `json:"input,omitempty"`
	// Summary is non-nil on every reasoning item (empty for redacted reasoning) and nil on
	// the others.
	Summary          []ResponseSummaryPart `json:"summary,omitzero"`
	EncryptedContent string                `json:"encrypted_content,omitempty"`
	// ServerLabel, Tools, Output, Error and ApprovalRequestID are the MCP items' (see
	// Gateway.RespondWithMCP): mcp_list_tools (server_label and tools), mcp_call
	// (server_label, name, arguments, output or error, approval_request_id when it was
	// approved) and mcp_approval_request (server_label, name, arguments).
	ServerLabel       string    `json:"server_label,omitempty"`
	Tools             []MCPTool `json:"tools,omitzero"`
	Output            *string   `json:"output,omitempty"`
	Error             *string   `json:"error,omitempty"`
	ApprovalRequestID string    `json:"approval_request_id,omitempty"`
}

// ResponseSummaryPart is a part of a reasoning item's summary: summary_text.
type ResponseSummaryPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// ResponseOutputPart is a part of an output message.
type ResponseOutputPart struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	Annotations []any  `json:"annotations"`
	Refusal     string `json:"refusal,omitempty"`
	// Logprobs are an output_text part's tokens with their log probabilities, when the
	// request asked for them (include message.output_text.logprobs); absent otherwise.
	Logprobs []providers.TokenLogprob `json:"logprobs,omitempty"`
}

// urlCitations are the url_citation annotations of an answer's text for the web pages the
// provider's search found (each spans the whole text); an empty list when there are none.
func urlCitations(text string, sources []providers.Source) []any {
	out := make([]any, 0, len(sources))
	end := utf8.RuneCountInString(text)
	for _, s := range sources {
		out = append(out, map[string]any{"type": "url_citation", "start_index": 0, "end_index": end, "url": s.URL, "title": s.Title})
	}
	return out
}

// ResponseUsage is the usage of a response.
type ResponseUsage struct {
	InputTokens         int                 `json:"input_tokens"`
	InputTokensDetails  ResponseInputUsage  `json:"input_tokens_details"`
	OutputTokens        int                 `json:"output_tokens"`
	OutputTokensDetails ResponseOutputUsage `json:"output_tokens_details"`
	TotalTokens         int                 `json:"total_tokens"`
	// Estimated is Switchyard's extension: the upstream reported no usage and the tokens
	// were counted locally (Response.UsageEstimated).
	Estimated bool `json:"estimated,omitempty"`
}

// ResponseInputUsage details input tokens.
type ResponseInputUsage struct {
	CachedTokens int `json:"cached_tokens"`
}

// ResponseOutputUsage details output tokens.
type ResponseOutputUsage struct {
	ReasoningTokens int `json:"reasoning_tokens"`
}

// NewResponseObject starts the response object of r (status in_progress, no output): the
// echo of the request's settings that every response and stream event carries.
func NewResponseObject(r *ResponsesRequest, id string, created time.Time) *ResponseObject {
	o := &ResponseObject{ID: id, Object: "response", CreatedAt: created.Unix(), Status: "in_progress", Model: r.Model,
		Output: []ResponseOutputItem{}, ParallelToolCalls: r.ParallelToolCalls == nil || *r.ParallelToolCalls,
		Temperature: r.Temperature, TopP: r.TopP, MaxOutputTokens: r.MaxOutputTokens, ToolChoice: "auto",
		Tools: r.Tools, Text: ResponsesText{Format: &ResponsesFormat{Type: "text"}}, Metadata: map[string]string{}}
	if o.Tools == nil {
		o.Tools = []ResponsesTool{}
	}
	if r.UsesMCP() { // an mcp tool's headers are the caller's secrets: not echoed nor stored
		o.Tools = slices.Clone(o.Tools)
		for i := range o.Tools {
			o.Tools[i].Headers = nil
		}
	}
	_, o.tools, _ = responsesTools(r.Tools) // validated by ToChatRequest
	if r.Instructions != "" {
		ins := r.Instructions
		o.Instructions = &ins
	}
	if r.PreviousResponseID != "" {
		prev := r.PreviousResponseID
		o.PreviousResponseID = &prev
	}
	o.Store = r.Store == nil || *r.Store // until StoreResponse says whether it was kept
	var md map[string]any
	if json.Unmarshal(r.Metadata, &md) == nil {
		for k, v := range md { // OpenAI's pairs; LiteLLM's tags array is not one
			if sv, ok := v.(string); ok {
				o.Metadata[k] = sv
			}
		}
	}
	if r.conversationID != "" {
		o.Conversation = &OpenAIConversationRef{ID: r.conversationID}
	}
	if r.ToolChoice != nil && r.ToolChoice.Mode != "" {
		o.ToolChoice = *r.ToolChoice
	}
	if r.Text != nil && r.Text.Format != nil {
		o.Text = *r.Text
	}
	return o
}

// Complete fills o from the gateway's final response resp: model, output items (the
// message when there is text or a refusal, then one function_call per tool call), usage,
// status (incomplete with a reason for finish reasons length and content_filter).
func (o *ResponseObject) Complete(resp *Response) {
	o.Model = resp.Provider + "/" + resp.Model
	o.Status = "completed"
	o.masked = resp.masked
	o.Output = o.Output[:0]
	for k, r := range resp.Reasoning {
		o.Output = append(o.Output, reasoningItem(resp.ResponseMessageID, k, r))
	}
	if text := resp.Text(); text != "" || resp.Refusal != "" || len(resp.ToolCalls) == 0 {
		item := ResponseOutputItem{ID: "msg_" + resp.ResponseMessageID, Type: "message", Status: "completed", Role: "assistant"}
		if resp.Refusal != "" {
			item.Content = []ResponseOutputPart{{Type: "refusal", Refusal: resp.Refusal, Annotations: []any{}}}
		} else {
			item.Content = []ResponseOutputPart{{Type: "output_text", Text: text, Annotations: urlCitations(text, resp.Sources)}}
			if resp.Logprobs != nil {
				item.Content[0].Logprobs = resp.Logprobs.Content
			}
		}
		o.Output = append(o.Output, item)
	}
	for k, c := range resp.ToolCalls {
		if c.ThoughtSignature != "" {
			o.Output = append(o.Output, thoughtSignatureItem(resp.ResponseMessageID, k, c))
		}
		o.Output = append(o.Output, o.tools.callItem(callItemID(resp.ResponseMessageID, k), c.ID, c.Name, c.Arguments, "completed"))
	}
	switch resp.FinishReason {
	case "length":
		o.Status, o.IncompleteDetails = "incomplete", &IncompleteDetails{Reason: "max_output_tokens"}
	case "content_filter":
		o.Status, o.IncompleteDetails = "incomplete", &IncompleteDetails{Reason: "content_filter"}
	}
	u := resp.Usage
	o.Usage = &ResponseUsage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens, TotalTokens: u.TotalTokens,
		InputTokensDetails: ResponseInputUsage{CachedTokens: u.CachedTokens}, OutputTokensDetails: ResponseOutputUsage{ReasoningTokens: u.ReasoningTokens},
		Estimated: resp.UsageEstimated}
	o.Switchyard = &OpenAIExtension{Provider: resp.Provider, ModelGroup: resp.ModelGroup, Costs: u.Costs, Latency: resp.Latency, TTFT: resp.TTFT,
		Attempts: resp.Attempts, Continued: resp.Continued, Cache: resp.Cache}
}
