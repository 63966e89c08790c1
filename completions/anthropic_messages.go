package completions

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/invopop/jsonschema"
	"github.com/switchyard-ai/switchyard/providers"
)

// The Anthropic Messages API surface (POST /v1/messages): Anthropic's SDKs and tools built
// on them (Claude Code, agents written against the Anthropic SDK) send their requests to
// the gateway unchanged and reach any configured model — Claude through the Anthropic
// adapter, or GPT, Gemini and the rest with their fallbacks, budgets and ledger. A request
// is translated to a chat request (AnthropicMessagesRequest.ToChatRequest) and answered by
// the same gateway; the answer is a "message" object or its typed stream events.

// AnthropicMessagesRequest is the body of POST /v1/messages.
type AnthropicMessagesRequest struct {
	Model string `json:"model" jsonschema:"required"`
	// MaxTokens bounds the answer (required, as in Anthropic's API).
	MaxTokens *int `json:"max_tokens" jsonschema:"required,minimum=1"`
	// Messages alternate user and assistant turns: content a string or blocks (text,
	// image, document, tool_use and thinking in assistant turns, tool_result in user
	// turns).
	Messages []AnthropicMessage `json:"messages" jsonschema:"required,minItems=1"`
	// System is a string or text blocks.
	System        AnthropicContent `json:"system,omitempty"`
	Temperature   *float64         `json:"temperature,omitempty" jsonschema:"minimum=0,maximum=1"`
	TopP          *float64         `json:"top_p,omitempty" jsonschema:"minimum=0,maximum=1"`
	StopSequences []string         `json:"stop_sequences,omitempty"`
	Stream        bool             `json:"stream,omitempty"`
	// Tools are client tools (name, description, input_schema); Anthropic's server tools
	// (web search, code execution, …) are refused.
	Tools      []AnthropicTool      `json:"tools,omitempty"`
	ToolChoice *AnthropicToolChoice `json:"tool_choice,omitempty"`
	// CacheControl is Anthropic's automatic caching: one breakpoint on the conversation so
	// far, moving forward as it grows (the gateway marks the prefix too, as for any
	// cache_control).
	CacheControl json.RawMessage `json:"cache_control,omitempty" jsonschema:"type=object"`
	Metadata     *struct {
		UserID string `json:"user_id,omitempty"`
		// Tags (LiteLLM's, not Anthropic's) become the request's tags.
		Tags json.RawMessage `json:"tags,omitempty"`
	} `json:"metadata,omitempty"`
	// Tags is LiteLLM's request-body "tags" (an array of strings or one comma-separated
	// string), as on chat completions: the request's tags beside metadata.tags.
	Tags json.RawMessage `json:"tags,omitempty" jsonschema:"oneof_type=array;string,description=LiteLLM's request tags (an array of strings or one comma-separated string): added to metadata.tags"`
	// LiteLLMMetadata is LiteLLM's litellm_metadata: its user names the request's end user
	// when the body's user does not.
	LiteLLMMetadata *LiteLLMMetadata `json:"litellm_metadata,omitempty" jsonschema:"description=LiteLLM's metadata for the gateway (never sent upstream): its user names the request's end user"`
	// LiteLLMMocks are LiteLLM's testing switches, as on chat completions: answered in
	// this route's shape.
	LiteLLMMocks
	// OutputConfig.Format asks for structured output: a JSON answer following a schema.
	// OutputConfig.Effort is how hard an adaptive thinking model thinks (low, medium, high
	// or max); read with Thinking only.
	OutputConfig *struct {
		Format *AnthropicOutputFormat `json:"format,omitempty"`
		Effort string                 `json:"effort,omitempty"`
	} `json:"output_config,omitempty"`
	// Thread is the message-threads beta's (Anthropic's SDKs run their tool runners on
	// it): "create" asks the server to keep the conversation, "continue" sends only the new
	// messages of a conversation kept under PreviousMessageID. The gateway keeps none: a
	// create is answered as any request, a continue fails with ErrThreadNotFound, on which
	// the SDKs replay the whole conversation.
	Thread *AnthropicThread `json:"thread,omitempty"`
	// OutputFormat is output_config.format as the structured outputs beta named it (and
	// Anthropic's SDKs still send it): read as output_config.format, which must then not be
	// given too.
	OutputFormat *AnthropicOutputFormat `json:"output_format,omitempty"`
	// TopK goes to the models that take it (Claude, Gemini). ServiceTier is accepted and
	// not passed on.
	TopK *int `json:"top_k,omitempty" jsonschema:"minimum=1"`
	// Thinking asks for extended thinking: enabled with a budget_tokens, adaptive (at
	// output_config.effort) or disabled. Claude gets it as it is (see providers.Thinking
	// for when it is left out), Gemini and OpenAI's reasoning models as their own
	// thinking settings; the answer's thinking blocks carry Claude's signatures, and the
	// ones a client sends back in assistant turns reach Claude again.
	Thinking    *OpenAIThinking `json:"thinking,omitempty"`
	ServiceTier string          `json:"service_tier,omitempty"`
	// FallbackModels are tried in order when Model fails (Switchyard extension).
	FallbackModels []string `json:"fallback_models,omitempty"`
	// LiteLLMFallbacks are LiteLLM's request fallbacks and context_window_fallbacks, read
	// as on chat completions: LiteLLM's /v1/messages goes through its router with the
	// request's own.
	LiteLLMFallbacks
	// MaxRetries overrides the gateway's retries per model (Switchyard extension).
	MaxRetries *int `json:"max_retries,omitempty" jsonschema:"minimum=0,maximum=10"`
	// FaultPolicy holds the extension fields for timeouts, hedging and content filters.
	FaultPolicy
	// Cache is the request's say over the gateway's response cache (an extension, LiteLLM's
	// cache object: no-cache, no-store, ttl, s-maxage, namespace, use-cache).
	Cache *CacheControl `json:"cache,omitempty"`
	// Guardrails names opt-in guardrails to run on the request (an extension, LiteLLM's
	// request-body "guardrails"; see Request.Guardrails).
	Guardrails []string `json:"guardrails,omitempty"`

	// Betas are the request's anthropic-beta header values (set by the HTTP surface, not
	// read from the body): interleaved-thinking-2025-05-14 reaches Claude with thinking
	// (providers.Thinking.Interleaved); the others concern features the gateway does not
	// pass on and are ignored.
	Betas []string `json:"-"`
}

// AnthropicMessage is one turn of a Messages request. Role is user or assistant, or
// system for instructions in the middle of the conversation (text only).
type AnthropicMessage struct {
	Role    string           `json:"role" jsonschema:"required,enum=user,enum=assistant,enum=system"`
	Content AnthropicContent `json:"content" jsonschema:"required"`
}

// AnthropicContent is a string or a list of content blocks.
type AnthropicContent struct {
	Blocks []AnthropicBlock
	// IsString records a plain string (one text block).
	IsString bool
}

// UnmarshalJSON reads a string, a list of blocks or null.
func (c *AnthropicContent) UnmarshalJSON(b []byte) (err error) {
	*c = AnthropicContent{}
	c.Blocks, c.IsString, err = decodeStringOrList(b, func(s string) AnthropicBlock { return AnthropicBlock{Type: "text", Text: s} })
	return err
}

// MarshalJSON writes a string when the content was one, else the blocks.
func (c AnthropicContent) MarshalJSON() ([]byte, error) {
	if c.IsString && len(c.Blocks) == 1 {
		return json.Marshal(c.Blocks[0].Text)
	}
	return json.Marshal(c.Blocks)
}

// JSONSchema describes content: a string or an array of blocks.
func (AnthropicContent) JSONSchema() *jsonschema.Schema {
	props := jsonschema.NewProperties()
	props.Set("type", &jsonschema.Schema{Type: "string", Enum: []any{"text", "image", "document", "tool_use", "tool_result", "thinking", "redacted_thinking"}})
	return &jsonschema.Schema{OneOf: []*jsonschema.Schema{
		{Type: "string"}, {Type: "array", Items: &jsonschema.Schema{Type: "object", Properties: props, Required: []string{"type"}}},
	}}
}

// AnthropicBlock is one content block of a request: text (Text), image or document
// (Source), tool_use (ID, Name, Input), tool_result (ToolUseID, Content, IsError),
// thinking (Thinking, Signature) or redacted_thinking (Data).
type AnthropicBlock struct {
	Type      string           `json:"type"`
	Text      string           `json:"text,omitempty"`
	Source    *AnthropicSource `json:"source,omitempty"`
	Title     string           `json:"title,omitempty"`
	ID        string           `json:"id,omitempty"`
	Name      string           `json:"name,omitempty"`
	Input     json.RawMessage  `json:"input,omitempty"`
	ToolUseID string           `json:"tool_use_id,omitempty"`
	// Content of a tool_result: a string or text (and image) blocks.
	Content *AnthropicContent `json:"content,omitempty"`
	IsError bool              `json:"is_error,omitempty"`
	// Thinking and Signature are a thinking block's, Data a redacted_thinking block's.
	Thinking  string `json:"thinking,omitempty"`
	Signature string `json:"signature,omitempty"`
	Data      string `json:"data,omitempty"`
	// CacheControl marks a cache breakpoint; any in a request asks for prompt caching
	// (see ToChatRequest).
	CacheControl json.RawMessage `json:"cache_control,omitempty" jsonschema:"type=object"`
}

// AnthropicSource is an image's or document's source: base64 (MediaType, Data), url
// (URL) or, for a document, text (Data holds the text).
type AnthropicSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type,omitempty"`
	Data      string `json:"data,omitempty"`
	URL       string `json:"url,omitempty"`
}

// AnthropicTool is a client tool: a function with its input's JSON Schema.
type AnthropicTool struct {
	// Type is empty or "custom" for a client tool; anything else is a server tool.
	Type         string          `json:"type,omitempty"`
	Name         string          `json:"name"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"input_schema,omitempty" jsonschema:"type=object"`
	CacheControl json.RawMessage `json:"cache_control,omitempty" jsonschema:"type=object"`
	// MaxUses, AllowedDomains, BlockedDomains and UserLocation are the web_search server
	// tool's options.
	MaxUses        int                       `json:"max_uses,omitempty"`
	AllowedDomains []string                  `json:"allowed_domains,omitempty"`
	BlockedDomains []string                  `json:"blocked_domains,omitempty"`
	UserLocation   *providers.SearchLocation `json:"user_location,omitempty"`
}

// AnthropicToolChoice is tool_choice: auto, any, tool (Name) or none.
type AnthropicToolChoice struct {
	Type                   string `json:"type" jsonschema:"required,enum=auto,enum=any,enum=tool,enum=none"`
	Name                   string `json:"name,omitempty"`
	DisableParallelToolUse bool   `json:"disable_parallel_tool_use,omitempty"`
}

// ToChatRequest translates r to the chat request the gateway answers: system text and
// turns in order, a user turn's tool_result blocks as tool messages before its other
// blocks, images and PDFs as image and file parts, tool_use blocks as tool calls. Errors
// are *ValidationError naming the Messages API field (messages[i].content[j]…).
func (r *AnthropicMessagesRequest) ToChatRequest() (*OpenAIChatRequest, error) {
	if th := r.Thread; th != nil {
		switch th.Type {
		case "create":
		case "continue":
			return nil, fmt.Errorf("%w: thread.previous_message_id %q: the gateway keeps no message threads; send the whole conversation with thread {\"type\":\"create\"} or without thread",
				ErrThreadNotFound, th.PreviousMessageID)
		default:
			return nil, invalid("thread.type", `must be "create" or "continue", got %q`, th.Type)
		}
	}
	if r.MaxTokens == nil {
		return nil, invalid("max_tokens", "is required")
	}
	if *r.MaxTokens < 1 {
		return nil, invalid("max_tokens", "must be at least 1, got %d", *r.MaxTokens)
	}
	if t := r.Temperature; t != nil && (*t < 0 || *t > 1) {
		return nil, invalid("temperature", "must be between 0 and 1, got %g", *t)
	}
	if len(r.Messages) == 0 {
		return nil, invalid("messages", "at least one message is required")
	}
	c := &OpenAIChatRequest{Model: r.Model, MaxCompletionTokens: r.MaxTokens, Temperature: r.Temperature, TopP: r.TopP,
		Stop: OpenAIStop(r.StopSequences), Stream: r.Stream, FallbackModels: r.FallbackModels, MaxRetries: r.MaxRetries, FaultPolicy: r.FaultPolicy, Cache: r.Cache,
		Guardrails: r.Guardrails, Tags: r.Tags, LiteLLMMetadata: r.LiteLLMMetadata,
		LiteLLMMocks: r.LiteLLMMocks, LiteLLMFallbacks: r.LiteLLMFallbacks}
	if r.Stream {
		c.StreamOptions = &OpenAIStreamOptions{IncludeUsage: true}
	}
	if r.Metadata != nil {
		c.User = r.Metadata.UserID
		if len(r.Metadata.Tags) > 0 {
			c.Metadata, _ = json.Marshal(map[string]json.RawMessage{"tags": r.Metadata.Tags})
		}
	}
	fields := map[int]string{}       // chat message index -> the Messages API field it came from
	partFields := map[int][]string{} // chat message index -> the field of each of its parts
	var signatures map[string]string // tool_use id -> Gemini thought signature, from thinking blocks
	if len(r.System.Blocks) > 0 {
		text, err := anthropicSystem("system", r.System.Blocks)
		if err != nil {
			return nil, err
		}
		fields[len(c.Messages)] = "system"
		c.Messages = append(c.Messages, OpenAIMessage{Role: "system", Content: textContent(text)})
	}
	for i, m := range r.Messages {
		field := fmt.Sprintf("messages[%d]", i)
		switch m.Role {
		case "user", "assistant":
		case "system": // instructions mid-conversation (Claude Code sends them)
			text, err := anthropicSystem(field+".content", m.Content.Blocks)
			if err != nil {
				return nil, err
			}
			fields[len(c.Messages)] = field
			c.Messages = append(c.Messages, OpenAIMessage{Role: "system", Content: textContent(text)})
			continue
		default:
			return nil, invalid(field+".role", `must be "user", "assistant" or "system", got %q`, m.Role)
		}
		var parts, resultImages []OpenAIContentPart
		var partFrom, resultFrom []string // the Messages field each part came from
		var calls []OpenAIToolCall
		var thoughts []OpenAIThinkingBlock
		results := false
		for j, b := range m.Content.Blocks {
			bf := fmt.Sprintf("%s.content[%d]", field, j)
			switch b.Type {
			case "text":
				parts, partFrom = append(parts, OpenAIContentPart{Type: "text", Text: b.Text}), append(partFrom, bf)
			case "image", "document":
				if m.Role != "user" {
					return nil, invalid(bf+".type", "images and documents are accepted in user turns only")
				}
				p, err := anthropicMedia(bf, b)
				if err != nil {
					return nil, err
				}
				parts, partFrom = append(parts, p), append(partFrom, bf)
			case "tool_use":
				if m.Role != "assistant" {
					return nil, invalid(bf+".type", "tool_use blocks belong in assistant turns")
				}
				if b.ID == "" || b.Name == "" {
					return nil, invalid(bf, "a tool_use block needs id and name")
				}
				args := strings.TrimSpace(string(b.Input))
				if args == "" || args == "null" {
					args = "{}"
				}
				calls = append(calls, OpenAIToolCall{ID: b.ID, Type: "function", Function: OpenAIFunctionCall{Name: b.Name, Arguments: args}})
			case "tool_result":
				if m.Role != "user" {
					return nil, invalid(bf+".type", "tool_result blocks belong in user turns")
				}
				if b.ToolUseID == "" {
					return nil, invalid(bf+".tool_use_id", "is required")
				}
				text, images, imagesFrom, err := anthropicToolResult(bf, b)
				if err != nil {
					return nil, err
				}
				// No provider but Anthropic takes images in a tool's result: they go into the
				// user turn that follows the results.
				resultImages, resultFrom = append(resultImages, images...), append(resultFrom, imagesFrom...)
				// Results go first, each its own tool message, as every provider wants them.
				results = true
				fields[len(c.Messages)] = bf
				c.Messages = append(c.Messages, OpenAIMessage{Role: "tool", ToolCallID: b.ToolUseID, Content: textContent(text)})
			case "thinking", "redacted_thinking":
				// Earlier reasoning sent back: Claude takes its own signed blocks again (and
				// needs them after tool use).
				if m.Role != "assistant" {
					return nil, invalid(bf+".type", "thinking blocks belong in assistant turns")
				}
				if id, sig, ok := parseThoughtSignatureToken(b.Signature); ok && b.Type == "thinking" {
					// A Gemini thought signature: it goes back on its call (see thoughtSignatureToken).
					if signatures == nil {
						signatures = map[string]string{}
					}
					signatures[id] = sig
					continue
				}
				thoughts = append(thoughts, OpenAIThinkingBlock{Type: b.Type, Thinking: b.Thinking, Signature: b.Signature, Data: b.Data})
			default:
				return nil, invalid(bf+".type", "must be text, image, document, tool_use or tool_result, got %q", b.Type)
			}
		}
		if len(resultImages) > 0 {
			parts, partFrom = append(resultImages, parts...), append(resultFrom, partFrom...)
		}
		if len(parts) == 0 && len(calls) == 0 {
			if !results { // an empty turn: the gateway's validation says what it makes of it
				fields[len(c.Messages)] = field
				c.Messages = append(c.Messages, OpenAIMessage{Role: m.Role, Content: textContent("")})
			}
			continue
		}
		msg := OpenAIMessage{Role: m.Role, ToolCalls: calls, ThinkingBlocks: thoughts}
		switch {
		case len(parts) == 1 && parts[0].Type == "text":
			msg.Content = textContent(parts[0].Text)
		case len(parts) > 0:
			msg.Content = OpenAIContent{Parts: parts}
		}
		fields[len(c.Messages)] = field
		if len(msg.Content.Parts) > 1 || msg.Content.Parts != nil && !msg.Content.IsString {
			partFields[len(c.Messages)] = partFrom
		}
		c.Messages = append(c.Messages, msg)
	}
	attachThoughtSignatures(c.Messages, signatures)
	searchTool, searchField := "", "" // the web_search server tool's name and field
	for i, t := range r.Tools {
		if strings.HasPrefix(t.Type, "web_search_") {
			// Anthropic's web search (Claude Code's WebSearch asks for it): the model's
			// provider's own search, which the model must have.
			c.search, searchTool, searchField = true, t.Name, fmt.Sprintf("tools[%d]", i)
			o, err := searchOptions(searchField, "", t.UserLocation, t.MaxUses, t.AllowedDomains)
			if err != nil {
				return nil, err
			}
			if len(t.BlockedDomains) > 0 {
				if len(t.AllowedDomains) > 0 {
					return nil, invalid(searchField+".blocked_domains", "cannot be set with allowed_domains")
				}
				if o == nil {
					o = &providers.SearchOptions{}
				}
				o.BlockedDomains = t.BlockedDomains
			}
			c.searchOptions = o
			continue
		}
		if t.Type != "" && t.Type != "custom" {
			return nil, invalid(fmt.Sprintf("tools[%d].type", i), "only client tools (name and input_schema) and web_search are supported, got the server tool %q", t.Type)
		}
		c.Tools = append(c.Tools, OpenAITool{Type: "function", Function: OpenAIFunction{Name: t.Name, Description: t.Description, Parameters: t.InputSchema}})
	}
	c.showSources = true // web_search_tool_result blocks, as Claude's web search answers
	toolChoice := r.ToolChoice
	if tc := toolChoice; tc != nil && c.search && (len(c.Tools) == 0 || tc.Type == "tool" && tc.Name == searchTool) {
		// A choice of the web search itself (Claude Code forces it): searching is what the
		// request asks already.
		toolChoice = nil
	}
	if tc := toolChoice; tc != nil {
		switch tc.Type {
		case "auto":
			c.ToolChoice = &OpenAIToolChoice{Mode: providers.ToolChoiceAuto}
		case "any":
			c.ToolChoice = &OpenAIToolChoice{Mode: providers.ToolChoiceRequired}
		case "tool":
			if tc.Name == "" {
				return nil, invalid("tool_choice.name", "is required with type tool")
			}
			c.ToolChoice = &OpenAIToolChoice{Mode: providers.ToolChoiceFunction, Name: tc.Name}
		case "none":
			c.ToolChoice = &OpenAIToolChoice{Mode: providers.ToolChoiceNone}
		default:
			return nil, invalid("tool_choice.type", "must be auto, any, tool or none, got %q", tc.Type)
		}
		if tc.DisableParallelToolUse {
			no := false
			c.ParallelToolCalls = &no
		}
	}
	format, formatField := (*AnthropicOutputFormat)(nil), "output_config.format"
	if oc := r.OutputConfig; oc != nil && oc.Format != nil {
		format = oc.Format
	}
	if r.OutputFormat != nil {
		if format != nil {
			return nil, invalid("output_format", "give output_config.format or output_format (its former name), not both")
		}
		format, formatField = r.OutputFormat, "output_format"
	}
	if format != nil {
		switch format.Type {
		case "json_schema":
			strict := true
			c.ResponseFormat = &OpenAIResponseFormat{Type: providers.ResponseJSONSchema,
				JSONSchema: &OpenAIJSONSchema{Name: "output", Schema: format.Schema, Strict: &strict}}
		default:
			return nil, invalid(formatField+".type", `must be "json_schema", got %q`, format.Type)
		}
	}
	if r.TopK != nil && *r.TopK < 1 {
		return nil, invalid("top_k", "must be at least 1, got %d", *r.TopK)
	}
	c.topK = r.TopK
	c.hideUnaskedReasoning = true // thinking blocks only when thinking is asked for, as from Anthropic
	if oc := r.OutputConfig; oc != nil {
		if err := checkEffort("output_config.effort", oc.Effort); err != nil {
			return nil, err
		}
	}
	if r.Thinking != nil {
		if t := r.Thinking; t.Type == "enabled" && t.BudgetTokens > 0 && t.BudgetTokens < 1024 {
			return nil, invalid("thinking.budget_tokens", "must be at least 1024, got %d", t.BudgetTokens)
		}
		th := *r.Thinking
		th.interleaved = slices.Contains(r.Betas, providers.AnthropicInterleavedThinkingBeta)
		c.Thinking = &th
		if oc := r.OutputConfig; oc != nil {
			// Not reasoning_effort: that goes to OpenAI-format upstreams as it is, and models
			// that do not reason refuse it; the thinking effort reaches only those that do.
			c.thinkingEffort = oc.Effort
		}
	}
	c.fitMaxTokens = true
	c.maxStop = MaxAnyStopSequences // Anthropic takes more than OpenAI's 4
	c.promptCache = r.cacheMarked()
	c.promptCacheToolsTTL, c.promptCacheTTL, c.promptCacheTailTTL = r.cacheTTLs()
	c.fieldName = func(f string) string {
		if f == "search" && searchField != "" {
			return searchField // the model cannot search: the web_search tool is the field
		}
		if strings.HasPrefix(f, "response_format") {
			return formatField // output_config.format, or output_format when that asked
		}
		return anthropicField(fields, partFields, f)
	}
	return c, nil
}

// AnthropicThread is the message-threads beta's thread field: Type "create" or
// "continue" (of the thread of the reply PreviousMessageID).
type AnthropicThread struct {
	Type              string `json:"type"`
	PreviousMessageID string `json:"previous_message_id,omitempty"`
}

// AnthropicOutputFormat is the Messages API's structured output format: "json_schema" and
// the JSON Schema the answer follows.
type AnthropicOutputFormat struct {
	Type   string          `json:"type"`
	Schema json.RawMessage `json:"schema,omitempty"`
}

// cacheTTLs are the longest lifetimes ("1h" or "") r's cache_control breakpoints ask for:
// on its tools, on its system prompt, and on its messages (the conversation), each relayed
// as asked (a caller keeping its tools an hour and its system prompt 5 minutes pays
// one-hour writes for the tools only).
func (r *AnthropicMessagesRequest) cacheTTLs() (tools, system, tail string) {
	longest := func(ttl *string, raw json.RawMessage) {
		var cc struct {
			TTL string `json:"ttl"`
		}
		if len(raw) > 0 && json.Unmarshal(raw, &cc) == nil && cc.TTL == "1h" {
			*ttl = "1h"
		}
	}
	var in func(ttl *string, bs []AnthropicBlock)
	in = func(ttl *string, bs []AnthropicBlock) {
		for _, b := range bs {
			longest(ttl, b.CacheControl)
			if b.Content != nil {
				in(ttl, b.Content.Blocks)
			}
		}
	}
	in(&system, r.System.Blocks)
	for _, t := range r.Tools {
		longest(&tools, t.CacheControl)
	}
	for _, m := range r.Messages {
		in(&tail, m.Content.Blocks)
	}
	longest(&tail, r.CacheControl)
	return tools, system, tail
}

// cacheMarked reports whether r marks any cache_control breakpoint: the caller caches its
// prompt (Claude Code does), so the gateway asks for it where a provider must be told
// (Anthropic: the system prompt, the tools and the conversation so far are marked).
func (r *AnthropicMessagesRequest) cacheMarked() bool {
	marked := func(bs []AnthropicBlock) bool {
		for _, b := range bs {
			if len(b.CacheControl) > 0 || b.Content != nil && slices.ContainsFunc(b.Content.Blocks, func(c AnthropicBlock) bool { return len(c.CacheControl) > 0 }) {
				return true
			}
		}
		return false
	}
	if len(r.CacheControl) > 0 && string(r.CacheControl) != "null" ||
		marked(r.System.Blocks) || slices.ContainsFunc(r.Tools, func(t AnthropicTool) bool { return len(t.CacheControl) > 0 }) {
		return true
	}
	return slices.ContainsFunc(r.Messages, func(m AnthropicMessage) bool { return marked(m.Content.Blocks) })
}

// anthropicMedia is an image or document block as a chat part.
func anthropicMedia(field string, b AnthropicBlock) (OpenAIContentPart, error) {
	s := b.Source
	if s == nil {
		return OpenAIContentPart{}, invalid(field+".source", "is required")
	}
	var url string
	switch s.Type {
	case "base64":
		url = "data:" + s.MediaType + ";base64," + s.Data
	case "url":
		url = s.URL
	case "text":
		if b.Type == "document" { // a plain-text document is text
			return OpenAIContentPart{Type: "text", Text: s.Data}, nil
		}
		fallthrough
	default:
		return OpenAIContentPart{}, invalid(field+".source.type", "must be base64 or url, got %q", s.Type)
	}
	if b.Type == "image" {
		if err := providers.CheckImage(providers.Image{URL: url}); err != nil {
			return OpenAIContentPart{}, anthropicSourceError(field, err)
		}
		return OpenAIContentPart{Type: "image_url", ImageURL: &OpenAIImageURL{URL: url}}, nil
	}
	if err := providers.CheckFile(providers.File{URL: url, Filename: b.Title}); err != nil {
		return OpenAIContentPart{}, anthropicSourceError(field, err)
	}
	return OpenAIContentPart{Type: "file", File: &OpenAIFile{FileData: url, Filename: b.Title}}, nil
}

// anthropicSourceError names the source field an image or file check is about.
func anthropicSourceError(field string, err error) error {
	ie, _ := err.(*providers.ImageError)
	if ie == nil {
		return invalid(field+".source", "%v", err)
	}
	if ie.Field == "filename" {
		return invalid(field+".title", "%s", ie.Reason)
	}
	return invalid(field+".source", "%s", ie.Reason)
}

// anthropicToolResult is a tool_result's content: its text for the tool message (an
// error result says so) and its images and documents as parts (a file a tool read, a
// screenshot), which no provider but Anthropic takes inside a result.
func anthropicToolResult(field string, b AnthropicBlock) (string, []OpenAIContentPart, []string, error) {
	var text strings.Builder
	var media []OpenAIContentPart
	var mediaFrom []string
	if b.IsError {
		text.WriteString("Error: ")
	}
	if b.Content != nil {
		n := 0
		for k, rb := range b.Content.Blocks {
			switch rb.Type {
			case "text":
				if n > 0 {
					text.WriteString("\n")
				}
				text.WriteString(rb.Text)
				n++
			case "image", "document":
				mf := fmt.Sprintf("%s.content[%d]", field, k)
				p, err := anthropicMedia(mf, rb)
				if err != nil {
					return "", nil, nil, err
				}
				media, mediaFrom = append(media, p), append(mediaFrom, mf)
			default:
				return "", nil, nil, invalid(fmt.Sprintf("%s.content[%d].type", field, k), "must be text, image or document, got %q", rb.Type)
			}
		}
		if n == 0 && len(media) > 0 {
			text.WriteString("(the result is the image or document that follows)")
		}
	}
	return text.String(), media, mediaFrom, nil
}

// anthropicSystem joins system text blocks, leaving out Claude Code's billing header
// (a block Anthropic strips, which would otherwise reach every model and change each
// request's prefix, defeating providers' prompt caches).
func anthropicSystem(field string, blocks []AnthropicBlock) (string, error) {
	var sys []string
	for i, b := range blocks {
		if b.Type != "text" {
			return "", invalid(fmt.Sprintf("%s[%d].type", field, i), `must be "text", got %q`, b.Type)
		}
		if strings.HasPrefix(b.Text, "x-anthropic-billing-header:") {
			continue
		}
		sys = append(sys, b.Text)
	}
	return strings.Join(sys, "\n"), nil
}

// anthropicField is the Messages API name of a field the chat request's validation named:
// messages[i] becomes the turn (or system, or tool_result block) message i came from.
func anthropicField(fields map[int]string, partFields map[int][]string, f string) string {
	rest, ok := strings.CutPrefix(f, "messages[")
	if !ok {
		switch {
		case strings.HasPrefix(f, "max_completion_tokens"):
			return "max_tokens"
		case strings.HasPrefix(f, "stop"):
			return "stop_sequences" + strings.TrimPrefix(f, "stop")
		case strings.HasPrefix(f, "response_format"):
			return "output_config.format"
		case strings.HasPrefix(f, "tools["):
			f = strings.Replace(f, ".function.name", ".name", 1)
			return strings.Replace(f, ".function.parameters", ".input_schema", 1)
		case strings.HasPrefix(f, "parallel_tool_calls"):
			return "tool_choice.disable_parallel_tool_use"
		case strings.HasPrefix(f, "tool_choice.function.name"):
			return "tool_choice.name"
		}
		return f
	}
	end := strings.IndexByte(rest, ']')
	if end < 0 {
		return f
	}
	var i int
	if _, err := fmt.Sscanf(rest[:end], "%d", &i); err != nil {
		return f
	}
	base, known := fields[i]
	if !known {
		return f
	}
	if base == "system" || strings.Contains(base, ".content[") {
		return base // the system text, a tool_result block: the whole of it
	}
	sub := rest[end+1:]
	// A part of the turn: the block (or the tool result's block) it came from.
	if pr, ok := strings.CutPrefix(sub, ".content["); ok && partFields[i] != nil {
		if pe := strings.IndexByte(pr, ']'); pe > 0 {
			if j, err := strconv.Atoi(pr[:pe]); err == nil && j < len(partFields[i]) {
				base, sub = partFields[i][j], pr[pe+1:]
			}
		}
	}
	for chat, api := range map[string]string{".image_url.url": ".source", ".image_url.detail": ".source", ".file.file_data": ".source", ".file.filename": ".title", ".image_url": ".source", ".file": ".source"} {
		if s, ok := strings.CutSuffix(sub, chat); ok {
			sub = s + api
			break
		}
	}
	return base + sub
}

// AnthropicResponse is the Messages API's "message" object.
type AnthropicResponse struct {
	ID           string                   `json:"id"`
	Type         string                   `json:"type"`
	Role         string                   `json:"role"`
	Model        string                   `json:"model"`
	Content      []AnthropicResponseBlock `json:"content"`
	StopReason   *string                  `json:"stop_reason"`
	StopSequence *string                  `json:"stop_sequence"`
	Usage        AnthropicUsage           `json:"usage"`
	// Switchyard carries the answering provider, costs and attempts (extension).
	Switchyard *OpenAIExtension `json:"switchyard,omitempty"`
}

// AnthropicResponseBlock is an answer's block: text, tool_use (ID, Name, Input), thinking
// (Thinking, Signature: empty for the reasoning of a model other than Claude, which Claude
// will not take back) or redacted_thinking (Data).
type AnthropicResponseBlock struct {
	Type      string          `json:"type"`
	Thinking  *string         `json:"thinking,omitempty"`
	Signature *string         `json:"signature,omitempty"`
	Data      string          `json:"data,omitempty"`
	Text      *string         `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	// ToolUseID and Content are a web_search_tool_result's: the server_tool_use it answers
	// and its web_search_result items.
	ToolUseID string                     `json:"tool_use_id,omitempty"`
	Content   []AnthropicWebSearchResult `json:"content,omitempty"`
}

// AnthropicWebSearchResult is a page of a web_search_tool_result block.
type AnthropicWebSearchResult struct {
	Type  string `json:"type"` // "web_search_result"
	URL   string `json:"url"`
	Title string `json:"title"`
}

// anthropicSearchBlocks are the blocks that show web pages the provider's search found,
// as Claude's web search shows them: a server_tool_use of web_search and its
// web_search_tool_result (Claude Code lists their pages as the search's links). id tells
// the pair apart from others of the answer.
func anthropicSearchBlocks(id string, sources []providers.Source) [2]AnthropicResponseBlock {
	results := make([]AnthropicWebSearchResult, len(sources))
	for i, s := range sources {
		results[i] = AnthropicWebSearchResult{Type: "web_search_result", URL: s.URL, Title: s.Title}
	}
	return [2]AnthropicResponseBlock{
		{Type: "server_tool_use", ID: id, Name: "web_search", Input: json.RawMessage("{}")},
		{Type: "web_search_tool_result", ToolUseID: id, Content: results},
	}
}

// AnthropicUsage is the Messages API's usage: input tokens not read from a cache, cache
// reads apart, output tokens.
type AnthropicUsage struct {
	InputTokens          int `json:"input_tokens"`
	OutputTokens         int `json:"output_tokens"`
	CacheReadInputTokens int `json:"cache_read_input_tokens"`
	// CacheCreationInputTokens are tokens written to the cache (Anthropic reports them).
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	// CacheCreation splits them by lifetime, as Anthropic does, when some went to the
	// one-hour cache.
	CacheCreation *AnthropicCacheCreation `json:"cache_creation,omitempty"`
}

// AnthropicCacheCreation is Anthropic's usage.cache_creation.
type AnthropicCacheCreation struct {
	Ephemeral5m int `json:"ephemeral_5m_input_tokens"`
	Ephemeral1h int `json:"ephemeral_1h_input_tokens"`
}

// NewAnthropicResponse renders resp as a "message" object; model is the model as the
// request named it.
func NewAnthropicResponse(resp *Response, model string) *AnthropicResponse {
	out := &AnthropicResponse{ID: "msg_" + resp.ResponseMessageID, Type: "message", Role: "assistant", Model: model,
		Content: []AnthropicResponseBlock{}, Usage: anthropicUsage(resp.Usage),
		Switchyard: &OpenAIExtension{Provider: resp.Provider, ModelGroup: resp.ModelGroup, Costs: resp.Usage.Costs, Latency: resp.Latency, TTFT: resp.TTFT,
			Attempts: resp.Attempts, Continued: resp.Continued, Cache: resp.Cache}}
	for _, r := range resp.Reasoning {
		out.Content = append(out.Content, anthropicThinkingBlock(r.Text, surfaceSignature(r.Signature, r.Encrypted, r.EncryptedBy), r.Redacted))
	}
	if len(resp.Sources) > 0 {
		blocks := anthropicSearchBlocks("srvtoolu_"+resp.ResponseMessageID, resp.Sources)
		out.Content = append(out.Content, blocks[:]...)
	}
	if text := resp.Text(); text != "" || resp.Refusal != "" {
		if text == "" {
			text = resp.Refusal
		}
		out.Content = append(out.Content, AnthropicResponseBlock{Type: "text", Text: &text})
	}
	for _, c := range resp.ToolCalls {
		if c.ThoughtSignature != "" { // Gemini's, in a thinking block just before its call
			out.Content = append(out.Content, anthropicThinkingBlock("", thoughtSignatureToken(c.ID, c.ThoughtSignature), ""))
		}
		out.Content = append(out.Content, AnthropicResponseBlock{Type: "tool_use", ID: c.ID, Name: c.Name, Input: anthropicInput(c.Arguments)})
	}
	reason := anthropicStopReason(resp.FinishReason, len(resp.ToolCalls) > 0)
	if resp.StopSequence != "" && reason == "end_turn" {
		reason = "stop_sequence"
		seq := resp.StopSequence
		out.StopSequence = &seq
	}
	out.StopReason = &reason
	return out
}

// anthropicThinkingBlock is a reasoning block as the Messages API writes it.
func anthropicThinkingBlock(text, signature, redacted string) AnthropicResponseBlock {
	if redacted != "" {
		return AnthropicResponseBlock{Type: "redacted_thinking", Data: redacted}
	}
	return AnthropicResponseBlock{Type: "thinking", Thinking: &text, Signature: &signature}
}

// anthropicInput is a tool call's arguments as tool_use input: the JSON object, or {} for
// arguments that are not one (a cut answer).
func anthropicInput(args string) json.RawMessage {
	raw := json.RawMessage(strings.TrimSpace(args))
	if len(raw) > 0 && raw[0] == '{' && json.Valid(raw) {
		return raw
	}
	return json.RawMessage("{}")
}

// anthropicStopReason maps a finish reason onto the Messages API's stop reasons.
func anthropicStopReason(finish string, calls bool) string {
	switch {
	case calls || finish == "tool_calls":
		return "tool_use"
	case finish == "length":
		return "max_tokens"
	case finish == "content_filter":
		return "refusal"
	}
	return "end_turn"
}

func anthropicUsage(u Usage) AnthropicUsage {
	a := AnthropicUsage{InputTokens: max(u.PromptTokens-u.CachedTokens-u.CacheCreationTokens, 0), OutputTokens: u.CompletionTokens,
		CacheReadInputTokens: u.CachedTokens, CacheCreationInputTokens: u.CacheCreationTokens}
	if h := min(u.CacheCreation1hTokens, u.CacheCreationTokens); h > 0 {
		a.CacheCreation = &AnthropicCacheCreation{Ephemeral5m: u.CacheCreationTokens - h, Ephemeral1h: h}
	}
	return a
}

// AnthropicErrorBody is the Messages API's error envelope.
type AnthropicErrorBody struct {
	Type  string               `json:"type"`
	Error AnthropicErrorObject `json:"error"`
}

// AnthropicErrorObject is an error's type (invalid_request_error, authentication_error,
// permission_error, not_found_error, request_too_large, rate_limit_error, api_error,
// overloaded_error) and message.
type AnthropicErrorObject struct {
	Type    string `json:"type"`
	Message string `json:"message"`
	// Details is Anthropic's machine-readable detail of some errors (error_code
	// thread_not_found, which its SDKs act on).
	Details map[string]any `json:"details,omitempty"`
}
