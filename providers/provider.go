// Package providers adapts LLM provider wire formats (OpenAI chat completions and its
// compatible presets, OpenAI's Responses API for the models and features only it serves,
// Anthropic Messages, Google Gemini, Amazon Bedrock's Converse API) to one [Provider]
// interface, and
// prices token usage from an embedded catalogue. Tool calling and structured output have
// provider-neutral types ([Tool], [ToolChoice], [ToolCall], [ToolCallDelta],
// [ResponseFormat]); each adapter's doc says how it maps them to its wire format. So does
// reasoning: [Thinking] asks a model to reason, in each provider's own terms, and its
// reasoning comes back as [ReasoningBlock] values (streamed as [ReasoningDelta]), Claude's
// with the signatures it needs to take them back. Adapters whose provider computes
// embeddings (the OpenAI format and Gemini) also implement [Embedder]; the catalogue prices
// embedding models apart ([Catalog.EmbeddingCost]). The OpenAI-format adapter of a provider
// with a rerank API (Cohere, Jina AI, Voyage AI, a self-hosted reranker: Config.Rerank)
// also reranks documents ([Reranker]), priced by the query or the token
// ([Catalog.RerankCost]).
package providers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Message is one turn of a conversation. Role is "system", "user", "assistant" or "tool".
// An assistant turn may carry ToolCalls (its Content may then be empty); a "tool" turn is
// the result of the call ToolCallID, its Content the result text.
//
// A user turn with images has Parts: its text and images in order. Content is then its
// text parts joined (what adapters and counts that take no images see); every adapter
// sends Parts when the turn has them.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
	// Parts is the turn's content with its images, when it has any (user turns only).
	Parts []Part `json:"parts,omitempty"`
	// ToolCalls are the function calls an assistant turn made.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID is the call a "tool" turn answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// Name is the participant's name (OpenAI's messages[].name); only OpenAI-format
	// upstreams take it.
	Name string `json:"name,omitempty"`
	// Reasoning is the reasoning an assistant turn was answered with, as the client sends
	// it back; only Anthropic takes it (its signed blocks, see ReasoningBlock).
	Reasoning []ReasoningBlock `json:"reasoning,omitempty"`
	// AudioID is the spoken answer an assistant turn was (OpenAI's messages[].audio.id,
	// AudioAnswer.ID), sent back so that the model hears it; only OpenAI-format chat
	// completions take it (AudioOutputSupporter).
	AudioID string `json:"audio_id,omitempty"`
}

// Request is a provider-neutral chat request. Model is the provider's own model name
// (the part after "provider/").
type Request struct {
	Model    string
	Messages []Message
	// Temperature is nil for the provider's default.
	Temperature *float64
	// MaxTokens is 0 for the provider's default.
	MaxTokens int
	// TopP is nil for the provider's default nucleus-sampling mass (0..1).
	TopP *float64
	// TopK is nil for the provider's default: sample only from the K likeliest tokens.
	// Anthropic and Gemini take it; OpenAI-format upstreams have no such option.
	TopK *int
	// Stop lists sequences that end the answer when generated (not included in it).
	Stop []string
	// Search asks for the provider's own web search; adapters without one fail with
	// KindBadRequest before calling upstream (see SearchSupporter).
	Search bool
	// SearchOptions refine Search; nil for the provider's defaults.
	SearchOptions *SearchOptions

	// Tools are the functions the model may call (each adapter's doc gives its mapping).
	Tools []Tool
	// ToolChoice is nil for the provider's default (auto when Tools are given).
	ToolChoice *ToolChoice
	// ParallelToolCalls is nil for the provider's default (allowed); false asks for at most
	// one tool call per answer.
	ParallelToolCalls *bool
	// SingleToolCall says the caller reads one tool call of the answer only (OpenAI's
	// legacy functions API). Without a ParallelToolCalls of its own, an adapter then asks
	// for at most one where the upstream and model take a setting for it (see
	// oneToolCallAsked) and leaves it unasked elsewhere, so the request is never refused
	// for it: extra calls are dropped by the caller's surface instead.
	SingleToolCall bool
	// ResponseFormat asks for JSON output; nil (or type "text") for free text.
	ResponseFormat *ResponseFormat
	// OpenAIOptions are the OpenAI API's other request options (seed, penalties, …).
	OpenAIOptions
	// Modalities (["text", "audio"]) and Audio ask OpenAI's audio models
	// (gpt-4o-audio-preview, gpt-audio) for a spoken answer (Response.Audio); only
	// OpenAI-format chat completions take them, other adapters refuse them
	// (AudioOutputSupporter).
	Modalities []string
	Audio      *AudioOutput

	// Thinking asks the model to reason before it answers and to return its reasoning
	// where the provider shows it (Response.Reasoning); nil for the provider's default.
	// See Thinking for how each adapter maps it.
	Thinking *Thinking

	// PromptCache asks adapters whose provider caches a prompt's prefix only where told
	// (Anthropic's cache_control) to mark the stable prefix: the system prompt, the tools
	// and the conversation so far. Providers that cache on their own (OpenAI, Gemini)
	// ignore it.
	PromptCache bool
	// PromptCacheTTL is how long Anthropic keeps the cached prefix (the system prompt and
	// the tools), and PromptCacheTailTTL the conversation so far: "" for the provider's
	// default (5 minutes), or "1h" (cache writes then cost twice the input rate instead of
	// 1.25 times). PromptCacheToolsTTL "1h" keeps the tools an hour while the system prompt
	// is kept PromptCacheTTL (a caller that marked its tools "1h" and its system prompt
	// 5 minutes). Anthropic reads the prompt as tools, system, messages and refuses a
	// longer-lived breakpoint after a shorter-lived one, so a later part kept an hour keeps
	// the parts before it an hour too.
	PromptCacheTTL, PromptCacheTailTTL string
	PromptCacheToolsTTL                string

	// SafetySettings are Gemini's safetySettings (each a harm category and a blocking
	// threshold). Only the Gemini adapter (Gemini and Vertex AI's Gemini models) sends them;
	// other providers apply their own filters and are sent none.
	SafetySettings []SafetySetting

	// CodeExecution and URLContext ask for Gemini's built-in tools: the model runs Python it
	// writes (the answer's executable code and its result come back as CodeExecution parts)
	// and reads the pages at URLs of the prompt. Adapters without them refuse the request
	// before any call (see BuiltinToolSupporter).
	CodeExecution, URLContext bool

	// AssistantPrefix, when not empty, is the beginning of the answer: the model continues
	// it (an assistant prefill), and the answer's text is what comes after it. Only for
	// adapters whose Prefiller.SupportsPrefill is true; others fail with KindBadRequest.
	// Trailing whitespace is dropped from it (Anthropic refuses a prefill ending in one).
	AssistantPrefix string

	// Logprobs asks for the log probability of each token of the answer
	// (Response.Logprobs, Chunk.Logprobs), and TopLogprobs for that many of the likeliest
	// tokens at each position too (0 to MaxTopLogprobs). Only adapters that implement
	// LogprobsSupporter give them (the OpenAI format but OpenAI's reasoning models, Gemini
	// and Vertex AI's Gemini models); Check refuses the others, naming "logprobs".
	Logprobs    bool `json:",omitempty"`
	TopLogprobs int  `json:",omitempty"`
}

// OpenAIOptions are request options the OpenAI API defines beyond the basics; the zero value
// of each leaves the provider's default. OpenAI-format upstreams get them as they are (with
// the OpenAI field names); Gemini takes Seed, FrequencyPenalty and PresencePenalty and
// Anthropic User (as metadata.user_id); the others are ignored by formats without them.
type OpenAIOptions struct {
	Seed             *int64             `json:"seed,omitempty"`
	FrequencyPenalty *float64           `json:"frequency_penalty,omitempty"`
	PresencePenalty  *float64           `json:"presence_penalty,omitempty"`
	LogitBias        map[string]float64 `json:"logit_bias,omitempty"`
	// User identifies the end user to the provider (abuse monitoring).
	User string `json:"user,omitempty"`
	// ReasoningEffort is the reasoning models' effort ("minimal", "low", "medium", "high").
	ReasoningEffort string `json:"reasoning_effort,omitempty"`
	// ServiceTier is OpenAI's processing tier ("auto", "default", "flex", "priority").
	ServiceTier string `json:"service_tier,omitempty"`
	// Verbosity is GPT-5's answer length ("low", "medium", "high").
	Verbosity string `json:"verbosity,omitempty"`
	// SafetyIdentifier (User's successor for abuse monitoring) and PromptCacheKey (which
	// requests share a prompt cache) are OpenAI's; other formats ignore them.
	SafetyIdentifier string `json:"safety_identifier,omitempty"`
	PromptCacheKey   string `json:"prompt_cache_key,omitempty"`
}

// Prefiller is implemented by adapters that can continue a partial answer
// (Request.AssistantPrefix): Anthropic always; OpenAI-format servers configured with a
// Config.Prefill mode (Mistral and OpenRouter presets); not OpenAI's own API or Gemini.
type Prefiller interface {
	SupportsPrefill() bool
}

// Usage counts tokens as the upstream reported them. PromptTokens includes cached prompt
// tokens; CompletionTokens includes reasoning tokens.
type Usage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	ReasoningTokens     int `json:"reasoning_tokens"`
	CachedTokens        int `json:"cached_tokens"`         // prompt tokens read from cache
	CacheCreationTokens int `json:"cache_creation_tokens"` // prompt tokens written to cache
	// CacheCreation1hTokens are the part of CacheCreationTokens written to Anthropic's
	// one-hour cache (Request.PromptCacheTTL), priced at its own rate.
	CacheCreation1hTokens int `json:"cache_creation_1h_tokens,omitempty"`
	// WebSearches counts the searches the provider's own web search made for the answer,
	// which it bills apart from tokens (Claude's web_search requests, OpenAI's web_search
	// calls).
	WebSearches int `json:"web_searches,omitempty"`
	// PromptAudioTokens are the part of PromptTokens that input_audio parts made, as the
	// upstream reports them (OpenAI's prompt_tokens_details.audio_tokens, Gemini's AUDIO
	// promptTokensDetails), priced at the audio input rate.
	PromptAudioTokens int `json:"prompt_audio_tokens,omitempty"`
	// CompletionAudioTokens are the part of CompletionTokens the spoken answer made
	// (OpenAI's completion_tokens_details.audio_tokens), priced at the audio output rate.
	CompletionAudioTokens int `json:"completion_audio_tokens,omitempty"`
}

// Response is a complete, non-streamed answer. With structured output Text is the JSON
// document. FinishReason is "tool_calls" when the answer is ToolCalls.
type Response struct {
	Text string
	// Audio is the spoken answer an audio model gave (OpenAIOptions.Audio), nil otherwise.
	Audio *AudioAnswer
	// ToolCalls are the function calls the model made, in order.
	ToolCalls []ToolCall
	// Refusal is the model's explanation when it declined to answer in the requested
	// format (OpenAI's message.refusal); Text is then empty.
	Refusal      string
	Usage        Usage
	FinishReason string
	// StopSequence is the stop sequence that ended the answer, when the provider says which
	// (Anthropic); FinishReason is then "stop".
	StopSequence string
	// Model is the model name the upstream reported, when it reports one.
	Model string
	// Sources are the web pages the provider's own web search found for the answer
	// (Claude's web_search_tool_result, OpenAI's url_citation annotations), in order.
	Sources []Source
	// Reasoning is the reasoning the model showed before its answer, in order (Claude's
	// thinking blocks, Gemini's thought summaries, the reasoning_content of
	// OpenAI-compatible servers that return one).
	Reasoning []ReasoningBlock
	// CodeExecution are the code Gemini's code execution tool ran and its results, in the
	// order of the answer; Text holds each rendered as a Markdown code block (as LiteLLM
	// does) at the byte range [Start, End) the part gives.
	CodeExecution []CodeExecutionPart
	// URLContextMetadata is Gemini's urlContextMetadata (the pages its URL context tool
	// read, each with its retrieval status) as Gemini sent it; nil without one.
	URLContextMetadata json.RawMessage
	// SystemFingerprint and ServiceTier are an OpenAI-compatible upstream's
	// system_fingerprint and service_tier, when it sent them as strings; "" otherwise.
	SystemFingerprint, ServiceTier string
	// Logprobs are the log probabilities of the answer's tokens, when Request.Logprobs
	// asked for them and the upstream gave them; nil otherwise.
	Logprobs *Logprobs
}

// CodeExecutionPart is an executableCode part (Language and Code) or a codeExecutionResult
// part (Outcome and Output) of a Gemini answer; Start and End are the byte range of its
// rendering in Response.Text.
type CodeExecutionPart struct {
	Start, End int
	Language   string
	Code       string
	Outcome    string
	Output     string
	// Result says the part is a codeExecutionResult.
	Result bool
}

// Chunk is one piece of a streamed answer. Usage is set on the chunk that carries it
// (usually the last).
type Chunk struct {
	Text string
	// ToolCalls are fragments of tool calls (see ToolCallDelta), in order. The slice may
	// be reused by the stream: it is valid until the next Recv.
	ToolCalls []ToolCallDelta
	// Refusal is a piece of the model's refusal (OpenAI's delta.refusal).
	Refusal      string
	Usage        *Usage
	FinishReason string
	// StopSequence is set with FinishReason when a stop sequence ended the answer and the
	// provider says which (Anthropic).
	StopSequence string
	// Reasoning is a fragment of the model's reasoning; a chunk that has one has no Text,
	// ToolCalls or Refusal.
	Reasoning *ReasoningDelta
	// Sources are web pages the provider's own search found (Response.Sources), as they come.
	Sources []Source
	// SystemFingerprint and ServiceTier are the system_fingerprint and service_tier of an
	// OpenAI-compatible upstream's chunk, when it sent them as strings; "" otherwise (and
	// from every other provider).
	SystemFingerprint, ServiceTier string
	// Logprobs are the log probabilities of the tokens of this chunk's Text and Refusal,
	// when Request.Logprobs asked for them; nil otherwise.
	Logprobs *Logprobs
	// Audio is a piece of a spoken answer (Request.Audio; OpenAI's delta.audio), nil on
	// chunks without one.
	Audio *AudioDelta
}

// Source is a web page a provider's own web search found for an answer.
type Source struct {
	URL   string `json:"url"`
	Title string `json:"title,omitempty"`
}

// Stream yields the chunks of a streamed answer.
type Stream interface {
	// Recv returns the next chunk. It returns io.EOF only after the upstream ended the stream
	// properly (its end marker was seen); a cut, stalled or malformed stream returns an *Error.
	Recv() (Chunk, error)
	// Close releases the connection; it is safe to call more than once.
	Close() error
}

// PromptUsageReporter is implemented by streams whose provider counts the prompt's tokens
// at the stream's start (Anthropic's message_start), before the answer's usage comes with
// its end: PromptUsage returns that usage (prompt and cache counts) once it is known.
type PromptUsageReporter interface {
	PromptUsage() (Usage, bool)
}

// Provider is one upstream LLM API.
type Provider interface {
	// Name is the provider prefix used in "provider/model" strings.
	Name() string
	// Complete returns a full response. Failures are *Error values.
	Complete(ctx context.Context, req *Request) (*Response, error)
	// Stream starts a streamed response. Failures are *Error values.
	Stream(ctx context.Context, req *Request) (Stream, error)
}

// ErrorKind classifies an upstream failure so callers can decide retry vs fallback.
type ErrorKind int

// The kinds of upstream failure.
const (
	KindUnknown       ErrorKind = iota
	KindRateLimited             // 429; RetryAfter may be set
	KindOverloaded              // 5xx, 529, "overloaded"
	KindTimeout                 // no response, or stream stalled, within the deadline
	KindConnection              // connection refused or reset
	KindBadRequest              // 400/404/422 that retrying will not fix
	KindAuth                    // 401/403
	KindContextLength           // prompt too long for the model
	KindContentFilter           // blocked by safety or recitation filters
	KindStreamBroken            // stream ended without its end marker or sent a malformed chunk
	KindModelNotFound           // 404: the provider does not know the model
	KindQuotaExceeded           // the account's billing quota or credit is spent (OpenAI's insufficient_quota)
	// KindBadResponse: a whole answer (HTTP 200) whose content the adapter refuses (a
	// ranking with too few or repeated results, embeddings with missing vectors, an answer
	// past the size an adapter reads: ErrResponseTooLarge). Not
	// retried on the same model (it was billed, and would likely answer the same), but
	// another model of a group is tried.
	KindBadResponse
)

var kindNames = map[ErrorKind]string{
	KindUnknown: "unknown", KindRateLimited: "rate_limited", KindOverloaded: "overloaded",
	KindTimeout: "timeout", KindConnection: "connection", KindBadRequest: "bad_request",
	KindAuth: "auth", KindContextLength: "context_length", KindContentFilter: "content_filter",
	KindStreamBroken: "stream_broken", KindModelNotFound: "model_not_found", KindQuotaExceeded: "quota_exceeded",
	KindBadResponse: "bad_response",
}

// String returns the kind's snake_case name.
func (k ErrorKind) String() string {
	if s, ok := kindNames[k]; ok {
		return s
	}
	return fmt.Sprintf("kind(%d)", int(k))
}

// ParseErrorKind returns the kind whose String is name; KindUnknown and false when no kind
// has that name.
func ParseErrorKind(name string) (ErrorKind, bool) {
	for k, n := range kindNames {
		if n == name {
			return k, true
		}
	}
	return KindUnknown, false
}

// Retryable reports whether the same request may succeed if tried again.
func (k ErrorKind) Retryable() bool {
	switch k {
	case KindRateLimited, KindOverloaded, KindTimeout, KindConnection, KindStreamBroken, KindUnknown:
		return true
	}
	return false
}

// Error is a classified upstream failure.
type Error struct {
	Provider   string
	Model      string
	Kind       ErrorKind
	StatusCode int           // HTTP status, 0 when none was received
	RetryAfter time.Duration // from Retry-After, 0 when absent
	Message    string        // upstream's message, trimmed; never contains the API key
	// Param is the request field the upstream named as wrong (OpenAI's error.param), when
	// it named one.
	Param string
	// Code is the upstream's own error code (OpenAI's error.code, such as
	// "invalid_value"), when it gave one as a string.
	Code string
	Err  error // underlying cause, if any
	// Usage is what the upstream reported with a failure it still bills (a response its
	// content filter blocked; the batches of an embeddings request answered before one
	// failed); nil when it reported none. UsageEstimated says it was counted locally.
	Usage          *Usage
	UsageEstimated bool
	// RerankUsage is what the upstream billed a rerank call whose answer was refused
	// (KindBadResponse), when the answer said; nil otherwise.
	RerankUsage *RerankUsage
	// AnswerBytes is, for an answer refused as larger than the cap an adapter reads
	// (ErrResponseTooLarge), how many bytes of it were read, or the length it announced
	// when that was larger (then none was read); 0 otherwise. The upstream made (and
	// billed) that answer: the gateway charges its prompt.
	AnswerBytes int64
}

// Error formats the failure as "provider/model: kind (HTTP status): message".
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s/%s: %s", e.Provider, e.Model, e.Kind)
	if e.StatusCode != 0 {
		fmt.Fprintf(&b, " (HTTP %d)", e.StatusCode)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	} else if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

// Retryable reports whether the failure is worth retrying on the same model.
func (e *Error) Retryable() bool { return e.Kind.Retryable() }

// KindOf returns the kind of err if it is (or wraps) an *Error, else KindUnknown.
func KindOf(err error) ErrorKind {
	var pe *Error
	if errors.As(err, &pe) {
		return pe.Kind
	}
	return KindUnknown
}

// ErrNotConfigured is matched by the *Error of a call to a provider that has no API key:
// nothing was sent.
var ErrNotConfigured = errors.New("providers: provider not configured")

// ErrUnknownProvider means a "provider/model" string names no configured provider.
var ErrUnknownProvider = errors.New("providers: unknown provider")

// ErrBadModel means a model string is not of the form "provider/model".
var ErrBadModel = errors.New("providers: model must be provider/model")

// ParseModel splits "provider/model" at the first slash. The model part may itself contain
// slashes (e.g. "openrouter/meta-llama/llama-3-8b").
func ParseModel(s string) (provider, model string, err error) {
	p, m, ok := strings.Cut(s, "/")
	if !ok || p == "" || m == "" || strings.TrimSpace(s) != s {
		return "", "", fmt.Errorf("%w: %q", ErrBadModel, s)
	}
	return p, m, nil
}

// SearchOptions refine a provider's own web search (Request.Search). Each adapter passes
// what its API takes and leaves the rest: OpenAI the context size, the location and (on its
// Responses API) the allowed domains; Anthropic the location, the number of searches and
// the allowed or blocked domains; Gemini's Google Search takes none.
type SearchOptions struct {
	// ContextSize is how much of the pages found the model reads: "low", "medium" or
	// "high" (OpenAI's search_context_size); "" for the provider's default.
	ContextSize string
	// Location is where the user is, to localise results; nil for none.
	Location *SearchLocation
	// MaxUses caps the searches of one answer (Anthropic's max_uses); 0 for the
	// adapter's default.
	MaxUses int
	// AllowedDomains keeps the search to these sites; empty for all.
	AllowedDomains []string
	// BlockedDomains keeps the search off these sites (Anthropic's blocked_domains; OpenAI
	// has no such option, so an OpenAI model refuses a request that sets it).
	BlockedDomains []string
	// Required makes the model search before it answers (a Responses tool_choice of a web
	// search tool): Claude is forced to call its web_search tool, OpenAI's Responses API
	// its web_search; a provider that cannot be made to (Gemini) is offered its search.
	Required bool
}

// SearchLocation is a user's approximate location for a web search: any field may be
// empty. Country is a two-letter ISO code, Timezone an IANA name.
type SearchLocation struct {
	City     string `json:"city,omitempty"`
	Region   string `json:"region,omitempty"`
	Country  string `json:"country,omitempty"`
	Timezone string `json:"timezone,omitempty"`
}

// approximate is l as OpenAI's Responses API and Anthropic take it: {"type":
// "approximate", "city": …} without the empty fields.
func (l *SearchLocation) approximate() map[string]string {
	loc := map[string]string{"type": "approximate"}
	for k, v := range map[string]string{"city": l.City, "region": l.Region, "country": l.Country, "timezone": l.Timezone} {
		if v != "" {
			loc[k] = v
		}
	}
	return loc
}
