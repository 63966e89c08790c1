package completions

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/invopop/jsonschema"
	"github.com/switchyard-ai/switchyard/providers"
)

// OpenAIChatRequest is the body of the OpenAI-compatible POST /v1/chat/completions. Model is
// "provider/model". FallbackModels and MaxRetries are Switchyard extensions with the native
// API's meaning.
//
// Tool calling (tools, tool_choice, parallel_tool_calls, assistant tool_calls and "tool"
// messages) and structured output (response_format json_object and json_schema) reach every
// provider in its own wire format (see package providers); their schemas must be valid JSON
// Schemas; the legacy functions API is read as tools and answered in its own form (see
// UsesLegacyFunctions). OpenAI fields that would change what the answer is but that the
// gateway does not do — audio output — are refused with a
// validation error naming the field rather than answered as if they were absent. The
// other options OpenAI defines (seed, penalties, logit_bias, user, reasoning_effort, …: the
// embedded providers.OpenAIOptions) are passed on; fields not listed here (metadata, store,
// …) are tolerated and ignored.
type OpenAIChatRequest struct {
	Model       string          `json:"model" jsonschema:"required"`
	Messages    []OpenAIMessage `json:"messages" jsonschema:"required,minItems=1"`
	Temperature *float64        `json:"temperature,omitempty" jsonschema:"minimum=0,maximum=2"`
	// MaxTokens and MaxCompletionTokens (its newer name, which wins) bound the answer: at
	// least 1, as OpenAI refuses 0.
	MaxTokens           *int                 `json:"max_tokens,omitempty" jsonschema:"minimum=1"`
	MaxCompletionTokens *int                 `json:"max_completion_tokens,omitempty" jsonschema:"minimum=1"`
	Stream              bool                 `json:"stream,omitempty"`
	StreamOptions       *OpenAIStreamOptions `json:"stream_options,omitempty"`
	// TopP is nucleus sampling (0..1), passed to every provider.
	TopP *float64 `json:"top_p,omitempty" jsonschema:"minimum=0,maximum=1"`
	// Stop is up to 4 sequences that end the answer: a string or an array of strings.
	Stop OpenAIStop `json:"stop,omitempty"`
	// N is how many choices to generate (1 to MaxChoices): the gateway answers N requests at
	// once, each with the request's models and fallbacks, so every provider gives several
	// choices (see Gateway.CompleteN, and Gateway.StreamN when streamed).
	N *int `json:"n,omitempty" jsonschema:"minimum=1,maximum=16"`

	// Tools are the functions the model may call (at most MaxTools).
	Tools []OpenAITool `json:"tools,omitempty"`
	// ToolChoice is "none", "auto", "required" or a named function; default auto.
	ToolChoice *OpenAIToolChoice `json:"tool_choice,omitempty"`
	// ParallelToolCalls false asks for at most one tool call per answer.
	ParallelToolCalls *bool `json:"parallel_tool_calls,omitempty"`
	// ResponseFormat asks for JSON output: json_object or json_schema.
	ResponseFormat *OpenAIResponseFormat `json:"response_format,omitempty"`
	// OpenAIOptions are seed, frequency_penalty and presence_penalty (-2 to 2), logit_bias
	// (-100 to 100), user, reasoning_effort, service_tier and verbosity: passed to
	// OpenAI-format upstreams as they are; Gemini takes seed and the penalties, Anthropic user.
	providers.OpenAIOptions
	// Thinking asks for reasoning with a token budget, adaptive or disabled (LiteLLM's
	// extension; see OpenAIThinking). Without it reasoning_effort alone asks models that
	// can reason to do so at that effort: passed to OpenAI's reasoning models as it is,
	// read as a thinking budget by Claude and Gemini. Answers carry the reasoning the
	// provider shows in message.reasoning_content and, for Claude, the signed blocks to
	// send back in message.thinking_blocks (streamed in delta.reasoning_content and
	// delta.thinking_blocks).
	Thinking *OpenAIThinking `json:"thinking,omitempty"`
	// WebSearchOptions asks the model to search the web first (OpenAI's search models'
	// option): every model must have its provider's own search (OpenAI's search models and
	// GPT-4o/4.1/5 and o3/o4-mini, Claude, Gemini; else a 400 naming this field); the
	// pages found come back as url_citation annotations. Its options are not passed on.
	WebSearchOptions json.RawMessage `json:"web_search_options,omitempty" jsonschema:"type=object"`

	// Functions and FunctionCall are the legacy functions API: read as tools and
	// tool_choice, and a request that declares functions is answered in their form
	// (message.function_call, finish_reason "function_call"; see UsesLegacyFunctions).
	Functions    json.RawMessage `json:"functions,omitempty" jsonschema:"type=array,description=The legacy functions API's functions ({name\\, description\\, parameters}): read as tools; the answer then carries message.function_call"`
	FunctionCall json.RawMessage `json:"function_call,omitempty" jsonschema:"description=The legacy functions API's choice: none or auto or {name}; read as tool_choice"`
	// Logprobs asks for the log probability of each token of the answer
	// (choices[].logprobs.content, streamed in each chunk's choices[].logprobs) and
	// TopLogprobs (0 to 20) for that many likeliest alternatives at each position, as
	// OpenAI's API: only models that give them are tried (OpenAI-format models but OpenAI's
	// reasoning models; Gemini); with none, a 400 naming logprobs. Raw to name the field of
	// a value of the wrong type.
	Logprobs    json.RawMessage `json:"logprobs,omitempty" jsonschema:"type=boolean,description=Return the log probability of each token of the answer (OpenAI-format models but OpenAI's reasoning models; and Gemini)"`
	TopLogprobs json.RawMessage `json:"top_logprobs,omitempty" jsonschema:"type=integer,minimum=0,maximum=20,description=How many of the likeliest tokens to return at each position with their log probabilities (needs logprobs)"`
	// Modalities (["text", "audio"]) and Audio ({voice, format}) ask for a spoken answer
	// (OpenAI-format models only; pcm16 when streamed): see audioOutput.
	Modalities json.RawMessage `json:"modalities,omitempty" jsonschema:"-"`
	Audio      json.RawMessage `json:"audio,omitempty" jsonschema:"-"`
	// LiteLLMMocks are LiteLLM's testing switches.
	LiteLLMMocks
	// FallbackModels are tried in order when Model fails (Switchyard extension).
	FallbackModels []string `json:"fallback_models,omitempty"`
	// LiteLLMFallbacks are LiteLLM's request fallbacks and context_window_fallbacks.
	LiteLLMFallbacks
	// MaxRetries overrides the gateway's retries per model (Switchyard extension).
	MaxRetries *int `json:"max_retries,omitempty" jsonschema:"minimum=0,maximum=10"`
	// FaultPolicy holds the extension fields for timeouts, hedging and content filters.
	FaultPolicy
	// Cache is the request's say over the gateway's response cache (an extension, LiteLLM's
	// cache object: no-cache, no-store, ttl, s-maxage, namespace, use-cache).
	Cache *CacheControl `json:"cache,omitempty"`
	// Metadata is OpenAI's (key-value pairs, otherwise ignored) or LiteLLM's: its "tags", an
	// array of strings or a comma-separated string, become the request's tags
	// (Request.Tags).
	Metadata json.RawMessage `json:"metadata,omitempty" jsonschema:"type=object"`
	// Tags is LiteLLM's request-body "tags" (an array of strings or one comma-separated
	// string): added to metadata's tags as the request's tags.
	Tags json.RawMessage `json:"tags,omitempty" jsonschema:"oneof_type=array;string,description=LiteLLM's request tags (an array of strings or one comma-separated string): added to metadata.tags for cost attribution"`
	// LiteLLMMetadata is LiteLLM's litellm_metadata: its user names the request's end user
	// when the body's user does not.
	LiteLLMMetadata *LiteLLMMetadata `json:"litellm_metadata,omitempty" jsonschema:"description=LiteLLM's metadata for the gateway (never sent upstream): its user names the request's end user"`
	// Guardrails names opt-in guardrails to run on the request (an extension, LiteLLM's
	// request-body "guardrails"; see Request.Guardrails).
	Guardrails []string `json:"guardrails,omitempty"`
	// SafetySettings are Gemini's safety settings (LiteLLM's extension): each a category
	// and a threshold, passed to Gemini and Vertex AI's Gemini models as safetySettings and
	// not sent to other providers.
	SafetySettings []providers.SafetySetting `json:"safety_settings,omitempty"`

	// fieldName renames validation errors' fields (see Request.fieldName).
	fieldName func(string) string
	// legacyFunctions: the request's functions were translated to tools (UsesLegacyFunctions).
	legacyFunctions bool
	// fitMaxTokens, promptCache and its TTLs: see Request's.
	fitMaxTokens, promptCache                               bool
	promptCacheTTL, promptCacheTailTTL, promptCacheToolsTTL string
	// topK: see Request.TopK (the Messages surface's).
	topK *int
	// codeExecution and urlContext ask for Gemini's built-in tools (the Gemini surface's
	// tools.codeExecution and tools.urlContext).
	codeExecution, urlContext bool
	// maxStop raises MaxStopSequences (the Messages surface's stop_sequences).
	maxStop int
	// thinkingEffort is the Messages surface's output_config.effort: the effort of its
	// thinking, which unlike reasoning_effort is not sent to OpenAI-format upstreams as it is.
	thinkingEffort string
	// showReasoning is the Responses surface's reasoning.summary: the caller asks to see
	// the reasoning (providers.Thinking.Summary).
	showReasoning bool
	// hideUnaskedReasoning: the Messages and Responses surfaces (see
	// Request.unaskedReasoning).
	hideUnaskedReasoning bool
	// searchIfAvailable: the Responses surface's web_search tool (see
	// Request.searchIfAvailable).
	searchIfAvailable bool
	// search: the Messages surface's web_search server tool (Request.Search: the model
	// must search, as Claude Code's WebSearch asks).
	search bool
	// searchOptions: the Responses and Messages surfaces' web_search tool's options (the
	// chat surface's are in WebSearchOptions).
	searchOptions *providers.SearchOptions
	// showSources: the Messages surface (Request.showSources).
	showSources bool
}

// OpenAIStreamOptions is the OpenAI stream_options object.
type OpenAIStreamOptions struct {
	// IncludeUsage adds a last chunk with usage and no choices.
	IncludeUsage bool `json:"include_usage,omitempty"`
}

// OpenAIMessage is an OpenAI chat message. Content is a string or an array of parts:
// "text" parts, and "image_url" parts in user messages (passed on to the upstream, which
// fetches URLs itself; see providers.Image). Role "developer" is read as "system". An assistant message
// may carry ToolCalls (its content may then be null); a "tool" message is the result of the
// call ToolCallID.
type OpenAIMessage struct {
	Role    string        `json:"role" jsonschema:"required,enum=system,enum=developer,enum=user,enum=assistant,enum=tool,enum=function"`
	Content OpenAIContent `json:"content"`
	Name    string        `json:"name,omitempty"`
	// ToolCalls are the calls an assistant message made.
	ToolCalls []OpenAIToolCall `json:"tool_calls,omitempty"`
	// ToolCallID is the call a "tool" message answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// Refusal is what an assistant message declined with (OpenAI's message.refusal, its
	// content then null), sent back as an SDK returned it: it reaches the upstream as the
	// assistant's text, as does a "refusal" content part.
	Refusal string `json:"refusal,omitempty"`
	// FunctionCall is the legacy form of an assistant message's one tool call ({name,
	// arguments}); a "function" message (Name the function) is its result. Both are read
	// as ToolCalls and a "tool" message.
	FunctionCall json.RawMessage `json:"function_call,omitempty" jsonschema:"type=object,description=The legacy form of an assistant message's tool call ({name\\, arguments}): read as tool_calls"`
	// ThinkingBlocks are the reasoning blocks an assistant message was answered with, sent
	// back as the gateway returned them (LiteLLM's field): Claude takes its own signed
	// blocks back and needs them after it called tools with thinking on. ReasoningContent
	// is the reasoning as text (DeepSeek's and LiteLLM's field): accepted, and sent to no
	// provider, as none takes unsigned reasoning back.
	ThinkingBlocks   []OpenAIThinkingBlock `json:"thinking_blocks,omitempty"`
	ReasoningContent string                `json:"reasoning_content,omitempty"`
	// Audio names the spoken answer an assistant message was (message.audio.id of an
	// earlier answer), sent back so that the model hears it: only OpenAI-format models take
	// it, others are passed over.
	Audio *OpenAIAudioRef `json:"audio,omitempty"`
}

// OpenAIAudioRef is an earlier spoken answer, by id.
type OpenAIAudioRef struct {
	ID string `json:"id" jsonschema:"required"`
}

// MaxChoices is the most choices (n) a chat completions request may ask for.
const MaxChoices = 16

// MaxStopSequences is the most stop sequences a chat completions request may give (OpenAI's
// limit).
const MaxStopSequences = 4

// MaxAnyStopSequences is the most stop sequences any request may give (the Messages API's
// stop_sequences, a library caller's Request.Stop): models whose API takes fewer (OpenAI's
// 4, Gemini's 5) are skipped for a request that has more.
const MaxAnyStopSequences = 16

// OpenAIStop is OpenAI's stop parameter: a string, an array of strings or null.
type OpenAIStop []string

// UnmarshalJSON reads a string, an array of strings or null.
func (s *OpenAIStop) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	*s = nil
	switch {
	case bytes.Equal(b, []byte("null")):
		return nil
	case len(b) > 0 && b[0] == '"':
		var one string
		if err := json.Unmarshal(b, &one); err != nil {
			return err
		}
		*s = OpenAIStop{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return err
	}
	*s = many
	return nil
}

// JSONSchema describes stop for invopop/jsonschema: a string or up to 4 strings.
func (OpenAIStop) JSONSchema() *jsonschema.Schema {
	maxItems := uint64(MaxStopSequences)
	return &jsonschema.Schema{OneOf: []*jsonschema.Schema{
		{Type: "string"},
		{Type: "array", Items: &jsonschema.Schema{Type: "string"}, MaxItems: &maxItems},
		{Type: "null"},
	}}
}

// present reports whether an optional raw field was given a value other than null.
func present(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && !bytes.Equal(t, []byte("null"))
}

// rawIs reports whether raw is the JSON value want (compared after trimming space).
func rawIs(raw json.RawMessage, want string) bool {
	return string(bytes.TrimSpace(raw)) == want
}

// audioOutput reads the spoken answer asked for: modalities ["text"] or ["text", "audio"]
// and, with "audio", the audio object (voice and format) OpenAI requires with it. Only
// OpenAI-format chat completions answer aloud (other models are unfit); streamed, the
// answer is one choice in pcm16 (the only format OpenAI streams audio in); whole, n choices
// are n spoken answers (each choice is its own call, as for text).
func (r *OpenAIChatRequest) audioOutput() ([]string, *providers.AudioOutput, error) {
	var mods []string
	if present(r.Modalities) {
		if err := json.Unmarshal(r.Modalities, &mods); err != nil || len(mods) == 0 {
			return nil, nil, invalid("modalities", `must be ["text"] or ["text", "audio"]`)
		}
		seen := map[string]bool{}
		for _, m := range mods {
			if m != "text" && m != "audio" || seen[m] {
				return nil, nil, invalid("modalities", `must be ["text"] or ["text", "audio"], got %s`, clipRaw(r.Modalities))
			}
			seen[m] = true
		}
		if !seen["text"] {
			return nil, nil, invalid("modalities", `must include "text" (OpenAI's audio models answer ["text", "audio"])`)
		}
		if !seen["audio"] {
			mods = nil // text only: the default
		}
	}
	if !present(r.Audio) {
		if mods != nil {
			return nil, nil, invalid("audio", `is required with modalities ["text", "audio"] ({"voice": "alloy", "format": "wav"})`)
		}
		return nil, nil, nil
	}
	if mods == nil {
		return nil, nil, invalid("modalities", `must be ["text", "audio"] when audio is given`)
	}
	var a providers.AudioOutput
	if err := json.Unmarshal(r.Audio, &a); err != nil || a.Voice == "" || a.Format == "" {
		return nil, nil, invalid("audio", `must be {"voice": …, "format": …} with both strings set`)
	}
	if r.Stream && a.Format != providers.StreamedAudioFormat {
		// OpenAI refuses it too ("'audio.format' does not support 'wav' when stream=true").
		return nil, nil, invalid("audio.format", "must be %q when the answer is streamed (OpenAI streams audio in pcm16 only), got %q", providers.StreamedAudioFormat, a.Format)
	}
	if r.Stream && r.N != nil && *r.N > 1 {
		return nil, nil, invalid("n", "a streamed spoken answer is one choice, got n %d: ask without stream for several", *r.N)
	}
	return mods, &a, nil
}

// clipRaw is raw for an error message, at most 64 bytes.
func clipRaw(raw json.RawMessage) string {
	if len(raw) > 64 {
		return string(raw[:64]) + "…"
	}
	return string(raw)
}

// OpenAIContentPart is one part of an array content: "text" (Text), "image_url"
// (ImageURL), "file" (File) or "input_audio" (InputAudio); assistant messages may also have
// "refusal" parts (Refusal), read as text.
type OpenAIContentPart struct {
	Type       string            `json:"type"`
	Text       string            `json:"text,omitempty"`
	Refusal    string            `json:"refusal,omitempty"`
	ImageURL   *OpenAIImageURL   `json:"image_url,omitempty"`
	File       *OpenAIFile       `json:"file,omitempty"`
	InputAudio *OpenAIInputAudio `json:"input_audio,omitempty"`
}

// OpenAIInputAudio is an input_audio part's recording: base64 Data (not a data URL) in
// Format wav or mp3. Only OpenAI-format and Gemini models take it; others are passed over.
type OpenAIInputAudio struct {
	Data   string `json:"data" jsonschema:"required"`
	Format string `json:"format" jsonschema:"required,enum=wav,enum=mp3"`
}

// OpenAIFile is a file part's document: a PDF as a base64 data URL in FileData (or, as an
// extension, an http(s) URL for providers that fetch one: Anthropic, Gemini) and its
// Filename. FileID is refused: the gateway stores no files.
type OpenAIFile struct {
	FileData string `json:"file_data,omitempty"`
	Filename string `json:"filename,omitempty"`
	FileID   string `json:"file_id,omitempty"`
}

// OpenAIImageURL is an image_url part's image: an http(s) URL or a base64 data URL,
// OpenAI's detail hint (auto, low, high, …) and LiteLLM's format, the image's type when the
// URL does not tell it (Gemini must be told; it is not sent to OpenAI-format upstreams).
type OpenAIImageURL struct {
	URL    string `json:"url"`
	Detail string `json:"detail,omitempty"`
	Format string `json:"format,omitempty"`
}

// OpenAIContent is a message content: a string or an array of parts.
type OpenAIContent struct {
	// Parts holds the content; a plain string is one "text" part.
	Parts []OpenAIContentPart
	// IsString records that the content was a plain string.
	IsString bool
}

// UnmarshalJSON reads a string, an array of parts or null.
func (c *OpenAIContent) UnmarshalJSON(b []byte) (err error) {
	*c = OpenAIContent{}
	c.Parts, c.IsString, err = decodeStringOrList(b, func(s string) OpenAIContentPart { return OpenAIContentPart{Type: "text", Text: s} })
	return err
}

// MarshalJSON writes a string when the content was one, else the parts.
func (c OpenAIContent) MarshalJSON() ([]byte, error) {
	if c.IsString && len(c.Parts) == 1 {
		return json.Marshal(c.Parts[0].Text)
	}
	if c.Parts == nil {
		return []byte("null"), nil
	}
	return json.Marshal(c.Parts)
}

// JSONSchema describes the content for invopop/jsonschema: a string, an array of parts
// (text or image_url) or null.
func (OpenAIContent) JSONSchema() *jsonschema.Schema {
	props := jsonschema.NewProperties()
	props.Set("type", &jsonschema.Schema{Type: "string", Enum: []any{"text", "image_url", "file", "refusal"}})
	props.Set("text", &jsonschema.Schema{Type: "string"})
	props.Set("refusal", &jsonschema.Schema{Type: "string", Description: "An assistant message's refusal part, read as its text"})
	image := jsonschema.NewProperties()
	image.Set("url", &jsonschema.Schema{Type: "string", Description: "An http(s) URL or a base64 data URL of a PNG, JPEG, GIF or WebP image"})
	image.Set("detail", &jsonschema.Schema{Type: "string", Description: "OpenAI's fidelity hint (auto or low or high or original); passed to OpenAI-format upstreams as it is"})
	image.Set("format", &jsonschema.Schema{Type: "string", Description: "The image's media type when the URL does not tell it (LiteLLM's field; Gemini must be told)"})
	props.Set("image_url", &jsonschema.Schema{Type: "object", Properties: image, Required: []string{"url"}})
	file := jsonschema.NewProperties()
	file.Set("file_data", &jsonschema.Schema{Type: "string", Description: "A base64 data URL of a PDF (or an http(s) URL for Anthropic and Gemini models)"})
	file.Set("filename", &jsonschema.Schema{Type: "string"})
	props.Set("file", &jsonschema.Schema{Type: "object", Properties: file, Required: []string{"file_data"}})
	part := &jsonschema.Schema{Type: "object", Properties: props, Required: []string{"type"}}
	return &jsonschema.Schema{OneOf: []*jsonschema.Schema{
		{Type: "string"},
		{Type: "array", Items: part},
		{Type: "null"},
	}}
}

// ToRequest translates r to a gateway Request (stateless: no conversation is stored).
// Errors are *ValidationError naming the OpenAI field (or the field of the request r was
// translated from: /v1/responses, /v1/messages).
func (r *OpenAIChatRequest) ToRequest() (*Request, error) {
	req, err := r.toRequest()
	if ve := (*ValidationError)(nil); err != nil && r.fieldName != nil && errors.As(err, &ve) {
		ve.Field = r.fieldName(ve.Field)
	}
	return req, err
}

func (r *OpenAIChatRequest) toRequest() (*Request, error) {
	if r.Model == "" {
		return nil, invalid("model", "is required")
	}
	if r.N != nil && (*r.N < 1 || *r.N > MaxChoices) {
		return nil, invalid("n", "must be between 1 and %d, got %d", MaxChoices, *r.N)
	}
	modalities, audio, err := r.audioOutput()
	if err != nil {
		return nil, err
	}
	if err := r.translateLegacyFunctions(); err != nil {
		return nil, err
	}
	logprobs, top, err := chatLogprobs(r.Logprobs, r.TopLogprobs)
	if err != nil {
		return nil, err
	}
	if t := r.TopP; t != nil && (math.IsNaN(*t) || *t < 0 || *t > 1) {
		return nil, invalid("top_p", "must be between 0 and 1, got %g", *t)
	}
	if most := max(MaxStopSequences, r.maxStop); len(r.Stop) > most {
		return nil, invalid("stop", "at most %d sequences, got %d", most, len(r.Stop))
	}
	for i, seq := range r.Stop {
		if seq == "" {
			return nil, invalid(fmt.Sprintf("stop[%d]", i), "must not be empty")
		}
	}
	if err := checkOpenAIOptions(&r.OpenAIOptions); err != nil {
		return nil, err
	}
	if err := checkEffort("reasoning_effort", r.ReasoningEffort); err != nil {
		return nil, err
	}
	thinking, err := thinkingFor("thinking", r.Thinking, cmp.Or(r.ReasoningEffort, r.thinkingEffort))
	if err != nil {
		return nil, err
	}
	if r.showReasoning && thinking == nil && (r.Thinking == nil || r.Thinking.Type != "disabled") {
		// A Responses summary without an effort asks for reasoning at the default effort,
		// as OpenAI's API gives it.
		thinking = &providers.Thinking{}
	}
	if thinking != nil && (r.Thinking != nil || r.showReasoning) {
		// A thinking object (chat, Messages) or a Responses summary asks to see the
		// reasoning, not only for an effort.
		thinking.Summary = true
	}
	fieldName := r.fieldName
	if inner := fieldName; present(r.WebSearchOptions) {
		fieldName = func(f string) string {
			if f == "search" {
				f = "web_search_options" // the model cannot search: this field asked it to
			}
			if inner != nil {
				f = inner(f)
			}
			return f
		}
	}
	searchOptions := r.searchOptions
	if present(r.WebSearchOptions) {
		o, err := chatSearchOptions(r.WebSearchOptions)
		if err != nil {
			return nil, err
		}
		searchOptions = o
	}
	tags, err := metadataTags(r.Metadata)
	if err != nil {
		return nil, err
	}
	bodyTags, err := requestTags("tags", r.Tags)
	if err != nil {
		return nil, err
	}
	if r.LiteLLMMetadata != nil {
		more, err := requestTags("litellm_metadata.tags", r.LiteLLMMetadata.Tags)
		if err != nil {
			return nil, err
		}
		bodyTags = AddTags(bodyTags, more...)
	}
	if tags = AddTags(tags, bodyTags...); len(bodyTags) > 0 {
		if err := CheckTags("tags", tags); err != nil { // at most MaxTags in all
			return nil, err
		}
	}
	for i, ss := range r.SafetySettings {
		if ss.Category == "" {
			return nil, invalid(fmt.Sprintf("safety_settings[%d].category", i), "is required (a HARM_CATEGORY_… name)")
		}
		if ss.Threshold == "" {
			return nil, invalid(fmt.Sprintf("safety_settings[%d].threshold", i), "is required (BLOCK_NONE, BLOCK_ONLY_HIGH, BLOCK_MEDIUM_AND_ABOVE, BLOCK_LOW_AND_ABOVE or OFF)")
		}
	}
	mockText, mockKind, err := r.mocks()
	if err != nil {
		return nil, err
	}
	fallbacks, fallbacksByModel, err := r.fallbackModels()
	if err != nil {
		return nil, err
	}
	windowFallbacks, windowEntryAt, err := requestWindowFallbacks(r.ContextWindowFallbacks)
	if err != nil {
		return nil, err
	}
	req := &Request{
		MockResponse:   mockText,
		MockFailure:    mockKind,
		safetySettings: r.SafetySettings,
		codeExecution:  r.codeExecution,
		urlContext:     r.urlContext,
		searchOptions:  searchOptions,
		Thinking:       thinking,
		fieldName:      fieldName,
		fitMaxTokens:   r.fitMaxTokens,
		promptCache:    r.promptCache,
		promptCacheTTL: r.promptCacheTTL, promptCacheTailTTL: r.promptCacheTailTTL, promptCacheToolsTTL: r.promptCacheToolsTTL,
		TopK:                   r.topK,
		Logprobs:               logprobs,
		TopLogprobs:            top,
		Models:                 []string{r.Model},
		FallbackModels:         fallbacks,
		fallbacksByModel:       fallbacksByModel,
		ContextWindowFallbacks: windowFallbacks,
		windowEntryAt:          windowEntryAt,
		legacyFunctions:        r.legacyFunctions,
		Stream:                 r.Stream,
		Temperature:            r.Temperature,
		MaxRetries:             r.MaxRetries,
		FaultPolicy:            r.FaultPolicy,
		Cache:                  r.Cache,
		Tags:                   tags,
		Guardrails:             r.Guardrails,
		maxTemperature:         2,
		ephemeral:              true,
		// reasoning_content unasked, as DeepSeek and LiteLLM return it; not on the surfaces
		// translated to this one (Messages, Responses).
		unaskedReasoning:  !r.hideUnaskedReasoning,
		searchIfAvailable: r.searchIfAvailable,
		Search:            r.search || present(r.WebSearchOptions),
		showSources:       r.showSources,
		TopP:              r.TopP,
		Stop:              r.Stop,
		OpenAIOptions:     r.OpenAIOptions,
	}
	if audio != nil {
		req.modalities, req.audio = modalities, audio
		// A spoken answer is not kept: the response cache holds text answers.
		cc := CacheControl{}
		if req.Cache != nil {
			cc = *req.Cache
		}
		cc.NoCache, cc.NoStore = true, true
		req.Cache = &cc
	}
	// Each bound given is checked, as OpenAI checks both (0 included: its minimum is 1).
	if n := r.MaxCompletionTokens; n != nil && *n < 1 {
		return nil, invalid("max_completion_tokens", "must be at least 1, got %d", *n)
	}
	if n := r.MaxTokens; n != nil && *n < 1 {
		return nil, invalid("max_tokens", "must be at least 1, got %d", *n)
	}
	switch {
	case r.MaxCompletionTokens != nil:
		req.MaxTokens = *r.MaxCompletionTokens
	case r.MaxTokens != nil:
		req.MaxTokens = *r.MaxTokens
	}
	if len(r.Messages) == 0 {
		return nil, invalid("messages", "at least one message is required")
	}
	req.Messages = make([]Message, len(r.Messages))
	if err := r.toolRequest(req); err != nil {
		return nil, err
	}
	for i, m := range r.Messages {
		role := m.Role
		switch role {
		case "developer":
			role = "system"
		case "system", "user", "assistant", "tool":
		default:
			return nil, invalid(fmt.Sprintf("messages[%d].role", i), "must be system, developer, user, assistant or tool, got %q", m.Role)
		}
		calls, err := messageToolCalls(i, m)
		if err != nil {
			return nil, err
		}
		if (len(m.ThinkingBlocks) > 0 || m.ReasoningContent != "") && m.Role != "assistant" {
			return nil, invalid(fmt.Sprintf("messages[%d].thinking_blocks", i), "reasoning is accepted in assistant messages only, got it in a %q message", m.Role)
		}
		var reasoning []providers.ReasoningBlock
		if len(m.ThinkingBlocks) > 0 {
			if reasoning, err = reasoningFromBlocks(fmt.Sprintf("messages[%d].thinking_blocks", i), m.ThinkingBlocks); err != nil {
				return nil, err
			}
		}
		if reasoning == nil && m.ReasoningContent != "" {
			reasoning = []providers.ReasoningBlock{{Text: m.ReasoningContent}}
		}
		if m.Refusal != "" && m.Role != "assistant" {
			return nil, invalid(fmt.Sprintf("messages[%d].refusal", i), "is accepted in assistant messages only, got it in a %q message", m.Role)
		}
		blocks := make([]ContentBlock, len(m.Content.Parts), len(m.Content.Parts)+1)
		for j, p := range m.Content.Parts {
			switch {
			case p.Type == "text":
				blocks[j] = ContentBlock{Type: "text", Text: p.Text}
			case p.Type == "refusal" && m.Role != "assistant":
				return nil, invalid(fmt.Sprintf("messages[%d].content[%d].type", i, j), "refusal parts are accepted in assistant messages only, got one in a %q message", m.Role)
			case p.Type == "refusal":
				// What the model declined with: the assistant's text, as the Responses
				// surface reads its refusal parts.
				blocks[j] = ContentBlock{Type: "text", Text: p.Refusal}
			case p.Type == "image_url" && p.ImageURL != nil && m.Role != "user":
				return nil, invalid(fmt.Sprintf("messages[%d].content[%d].type", i, j), "images are accepted in user messages only, got one in a %q message", m.Role)
			case p.Type == "image_url" && p.ImageURL != nil:
				blocks[j] = imageBlock(providers.Image{URL: p.ImageURL.URL, Detail: p.ImageURL.Detail, MediaType: p.ImageURL.Format})
			case p.Type == "image_url":
				return nil, invalid(fmt.Sprintf("messages[%d].content[%d].image_url", i, j), "is required")
			case p.Type == "file" && m.Role != "user":
				return nil, invalid(fmt.Sprintf("messages[%d].content[%d].type", i, j), "files are accepted in user messages only, got one in a %q message", m.Role)
			case p.Type == "file" && p.File != nil && p.File.FileID != "":
				return nil, invalid(fmt.Sprintf("messages[%d].content[%d].file.file_id", i, j), "is not supported: the gateway stores no files; send file_data (a base64 data URL of a PDF)")
			case p.Type == "file" && (p.File == nil || p.File.FileData == ""):
				return nil, invalid(fmt.Sprintf("messages[%d].content[%d].file.file_data", i, j), "is required")
			case p.Type == "file":
				blocks[j] = fileBlock(providers.File{URL: p.File.FileData, Filename: p.File.Filename})
			case p.Type == "input_audio" && m.Role != "user":
				return nil, invalid(fmt.Sprintf("messages[%d].content[%d].type", i, j), "audio is accepted in user messages only, got it in a %q message", m.Role)
			case p.Type == "input_audio" && p.InputAudio == nil:
				return nil, invalid(fmt.Sprintf("messages[%d].content[%d].input_audio", i, j), "is required")
			case p.Type == "input_audio":
				blocks[j] = audioBlock(providers.Audio{Data: p.InputAudio.Data, Format: p.InputAudio.Format})
			default:
				return nil, invalid(fmt.Sprintf("messages[%d].content[%d].type", i, j), "must be %s, got %q", chatPartTypes(m.Role), p.Type)
			}
		}
		if m.Refusal != "" {
			// An SDK's refused answer sent back as it is ("content": null, or ""): the
			// refusal is the turn's text, not an empty turn.
			blocks = slices.DeleteFunc(blocks, func(b ContentBlock) bool { return b.Type == "text" && b.Text == "" })
			blocks = append(blocks, ContentBlock{Type: "text", Text: m.Refusal})
		}
		req.Messages[i] = Message{Role: role, Content: blocks, ToolCalls: calls, ToolCallID: m.ToolCallID, Name: m.Name, Reasoning: reasoning}
		if m.Audio != nil {
			switch {
			case m.Role != "assistant":
				return nil, invalid(fmt.Sprintf("messages[%d].audio", i), "is accepted in assistant messages only, got it in a %q message", m.Role)
			case m.Audio.ID == "":
				return nil, invalid(fmt.Sprintf("messages[%d].audio.id", i), "is required")
			}
			req.Messages[i].AudioID = m.Audio.ID
		}
	}
	return req, nil
}

// chatPartTypes is the content part types a chat message of role accepts, as its refusal
// of another type lists them: a user's may have images, files and audio, an assistant's
// refusals.
func chatPartTypes(role string) string {
	switch role {
	case "user":
		return "text, image_url, file or input_audio"
	case "assistant":
		return "text or refusal"
	default:
		return "text"
	}
}

// checkOpenAIOptions checks the ranges OpenAI documents (the values of the string options
// are left to the upstream, whose 400 names them, so that new values need no release).
func checkOpenAIOptions(o *providers.OpenAIOptions) error {
	for _, p := range []struct {
		name string
		v    *float64
	}{{"frequency_penalty", o.FrequencyPenalty}, {"presence_penalty", o.PresencePenalty}} {
		if p.v != nil && (math.IsNaN(*p.v) || *p.v < -2 || *p.v > 2) {
			return invalid(p.name, "must be between -2 and 2, got %g", *p.v)
		}
	}
	if len(o.LogitBias) > 300 {
		return invalid("logit_bias", "at most 300 tokens, got %d", len(o.LogitBias))
	}
	for tok, bias := range o.LogitBias {
		if _, err := strconv.ParseUint(tok, 10, 32); err != nil {
			return invalid("logit_bias", "keys must be token ids, got %q", tok)
		}
		if math.IsNaN(bias) || bias < -100 || bias > 100 {
			return invalid("logit_bias", "values must be between -100 and 100, got %g for token %s", bias, tok)
		}
	}
	return nil
}

// OpenAIChatCompletion is an OpenAI "chat.completion" object.
type OpenAIChatCompletion struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	Model   string `json:"model"`
	// ServiceTier and SystemFingerprint are the answering upstream's, passed on when it is
	// OpenAI-compatible and sent them (never made up).
	ServiceTier       string         `json:"service_tier,omitempty"`
	SystemFingerprint string         `json:"system_fingerprint,omitempty"`
	Choices           []OpenAIChoice `json:"choices"`
	Usage             *OpenAIUsage   `json:"usage,omitempty"`
	// Switchyard carries the gateway's costs and attempts (extension).
	Switchyard *OpenAIExtension `json:"switchyard,omitempty"`
}

// OpenAIChoice is one choice of a chat.completion. Logprobs is null unless the request
// asked for log probabilities (logprobs: true); then it is {"content": [...], "refusal":
// [...] or null} as in OpenAI's API reference.
type OpenAIChoice struct {
	Index        int                   `json:"index"`
	Message      OpenAIResponseMessage `json:"message"`
	Logprobs     *OpenAILogprobs       `json:"logprobs" jsonschema:"nullable"`
	FinishReason string                `json:"finish_reason"`
}

// OpenAIResponseMessage is the assistant message of a choice. Content is null when the
// answer is only tool calls; Refusal is null unless the model declined to answer in the
// requested format.
type OpenAIResponseMessage struct {
	Role      string           `json:"role"`
	Content   *string          `json:"content" jsonschema:"nullable"`
	Refusal   *string          `json:"refusal" jsonschema:"nullable"`
	ToolCalls []OpenAIToolCall `json:"tool_calls,omitempty"`
	// FunctionCall replaces ToolCalls in the answer to a request that declared legacy
	// functions (its first call; see OpenAIChatCompletion.AsLegacyFunctionCall).
	FunctionCall *OpenAIFunctionCall `json:"function_call,omitempty"`
	// ReasoningContent is the reasoning the model showed, as text, and ThinkingBlocks
	// Claude's signed blocks to send back with this message (LiteLLM's fields); both
	// absent when the model showed none.
	ReasoningContent string                `json:"reasoning_content,omitempty"`
	ThinkingBlocks   []OpenAIThinkingBlock `json:"thinking_blocks,omitempty"`
	// Annotations cite the web pages the provider's own search found (url_citation, as
	// OpenAI's search models give them; each spans the whole answer).
	Annotations []OpenAIAnnotation `json:"annotations,omitempty"`
	// Audio is the spoken answer (modalities ["text", "audio"]): its id, base64 data,
	// expires_at and transcript, as OpenAI gives it.
	Audio *providers.AudioAnswer `json:"audio,omitempty"`
}

// OpenAIAnnotation is a url_citation annotation of a chat answer.
type OpenAIAnnotation struct {
	Type        string            `json:"type"`
	URLCitation OpenAIURLCitation `json:"url_citation"`
}

// OpenAIURLCitation is the page an annotation cites and the span of the answer it backs
// (character offsets).
type OpenAIURLCitation struct {
	StartIndex int    `json:"start_index"`
	EndIndex   int    `json:"end_index"`
	URL        string `json:"url"`
	Title      string `json:"title"`
}

// OpenAIUsage is OpenAI's usage object.
type OpenAIUsage struct {
	PromptTokens            int                     `json:"prompt_tokens"`
	CompletionTokens        int                     `json:"completion_tokens"`
	TotalTokens             int                     `json:"total_tokens"`
	PromptTokensDetails     *OpenAIPromptDetails    `json:"prompt_tokens_details,omitempty"`
	CompletionTokensDetails *OpenAICompletionDetail `json:"completion_tokens_details,omitempty"`
	// Estimated is Switchyard's extension (OpenAI SDKs ignore it): the upstream reported no
	// usage and the tokens were counted locally (Response.UsageEstimated).
	Estimated bool `json:"estimated,omitempty"`
}

// OpenAIPromptDetails breaks prompt tokens down.
type OpenAIPromptDetails struct {
	CachedTokens int `json:"cached_tokens"`
	// AudioTokens are the prompt's input_audio tokens (absent without audio).
	AudioTokens int `json:"audio_tokens,omitempty"`
}

// OpenAICompletionDetail breaks completion tokens down.
type OpenAICompletionDetail struct {
	ReasoningTokens int `json:"reasoning_tokens"`
	// AudioTokens are a spoken answer's tokens (absent without one).
	AudioTokens int `json:"audio_tokens,omitempty"`
}

// OpenAIExtension is the "switchyard" member of OpenAI-format responses.
type OpenAIExtension struct {
	Provider string `json:"provider"`
	// ModelGroup is the model group the request named, when it named one.
	ModelGroup string    `json:"model_group,omitempty"`
	Costs      Costs     `json:"costs"`
	Latency    int64     `json:"latency"`
	TTFT       int64     `json:"ttft"`
	Attempts   []Attempt `json:"attempts"`
	// Continued is set when a stream broke mid-answer and another model continued it (a
	// streamed Responses API answer's final response object says so here).
	Continued *Continuation `json:"continued,omitempty"`
	// Cache says how the response cache took part (see Response.Cache); the
	// X-Switchyard-Cache headers say it too, also for streams.
	Cache *CacheStatus `json:"cache,omitempty"`
}

// openAIUsage renders r's usage as OpenAI's usage object.
func openAIUsage(r *Response) *OpenAIUsage {
	u := r.Usage
	return &OpenAIUsage{
		PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.TotalTokens,
		PromptTokensDetails:     &OpenAIPromptDetails{CachedTokens: u.CachedTokens, AudioTokens: u.PromptAudioTokens},
		CompletionTokensDetails: &OpenAICompletionDetail{ReasoningTokens: u.ReasoningTokens, AudioTokens: u.CompletionAudioTokens},
		Estimated:               r.UsageEstimated,
	}
}

func finishReason(s string) string {
	if s == "" {
		return "stop"
	}
	return s
}

// Choices is the number of choices r asks for (n, 1 when absent).
func (r *OpenAIChatRequest) Choices() int {
	if r.N == nil {
		return 1
	}
	return *r.N
}

// NewOpenAIChatCompletionN renders the answers of CompleteN as one chat.completion with a
// choice per answer, in order: its usage and costs are their sums, its attempts all of
// theirs, its model and provider the first answer's.
func NewOpenAIChatCompletionN(rs []*Response, created time.Time) *OpenAIChatCompletion {
	out := NewOpenAIChatCompletion(rs[0], created)
	sum := *rs[0]
	for i, r := range rs[1:] {
		out.Choices = append(out.Choices, OpenAIChoice{Index: i + 1, Message: openAIResponseMessage(r), Logprobs: openAILogprobs(r.Logprobs), FinishReason: finishReason(r.FinishReason)})
		sum.Usage = addUsage(sum.Usage, r.Usage)
		sum.UsageEstimated = sum.UsageEstimated || r.UsageEstimated
		sum.Latency = max(sum.Latency, r.Latency)
		out.Switchyard.Attempts = append(out.Switchyard.Attempts, r.Attempts...)
	}
	out.Usage = openAIUsage(&sum)
	out.Switchyard.Cache = CombinedCache(rs)
	out.Switchyard.Costs, out.Switchyard.Latency = sum.Usage.Costs, sum.Latency
	return out
}

// NewOpenAIChatCompletion renders r as an OpenAI chat.completion created at created.
func NewOpenAIChatCompletion(r *Response, created time.Time) *OpenAIChatCompletion {
	return &OpenAIChatCompletion{
		ID:          "chatcmpl-" + r.ResponseMessageID,
		Object:      "chat.completion",
		Created:     created.Unix(),
		Model:       r.Provider + "/" + r.Model,
		ServiceTier: r.ServiceTier, SystemFingerprint: r.SystemFingerprint,
		Choices: []OpenAIChoice{{Index: 0, Message: openAIResponseMessage(r), Logprobs: openAILogprobs(r.Logprobs), FinishReason: finishReason(r.FinishReason)}},
		Usage:   openAIUsage(r),
		Switchyard: &OpenAIExtension{Provider: r.Provider, ModelGroup: r.ModelGroup, Costs: r.Usage.Costs, Latency: r.Latency, TTFT: r.TTFT,
			Attempts: r.Attempts, Continued: r.Continued, Cache: r.Cache},
	}
}

// OpenAIChunk is an OpenAI "chat.completion.chunk" object.
type OpenAIChunk struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	Model   string `json:"model"`
	// ServiceTier and SystemFingerprint are the answering upstream's, on every chunk once
	// it sent them, when it is OpenAI-compatible (never made up).
	ServiceTier       string              `json:"service_tier,omitempty"`
	SystemFingerprint string              `json:"system_fingerprint,omitempty"`
	Choices           []OpenAIChunkChoice `json:"choices"`
	Usage             *OpenAIUsage        `json:"usage,omitempty"`
	// Switchyard is set on the finish chunk of an answer that another model continued
	// after the stream broke (which model, from which character, and every attempt), and
	// on the usage chunk (stream_options.include_usage) with the whole answer's summary.
	Switchyard *OpenAIStreamExtension `json:"switchyard,omitempty"`
}

// OpenAIStreamExtension is the "switchyard" member of a continued stream's finish chunk
// (Continued and Attempts only) and of a stream's usage chunk, where it says what a whole
// answer's OpenAIExtension says: the provider, the group asked, the costs, the latency and
// time to first token in milliseconds, the attempts, the cache's part. With n choices,
// costs and attempts are all the choices', latency the longest, provider, group and
// time to first token the first's, and no cache member.
type OpenAIStreamExtension struct {
	Provider   string        `json:"provider,omitempty"`
	ModelGroup string        `json:"model_group,omitempty"`
	Costs      *Costs        `json:"costs,omitempty"`
	Latency    int64         `json:"latency,omitempty"`
	TTFT       int64         `json:"ttft,omitempty"`
	Continued  *Continuation `json:"continued,omitempty"`
	Attempts   []Attempt     `json:"attempts"`
	Cache      *CacheStatus  `json:"cache,omitempty"`
}

// OpenAIChunkChoice is one choice delta of a chunk. Logprobs is null unless the request
// asked for log probabilities: then a text chunk carries its tokens' (content), the
// refusal chunk the refusal's, as OpenAI streams them.
type OpenAIChunkChoice struct {
	Index        int             `json:"index"`
	Delta        OpenAIDelta     `json:"delta"`
	Logprobs     *OpenAILogprobs `json:"logprobs" jsonschema:"nullable"`
	FinishReason *string         `json:"finish_reason"`
}

// OpenAIDelta is the incremental message of a chunk: a piece of text, or fragments of tool
// calls (see OpenAIToolCallDelta).
type OpenAIDelta struct {
	Role      string                `json:"role,omitempty"`
	Content   string                `json:"content,omitempty"`
	ToolCalls []OpenAIToolCallDelta `json:"tool_calls,omitempty"`
	// FunctionCall replaces ToolCalls in the stream of a request that declared legacy
	// functions: its first fragment has the name, the others pieces of the arguments.
	FunctionCall *OpenAIFunctionCallDelta `json:"function_call,omitempty"`
	// Refusal is the model's refusal, sent whole in one chunk before the finish chunk.
	Refusal string `json:"refusal,omitempty"`
	// ReasoningContent is a piece of the model's reasoning; ThinkingBlocks carries a
	// block of Claude's whole once it is complete — its text with its signature, or its
	// redacted data — to be sent back with the message.
	ReasoningContent string                `json:"reasoning_content,omitempty"`
	ThinkingBlocks   []OpenAIThinkingBlock `json:"thinking_blocks,omitempty"`
	// Annotations cite the web pages the provider's own search found, in one chunk before
	// the finish chunk (as OpenAI's search models stream them; each spans the whole answer).
	Annotations []OpenAIAnnotation `json:"annotations,omitempty"`
	// Audio is a piece of a spoken answer (modalities ["text", "audio"]), as OpenAI streams
	// it: the id, then pieces of the transcript and of the base64 pcm16 audio, then
	// expires_at.
	Audio *providers.AudioDelta `json:"audio,omitempty"`
}

// OpenAIErrorBody is OpenAI's error envelope {"error": {...}}.
type OpenAIErrorBody struct {
	Error OpenAIErrorObject `json:"error"`
}

// OpenAIErrorObject describes an error the way OpenAI SDKs parse it.
type OpenAIErrorObject struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

// WriteOpenAIStream sends st to w as OpenAI chat.completion.chunk events ending with
// "data: [DONE]" (a usage chunk first when includeUsage), and closes st. A failure after
// the first fragment ends the stream with a data event holding an OpenAI error object and
// no [DONE], which OpenAI SDKs raise as an error.
func WriteOpenAIStream(w http.ResponseWriter, st *ResponseStream, includeUsage bool) error {
	defer st.Close()
	sse := NewSSEWriter(w)
	afterFragment := relay(st, sse)
	enc := newOpenAIChoiceEncoder(st, 0, OpenAIChunk{
		ID: "chatcmpl-" + st.ResponseMessageID(), Object: "chat.completion.chunk", Created: st.Created().Unix(),
		Model: st.Provider() + "/" + st.Model(), ServiceTier: st.ServiceTier(), SystemFingerprint: st.SystemFingerprint(),
	})
	for {
		c, err := st.Recv()
		if errors.Is(err, io.EOF) {
			resp := st.Response()
			if err := enc.end(sse, resp); err != nil {
				return err
			}
			if includeUsage {
				if err := sse.Buffer("", enc.usageChunk(openAIUsage(resp), streamSummary(resp))); err != nil {
					return err
				}
			}
			return sse.Done()
		}
		if err != nil {
			writeOpenAIStreamError(sse, err)
			return err
		}
		if err := enc.fragment(sse, c); err != nil {
			return err
		}
		if err := afterFragment(); err != nil {
			return err
		}
	}
}

// WriteOpenAIStreamN sends the n choices of m (Gateway.StreamN) to w as one OpenAI
// chat.completion.chunk stream, as OpenAI streams n choices, and closes m: every chunk has
// the same id, created and object; each carries one choice, with its index (the choices
// that started numbered 0 to k-1, as CompleteN numbers them: a choice that failed before
// it started leaves no gap) and the model that answers it (the
// same for all unless a fallback answered one); the chunks of different choices interleave
// as they arrive; each choice's first chunk says the role, its last the finish reason;
// tool-call deltas keep their per-choice indices. With includeUsage a last chunk with no
// choices carries the usage summed over the choices; then "data: [DONE]". A choice failing
// mid-stream ends the whole stream as WriteOpenAIStream ends one (an error event, no
// [DONE]) and stops the other choices.
func WriteOpenAIStreamN(w http.ResponseWriter, m *MultiStream, includeUsage bool) error {
	defer m.Close()
	sse := NewSSEWriter(w)
	m.NotifyWait(func() { _ = sse.Flush() })
	first := m.stream(m.Choices()[0])
	base := OpenAIChunk{ID: "chatcmpl-" + first.ResponseMessageID(), Object: "chat.completion.chunk", Created: first.Created().Unix()}
	encs := make(map[int]*openAIChoiceEncoder, len(m.Choices()))
	for pos, i := range m.Choices() {
		st := m.stream(i)
		b := base
		b.Model = st.Provider() + "/" + st.Model()
		b.ServiceTier, b.SystemFingerprint = st.ServiceTier(), st.SystemFingerprint()
		// The wire's index is the choice's place among those that started, 0..k-1 as
		// CompleteN numbers them: a gap would be an empty choice in the SDKs' accumulators.
		encs[i] = newOpenAIChoiceEncoder(st, pos, b)
	}
	for {
		ev, err := m.Recv()
		if errors.Is(err, io.EOF) {
			if includeUsage {
				var sum Response
				for pos, i := range m.Choices() {
					r := m.Response(i)
					if pos == 0 {
						sum.Provider, sum.ModelGroup, sum.TTFT = r.Provider, r.ModelGroup, r.TTFT
					}
					sum.Usage = addUsage(sum.Usage, r.Usage)
					sum.UsageEstimated = sum.UsageEstimated || r.UsageEstimated
					sum.Latency = max(sum.Latency, r.Latency)
					sum.Attempts = append(sum.Attempts, r.Attempts...)
				}
				if err := sse.Buffer("", encs[m.Choices()[0]].usageChunk(openAIUsage(&sum), streamSummary(&sum))); err != nil {
					return err
				}
			}
			return sse.Done()
		}
		if err != nil {
			writeOpenAIStreamError(sse, err)
			return err
		}
		enc := encs[ev.Choice]
		if ev.Done {
			err = enc.end(sse, m.Response(ev.Choice))
		} else {
			err = enc.fragment(sse, ev.Chunk)
		}
		if err != nil {
			return err
		}
	}
}

// writeOpenAIStreamError ends a stream that failed after it started: a data event with an
// OpenAI error object, which the SDKs raise.
func writeOpenAIStreamError(sse *SSEWriter, err error) {
	code, typ := "stream_failed", "upstream_error"
	var param *string
	if errors.Is(err, ErrGuardrailBlocked) {
		// A post_call guardrail refused the streamed answer (see GuardrailError).
		p := "guardrails"
		code, typ, param = "guardrail_violation", "invalid_request_error", &p
	}
	_ = sse.Event("", OpenAIErrorBody{Error: OpenAIErrorObject{Message: err.Error(), Type: typ, Code: &code, Param: param}})
}

// openAIChoiceEncoder writes the chunks of one choice of a chat.completion.chunk stream.
type openAIChoiceEncoder struct {
	st    *ResponseStream
	index int
	base  OpenAIChunk
	text  *fragmentTemplate // made for the second text fragment: a tool-call stream has none
	args  argumentTemplates
	first bool // no chunk of the choice sent yet: the next says the role
	// legacy writes tool calls as the legacy delta.function_call (the request declared
	// functions): the first call only.
	legacy bool
}

func newOpenAIChoiceEncoder(st *ResponseStream, index int, base OpenAIChunk) *openAIChoiceEncoder {
	legacy := st.p != nil && st.p.req != nil && st.p.req.legacyFunctions
	return &openAIChoiceEncoder{st: st, index: index, base: base, first: true, legacy: legacy}
}

// chunk is the choice's chunk with delta d.
func (e *openAIChoiceEncoder) chunk(d OpenAIDelta) OpenAIChunk {
	ck := e.base
	ck.Choices = []OpenAIChunkChoice{{Index: e.index, Delta: d}}
	return ck
}

// logprobsChunk is the choice's chunk with delta d and the log probabilities lp (none when
// nil).
func (e *openAIChoiceEncoder) logprobsChunk(d OpenAIDelta, lp *providers.Logprobs) OpenAIChunk {
	ck := e.chunk(d)
	if lp != nil {
		ck.Choices[0].Logprobs = &OpenAILogprobs{Content: lp.Content}
	}
	return ck
}

// usageChunk is the stream's last chunk: no choices, the usage u.
func (e *openAIChoiceEncoder) usageChunk(u *OpenAIUsage, ext *OpenAIStreamExtension) OpenAIChunk {
	ck := e.base
	ck.Choices = []OpenAIChunkChoice{}
	ck.Usage = u
	ck.Switchyard = ext
	return ck
}

// streamSummary is the "switchyard" member of a stream's usage chunk: what the whole
// answer of a chat.completion says in its own (OpenAIExtension), for a client that streams.
func streamSummary(r *Response) *OpenAIStreamExtension {
	costs := r.Usage.Costs
	attempts := r.Attempts
	if attempts == nil {
		attempts = []Attempt{}
	}
	return &OpenAIStreamExtension{Provider: r.Provider, ModelGroup: r.ModelGroup, Costs: &costs, Latency: r.Latency, TTFT: r.TTFT,
		Attempts: attempts, Continued: r.Continued, Cache: r.Cache}
}

// fragment buffers the chunk of the fragment c.
func (e *openAIChoiceEncoder) fragment(sse *SSEWriter, c *Chunk) error {
	if m := c.Provider + "/" + c.Model; c.Model != "" && m != e.base.Model {
		// Another model continued a broken stream: its chunks name it (the templates
		// hold the old name).
		e.base.Model, e.text, e.args = m, nil, argumentTemplates{}
	}
	e.syncUpstream()
	switch {
	case c.Type == EventReasoning:
		d := *c.Reasoning
		delta := OpenAIDelta{ReasoningContent: d.Text}
		if d.Signature != "" || d.Redacted != "" || d.Encrypted != "" {
			// The block is complete: it comes whole, as the client must send it back
			// (accumulators that keep only a field's last value, as the OpenAI SDKs'
			// stream helpers do, still end up with the block).
			delta.ThinkingBlocks = []OpenAIThinkingBlock{openAIThinkingBlock(e.st.thoughtText(d.Index), surfaceSignature(d.Signature, d.Encrypted, d.EncryptedBy), d.Redacted)}
		}
		if e.first {
			delta.Role = "assistant"
			e.first = false
		}
		return sse.Buffer("", e.chunk(delta))
	case c.Type == EventToolCall && e.legacy:
		if c.ToolCall.Index != 0 {
			return nil // the legacy form has one call per answer
		}
		err := sse.Buffer("", legacyFunctionChunk(e.base, e.index, c.ToolCall, e.first))
		e.first = false
		return err
	case c.Type == EventToolCall && !e.first && c.ToolCall.ID == "" && c.ToolCall.Name == "" && c.ToolCall.ThoughtSignature == "":
		// A piece of a call's arguments: the gateway's hot loop for tool calls, encoded
		// from a template per call index like text fragments.
		if at := e.args.template(e.base, e.index, c.ToolCall.Index); at != nil {
			return sse.BufferData(at.event(c.ToolCall.Arguments))
		}
		return sse.Buffer("", toolCallChunk(e.base, e.index, c.ToolCall, false))
	case c.Type == EventToolCall:
		err := sse.Buffer("", toolCallChunk(e.base, e.index, c.ToolCall, e.first))
		e.first = false
		return err
	case c.Type == EventAudio:
		d := OpenAIDelta{Audio: c.Audio}
		if e.first {
			d.Role = "assistant"
			e.first = false
		}
		return sse.Buffer("", e.chunk(d))
	case e.first:
		e.first = false
		return sse.Buffer("", e.logprobsChunk(OpenAIDelta{Role: "assistant", Content: c.Text}, c.Logprobs))
	case c.Logprobs != nil:
		// The template has no log probabilities: this chunk is encoded whole.
		return sse.Buffer("", e.logprobsChunk(OpenAIDelta{Content: c.Text}, c.Logprobs))
	}
	if e.text == nil {
		if e.text = newFragmentTemplate(e.chunk(OpenAIDelta{Content: fragmentPlaceholder}), 1); e.text == nil {
			return sse.Buffer("", e.chunk(OpenAIDelta{Content: c.Text}))
		}
	}
	return sse.BufferData(e.text.event(c.Text))
}

// syncUpstream gives the choice's chunks from here on the system_fingerprint and
// service_tier its upstream sent last: when it sent them first, changed them, or another
// model continued the answer, the base and the templates (which hold the old values) are
// remade.
func (e *openAIChoiceEncoder) syncUpstream() {
	if e.st.fingerprint != e.base.SystemFingerprint || e.st.tier != e.base.ServiceTier {
		e.base.SystemFingerprint, e.base.ServiceTier, e.text, e.args = e.st.fingerprint, e.st.tier, nil, argumentTemplates{}
	}
}

// end buffers the choice's last chunks: its refusal and citations when it has them, then
// its finish reason.
func (e *openAIChoiceEncoder) end(sse *SSEWriter, resp *Response) error {
	e.syncUpstream()
	if lp := resp.Logprobs; lp != nil && len(lp.Content) > e.st.LogprobsSent() {
		// Tokens that came without text (on the finish event): before the finish chunk.
		ck := e.chunk(OpenAIDelta{})
		ck.Choices[0].Logprobs = &OpenAILogprobs{Content: lp.Content[e.st.LogprobsSent():]}
		if e.first {
			ck.Choices[0].Delta.Role = "assistant"
			e.first = false
		}
		if err := sse.Buffer("", ck); err != nil {
			return err
		}
	}
	if resp.Refusal != "" {
		d := OpenAIDelta{Refusal: resp.Refusal}
		if e.first {
			d.Role = "assistant"
			e.first = false
		}
		ck := e.chunk(d)
		if lp := resp.Logprobs; lp != nil && len(lp.Refusal) > 0 {
			ck.Choices[0].Logprobs = &OpenAILogprobs{Content: []providers.TokenLogprob{}, Refusal: lp.Refusal}
		}
		if err := sse.Buffer("", ck); err != nil {
			return err
		}
	}
	if len(resp.Sources) > 0 {
		if text := resp.Text(); text != "" {
			if err := sse.Buffer("", e.chunk(OpenAIDelta{Annotations: openAIAnnotations(text, resp.Sources)})); err != nil {
				return err
			}
		}
	}
	d := OpenAIDelta{}
	if e.first {
		d.Role = "assistant"
		e.first = false
	}
	ck := e.chunk(d)
	fr := finishReason(resp.FinishReason)
	if e.legacy && fr == "tool_calls" {
		fr = "function_call"
	}
	ck.Choices[0].FinishReason = &fr
	if resp.Continued != nil {
		ck.Switchyard = &OpenAIStreamExtension{Continued: resp.Continued, Attempts: resp.Attempts}
	}
	return sse.Buffer("", ck)
}

// toolCallChunk is the chunk of one tool-call fragment of choice index; the choice's
// first chunk also says the role.
func toolCallChunk(base OpenAIChunk, index int, d providers.ToolCallDelta, first bool) OpenAIChunk {
	ck := base
	ck.Choices = []OpenAIChunkChoice{{Index: index, Delta: OpenAIDelta{ToolCalls: []OpenAIToolCallDelta{openAIToolCallDelta(d)}}}}
	if first {
		ck.Choices[0].Delta.Role = "assistant"
	}
	return ck
}

// argumentTemplates holds, per tool-call index, the template of the chunks that carry a
// piece of that call's arguments (see fragmentTemplate).
type argumentTemplates struct {
	byIndex []*fragmentTemplate
}

// maxArgumentTemplates bounds the templates kept per stream; calls beyond it are encoded
// in full.
const maxArgumentTemplates = 64

// template returns the template for the call index, made on first use; nil when there is
// none (the caller encodes in full).
func (a *argumentTemplates) template(base OpenAIChunk, choice, index int) *fragmentTemplate {
	if index < 0 || index >= maxArgumentTemplates {
		return nil
	}
	for len(a.byIndex) <= index {
		a.byIndex = append(a.byIndex, nil)
	}
	if a.byIndex[index] == nil {
		sample := toolCallChunk(base, choice, providers.ToolCallDelta{Index: index, Arguments: fragmentPlaceholder}, false)
		a.byIndex[index] = newFragmentTemplate(sample, 1)
	}
	return a.byIndex[index]
}

// WriteOpenAIFinalChunk sends a whole answer c as a one-chunk stream: a
// chat.completion.chunk carrying the role, any content and the finish reason, with
// includeUsage a chunk with the usage and no choices, then "data: [DONE]". It serves answers that were decided before any token was streamed (a
// content filter's refusal).
func WriteOpenAIFinalChunk(w http.ResponseWriter, c *OpenAIChatCompletion, includeUsage bool) error {
	sse := NewSSEWriter(w)
	chunk := OpenAIChunk{ID: c.ID, Object: "chat.completion.chunk", Created: c.Created, Model: c.Model,
		ServiceTier: c.ServiceTier, SystemFingerprint: c.SystemFingerprint}
	for _, ch := range c.Choices {
		fr := ch.FinishReason
		d := OpenAIDelta{Role: "assistant"}
		if ch.Message.Content != nil {
			d.Content = *ch.Message.Content
		}
		chunk.Choices = append(chunk.Choices, OpenAIChunkChoice{Index: ch.Index, Delta: d, Logprobs: ch.Logprobs, FinishReason: &fr})
	}
	if err := sse.Event("", chunk); err != nil {
		return err
	}
	if includeUsage && c.Usage != nil {
		// As OpenAI sends it: a last chunk with no choices and the usage.
		u := OpenAIChunk{ID: c.ID, Object: "chat.completion.chunk", Created: c.Created, Model: c.Model,
			ServiceTier: c.ServiceTier, SystemFingerprint: c.SystemFingerprint, Choices: []OpenAIChunkChoice{}, Usage: c.Usage}
		if err := sse.Event("", u); err != nil {
			return err
		}
	}
	return sse.Done()
}

// chatSearchOptions reads chat completions' web_search_options: search_context_size and
// user_location ({"type": "approximate", "approximate": {city, region, country, timezone}}).
func chatSearchOptions(raw json.RawMessage) (*providers.SearchOptions, error) {
	var w struct {
		SearchContextSize string `json:"search_context_size"`
		UserLocation      *struct {
			Approximate *providers.SearchLocation `json:"approximate"`
		} `json:"user_location"`
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, invalid("web_search_options", "must be an object with search_context_size and user_location: %v", err)
	}
	var loc *providers.SearchLocation
	if w.UserLocation != nil {
		loc = w.UserLocation.Approximate
	}
	return searchOptions("web_search_options", w.SearchContextSize, loc, 0, nil)
}

// searchOptions checks and gathers a web search's options (field names the caller's
// field); nil when none is set.
func searchOptions(field, contextSize string, loc *providers.SearchLocation, maxUses int, domains []string) (*providers.SearchOptions, error) {
	switch contextSize {
	case "", "low", "medium", "high":
	default:
		return nil, invalid(field+".search_context_size", `must be "low", "medium" or "high", got %q`, contextSize)
	}
	if maxUses < 0 {
		return nil, invalid(field+".max_uses", "must be at least 1, got %d", maxUses)
	}
	if loc != nil && *loc == (providers.SearchLocation{}) {
		loc = nil
	}
	if contextSize == "" && loc == nil && maxUses == 0 && len(domains) == 0 {
		return nil, nil
	}
	return &providers.SearchOptions{ContextSize: contextSize, Location: loc, MaxUses: maxUses, AllowedDomains: domains}, nil
}

// mockResponseErrors are the mock_response values LiteLLM's completion() turns into a
// failure rather than an answer: refused, as an answer with that text would pass a test
// of the failure.
var mockResponseErrors = []string{"litellm.RateLimitError", "litellm.InternalServerError", "Exception: content_filter_policy", "Exception: mock_streaming_error"}

// mocks reads LiteLLM's testing switches: mock_response's text, and the failure the
// first of mock_testing_fallbacks, mock_testing_context_fallbacks and
// mock_testing_content_policy_fallbacks that is true makes up (as LiteLLM's router
// checks them). A value of another type is refused naming its field.
func (r *OpenAIChatRequest) mocks() (*string, providers.ErrorKind, error) {
	var text *string
	if present(r.MockResponse) {
		var s string
		if err := json.Unmarshal(r.MockResponse, &s); err != nil {
			return nil, 0, invalid("mock_response", "must be a string (the answer's text)")
		}
		for _, e := range mockResponseErrors {
			if strings.HasPrefix(s, e) {
				return nil, 0, invalid("mock_response", "%q (a LiteLLM mock error) is not supported; test fallbacks with mock_testing_fallbacks", e)
			}
		}
		text = &s
	}
	kind := providers.KindUnknown
	for _, f := range []struct {
		name string
		raw  json.RawMessage
		kind providers.ErrorKind
	}{
		{"mock_testing_fallbacks", r.MockTestingFallbacks, providers.KindOverloaded},
		{"mock_testing_context_fallbacks", r.MockTestingContextFallbacks, providers.KindContextLength},
		{"mock_testing_content_policy_fallbacks", r.MockTestingContentPolicyFallbacks, providers.KindContentFilter},
		{"mock_timeout", r.MockTimeout, providers.KindTimeout},
	} {
		if !present(f.raw) {
			continue
		}
		var on bool
		if err := json.Unmarshal(f.raw, &on); err != nil {
			return nil, 0, invalid(f.name, "must be a boolean")
		}
		if on && kind == providers.KindUnknown {
			kind = f.kind
		}
	}
	if text != nil && kind != providers.KindUnknown {
		return nil, 0, invalid("mock_response", "cannot be combined with mock_testing_fallbacks (or its context and content policy variants) or mock_timeout")
	}
	return text, kind, nil
}

// fallbackModels are FallbackModels followed by LiteLLM's fallbacks (model names): nil
// when the request named neither (an empty list when it named an empty one). LiteLLM's
// fallbacks may also be written in its router's format, [{"gpt-4o-mini": ["gpt-4o"]}]
// (its _check_non_standard_fallback_format calls that the standard one): byModel then
// holds them, one list per model (the first entry of a model listed twice, as LiteLLM's
// lookup finds it), for admission to take the entry of the model asked.
func (r *OpenAIChatRequest) fallbackModels() (out []string, byModel map[string][]string, err error) {
	if !present(r.Fallbacks) {
		return r.FallbackModels, nil, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(r.Fallbacks, &items); err != nil {
		return nil, nil, invalid("fallbacks", `must be an array of model names, or of objects each naming a model and its fallbacks: [{"gpt-4o-mini": ["gpt-4o"]}]`)
	}
	out = slices.Clip(r.FallbackModels)
	if out == nil {
		out = []string{} // fallbacks: [] asks for none, not for the key's or the server's
	}
	for i, it := range items {
		field := fmt.Sprintf("fallbacks[%d]", i)
		var name string
		if json.Unmarshal(it, &name) == nil && byModel == nil {
			out = append(out, name)
			continue
		}
		var entry map[string][]string
		if err := json.Unmarshal(it, &entry); err != nil || entry == nil || i > 0 && byModel == nil {
			return nil, nil, invalid(field, `must be a model name, or (every item alike) an object naming a model and its fallbacks: {"gpt-4o-mini": ["gpt-4o"]}; per-fallback objects (model with its own messages) are not supported`)
		}
		if byModel == nil {
			byModel = map[string][]string{}
		}
		for _, m := range slices.Sorted(maps.Keys(entry)) {
			switch list := entry[m]; {
			case strings.TrimSpace(m) == "":
				return nil, nil, invalid(field, "a model must not be empty")
			case len(list) > MaxModels:
				return nil, nil, invalid(fmt.Sprintf("%s[%q]", field, m), "at most %d fallbacks, got %d", MaxModels, len(list))
			case slices.ContainsFunc(list, func(f string) bool { return strings.TrimSpace(f) == "" }):
				return nil, nil, invalid(fmt.Sprintf("%s[%q]", field, m), "a fallback must not be empty")
			default:
				if _, seen := byModel[m]; !seen {
					byModel[m] = slices.Clip(list)
				}
			}
		}
	}
	if len(byModel) > maxWindowFallbackModels {
		return nil, nil, invalid("fallbacks", "at most %d models, got %d", maxWindowFallbackModels, len(byModel))
	}
	return out, byModel, nil
}
