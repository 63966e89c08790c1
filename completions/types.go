package completions

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// ContentBlock is one block of a message's content. Type is "text", or "image" (Image set),
// "file" (File set) or "audio" (Audio set) in a user turn of a stateless request (the
// OpenAI-compatible surfaces and OpenAIChatRequest.ToRequest): the native API and stored
// conversations hold text only.
type ContentBlock struct {
	Type string `json:"type" jsonschema:"required,enum=text"`
	Text string `json:"text" jsonschema:"required"`
	// Image is the block's image when Type is "image".
	Image *providers.Image `json:"-"`
	// File is the block's document (a PDF) when Type is "file".
	File *providers.File `json:"-"`
	// Audio is the block's recording (chat's input_audio) when Type is "audio".
	Audio *providers.Audio `json:"-"`
}

// Message is one turn of a completions conversation.
//
// ToolCalls and ToolCallID exist for the OpenAI-compatible surfaces and library callers
// (the native API has no tool calling, so they are not part of its JSON): an assistant turn
// with ToolCalls may have no Content, and a turn with Role "tool" answers the call
// ToolCallID with its Content (which may be empty).
type Message struct {
	Role    string         `json:"role" jsonschema:"required,enum=system,enum=user,enum=assistant"`
	Content []ContentBlock `json:"content" jsonschema:"required"`
	// ToolCalls are the function calls an assistant turn made.
	ToolCalls []providers.ToolCall `json:"-"`
	// ToolCallID is the call a "tool" turn answers.
	ToolCallID string `json:"-"`
	// Name is the participant's name (OpenAI's messages[].name), for OpenAI-format upstreams.
	Name string `json:"-"`
	// AudioID is the spoken answer an assistant turn was (chat's messages[].audio.id), for
	// OpenAI-format upstreams.
	AudioID string `json:"-"`
	// Reasoning is the reasoning an assistant turn was answered with, as a client sends it
	// back (the thinking blocks of /v1/messages, thinking_blocks on chat completions,
	// Responses reasoning items); only Claude takes it, and only its own signed blocks.
	Reasoning []providers.ReasoningBlock `json:"-"`
}

// TextMessage returns a turn of role ("system", "user" or "assistant") holding text as its
// one content block.
func TextMessage(role, text string) Message {
	return Message{Role: role, Content: []ContentBlock{{Type: "text", Text: text}}}
}

// Text joins the message's text blocks (images, files and recordings are left out).
func (m *Message) Text() string {
	if len(m.Content) == 1 {
		return m.Content[0].Text
	}
	var b strings.Builder
	n := 0
	for _, c := range m.Content {
		if c.Image != nil || c.File != nil || c.Audio != nil {
			continue
		}
		if n > 0 {
			b.WriteString("\n")
		}
		b.WriteString(c.Text)
		n++
	}
	return b.String()
}

// Request is the body of POST /api/v1/completions.
type Request struct {
	// Messages is the conversation so far (after any stored history of ConversationID).
	Messages []Message `json:"messages" jsonschema:"required,minItems=1"`
	// Models are "provider/model" strings; when there is more than one, the gateway's
	// Ranker (if any) orders them, otherwise they are tried in the given order.
	Models []string `json:"models" jsonschema:"required,minItems=1"`
	// FallbackModels are tried, in order, after every model in Models failed.
	FallbackModels []string `json:"fallback_models,omitempty"`
	// ContextWindowFallbacks are the request's own fallbacks for a prompt too long, by
	// model name (LiteLLM's request-body context_window_fallbacks, which the
	// OpenAI-compatible surfaces read), looked up as Scope.ContextWindowFallbacks are.
	// Non-nil, an empty map included, they replace the scope's and the model group's, as
	// LiteLLM's router reads a request's over its own: when the model asked (a member of
	// the group asked) fails with a prompt too long, the models asked after it and the
	// plain fallbacks are left out and the entry for the model asked is tried in their
	// place; with none for it the prompt too long's error stands. FallbackModels still
	// follow. Chat requests only.
	ContextWindowFallbacks map[string][]string `json:"-"`
	// Stream asks for server-sent events.
	Stream bool `json:"stream,omitempty" jsonschema:"default=false"`
	// Temperature is between 0 and 1; nil for the model's preset.
	Temperature *float64 `json:"temperature,omitempty" jsonschema:"minimum=0,maximum=1"`
	// MaxTokens caps generated tokens; 0 for the model's default.
	MaxTokens int `json:"maxTokens,omitempty" jsonschema:"minimum=0"`
	// MaxRetries is how many times a retryable failure is retried on the same model before
	// the next model is tried; nil for the gateway default.
	MaxRetries *int `json:"maxRetries,omitempty" jsonschema:"minimum=0,maximum=10"`
	// Search enables the provider's own real-time web search.
	Search bool `json:"search,omitempty"`
	// ConversationID links the request to an existing conversation of the same caller.
	ConversationID string `json:"conversationId,omitempty" jsonschema:"format=uuid"`
	// FaultPolicy holds the extension fields for timeouts, hedging and content filters.
	FaultPolicy
	// Cache is the request's say over the gateway's response cache (an extension, in
	// LiteLLM's words; see CacheOptions): no-cache, no-store, ttl, s-maxage, namespace,
	// use-cache. nil leaves it to the server.
	Cache *CacheControl `json:"cache,omitempty"`
	// Tags label the request for cost attribution (an extension, LiteLLM's request tags):
	// the usage log keeps them with the request and totals spend per tag. At most MaxTags,
	// each 1-64 characters of letters, digits and . _ : / -.
	Tags []string `json:"tags,omitempty" jsonschema:"maxItems=16"`
	// Guardrails names the opt-in guardrails to run on the request (an extension, LiteLLM's
	// request-body "guardrails"), beside the gateway's default_on ones (see
	// GuardrailConfig); a name the gateway does not configure is a validation error.
	Guardrails []string `json:"guardrails,omitempty"`

	// Tools, ToolChoice, ParallelToolCalls and ResponseFormat are tool calling and
	// structured output, set by the OpenAI-compatible surfaces and library callers; the
	// native API has none of them. They reach every provider in its own wire format (see
	// package providers) and are validated with the rest of the request (schemas with a
	// JSON Schema compiler). Requests using them keep no conversation.
	Tools             []providers.Tool          `json:"-"`
	ToolChoice        *providers.ToolChoice     `json:"-"`
	ParallelToolCalls *bool                     `json:"-"`
	ResponseFormat    *providers.ResponseFormat `json:"-"`
	// TopP and Stop are nucleus sampling and stop sequences (OpenAI's top_p and stop; at
	// most MaxAnyStopSequences, models whose API takes fewer skipped), for the
	// OpenAI-compatible surfaces and library callers; the native API has neither. A library caller that needs OpenAI's temperature range (0-2) builds the
	// request with OpenAIChatRequest.ToRequest.
	TopP *float64 `json:"-"`
	Stop []string `json:"-"`
	// TopK samples from the K likeliest tokens (the Messages surface's top_k; Anthropic and
	// Gemini take it, OpenAI-format upstreams have none).
	TopK *int `json:"-"`
	// OpenAIOptions (seed, penalties, logit_bias, user, reasoning_effort, service_tier,
	// verbosity) come from the OpenAI-compatible surfaces and library callers; see
	// providers.OpenAIOptions for which providers take which.
	providers.OpenAIOptions `json:"-"`
	// modalities and audio ask for a spoken answer (chat's modalities and audio; see
	// providers.Request.Audio).
	modalities []string
	audio      *providers.AudioOutput
	// Thinking asks the models that can reason before answering to do so, and to return
	// their reasoning where the provider shows it (Response.Reasoning); nil for each
	// model's default. The OpenAI-compatible surfaces set it from reasoning_effort or a
	// thinking object, /v1/messages from thinking and output_config.effort; see
	// providers.Thinking for how each provider takes it. Without it, reasoning a model sends
	// unasked (DeepSeek's) is left out of the answer, except on the chat completions surface
	// (reasoning_content, as DeepSeek and LiteLLM return it).
	Thinking *providers.Thinking `json:"-"`
	// Logprobs asks for the log probability of each token of the answer (Response.Logprobs,
	// streamed in Chunk.Logprobs), and TopLogprobs (0 to providers.MaxTopLogprobs, with
	// Logprobs only) for that many likeliest alternatives at each position: OpenAI's
	// logprobs and top_logprobs, set by the OpenAI-compatible surfaces, library callers and
	// the native API (an extension there: Answer.TokenLogprobs answers them).
	// Only models whose adapter gives them are tried (see providers.LogprobsSupporter);
	// with none, the request is a validation error naming logprobs. A stream asking for
	// them is not continued by another model when it breaks (see Continuation).
	Logprobs    bool `json:"logprobs,omitempty" jsonschema:"description=An extension: return the log probability of each token of the answer (OpenAI-format models but OpenAI's reasoning models; and Gemini); only the models that give them are tried\\, a 422 naming logprobs when none of the request's can"`
	TopLogprobs int  `json:"top_logprobs,omitempty" jsonschema:"minimum=0,maximum=20,description=An extension: how many of the likeliest tokens to return at each position with their log probabilities (needs logprobs)"`
	// MockResponse, when set, answers the request with this text without calling any
	// model (LiteLLM's mock_response, for tests): the request is still checked as any other
	// (the key's models, its budget, the pre_call guardrails), the answer comes as the model
	// asked's (a model group's first member) whole or streamed, its usage is estimated and
	// it costs nothing; nothing is charged, no upstream, cache or circuit breaker is touched,
	// and its one attempt is marked Attempt.Mock.
	MockResponse *string `json:"-"`
	// MockFailure, when not KindUnknown, fails the models the request names without calling
	// them (LiteLLM's mock_testing_fallbacks, mock_testing_context_fallbacks,
	// mock_testing_content_policy_fallbacks and mock_timeout: KindOverloaded,
	// KindContextLength, KindContentFilter, KindTimeout; a timeout comes after the wait a
	// silent model would cost, see Gateway.mockFail), so that the fallbacks that failure
	// takes are called for real: a
	// model group's plain fallbacks, its context_window_fallbacks or content_policy_fallbacks,
	// then the request's fallback_models. Each such attempt is an error marked Attempt.Mock,
	// not billed and not counted by the circuit breakers. Hedging is off for such a request.
	MockFailure providers.ErrorKind `json:"-"`

	// maxTemperature is 1 for the native API and 2 for the OpenAI-compatible surface.
	maxTemperature float64
	// userAgent is Scope.UserAgent, for the tag patterns of tag-filtered groups.
	userAgent string
	// inheritedTags is Scope.InheritedTags, for the TagFailOpen of tag-filtered groups.
	inheritedTags []string
	// ephemeral requests (the OpenAI-compatible surface) keep no conversation.
	ephemeral bool
	// unaskedReasoning shows reasoning a model sends though the request asked for none
	// (DeepSeek's, vLLM's): the chat surface's reasoning_content, as those servers and
	// LiteLLM return it. The Messages and Responses surfaces, whose clients get thinking
	// blocks or reasoning items only when they ask (as from Anthropic and OpenAI), and the
	// native API leave it out.
	unaskedReasoning bool
	// legacyFunctions: the chat surface's request declared legacy functions, so its
	// stream writes tool calls as delta.function_call (OpenAIChatRequest.UsesLegacyFunctions),
	// and upstreams are asked for one call (providers.Request.SingleToolCall): the answer
	// carries one only.
	legacyFunctions bool
	// singleToolCall: a library caller of the gateway as a provider (gatewayProvider) reads
	// one tool call of the answer only (its providers.Request.SingleToolCall): upstreams are
	// asked for one, as for legacyFunctions, without the chat surface's function_call writing.
	singleToolCall bool
	// toolAllowList, when set, is an allowed_tools tool choice's list: validateTools keeps
	// only those tools once every declared one has been checked (see allowedtools.go).
	toolAllowList *toolAllowList
	// fieldName, when set, renames the fields of validation errors to the caller's request
	// (a /v1/responses request's input[…] for the chat request's messages[…]).
	fieldName func(string) string
	// fitMaxTokens lowers MaxTokens to each model's catalogued output limit (the Messages
	// surface: Anthropic's clients send a max_tokens of their own models, 32,000 from
	// Claude Code, which other models refuse).
	fitMaxTokens bool
	// group is the model group Models named, when they named one alone (set by the
	// gateway's validation: its routing preferences apply).
	group     *ModelGroup
	groupName string
	// windowFallbacks and policyFallbacks are group's ContextWindowFallbacks (or the
	// scope's, which replace them) and ContentPolicyFallbacks, resolved (set by the
	// gateway's validation; nil when there are none, windowFallbacks also when the request
	// named fallbacks of its own, which go in their place).
	windowFallbacks, policyFallbacks []target
	// windowSwitch says a failure for a prompt too long switches to windowFallbacks
	// (plan.switchFallbacks): the group's context window fallbacks name some, or the
	// scope has context window fallbacks at all (an empty list when none is for the model
	// asked: the prompt too long then ends the models asked and the plain fallbacks).
	windowSwitch bool
	// fallbacksRead and ownFallbacks: whether the request named fallbacks of its own
	// (FallbackModels non-nil when first admitted: admission may run twice for one
	// request), which replace the scope's and the group's plain fallbacks.
	fallbacksRead, ownFallbacks bool
	// scopeReplaces says the scope's Fallbacks replace the group's plain fallbacks;
	// scopeFallbacks are its fallbacks for the model asked, those the scope may call.
	// scopeWindowSet and scopeWindow are the same for its ContextWindowFallbacks (set
	// by admission, for validate).
	// ownWindow says scopeWindow are the request's own ContextWindowFallbacks, its entry
	// windowKey: validate names that entry in an error.
	scopeReplaces, scopeWindowSet, ownWindow bool
	scopeFallbacks, scopeWindow              []string
	windowKey                                string
	// fallbacksByModel is LiteLLM's body fallbacks in its router's format ([{"gpt-4o-mini":
	// ["gpt-4o"]}]): the entry for the model asked joins FallbackModels at admission
	// (addScopeFallbacks: it is looked up as a scope's fallbacks are), which sets
	// fallbacksMapped and clears it; those fallbacks do not go before the fallbacks by
	// kind of failure, as LiteLLM looks at the error's kind first for that format.
	fallbacksByModel map[string][]string
	fallbacksMapped  bool
	// windowEntryAt is the index of each model's entry in the request's
	// context_window_fallbacks list as sent (none for a library caller's map), for errors.
	windowEntryAt map[string]int
	// promptCache asks for the prompt's prefix to be cached where a provider must be told
	// (providers.Request.PromptCache): the Messages surface, when the caller marked any
	// cache_control.
	promptCache bool
	// promptCacheTTL and promptCacheTailTTL are the caller's cache lifetimes ("1h" or "")
	// for the prefix (system, tools) and the conversation, promptCacheToolsTTL the tools'
	// when they are kept longer than the system prompt (providers.Request's).
	promptCacheTTL, promptCacheTailTTL, promptCacheToolsTTL string
	// showSources streams the web pages a provider's own search found (EventSources): the
	// Messages surface, which returns them as web_search_tool_result blocks.
	showSources bool
	// searchIfAvailable offers the provider's own web search to the models that have one
	// and not to the others (a /v1/responses web_search tool, which the model may use but
	// need not), where Search requires it of every model.
	searchIfAvailable bool
	// searchOptions refine the search (the OpenAI-compatible and Messages surfaces' options).
	searchOptions *providers.SearchOptions
	// safetySettings, codeExecution and urlContext: see providers.Request's (Gemini only).
	safetySettings            []providers.SafetySetting
	codeExecution, urlContext bool
	// choices is n for each answer of an n-choice request (CompleteN): with a budget they
	// are admitted together and share the tokens it has left.
	choices int
	// guarded: the pre_call guardrails ran on the request (once for n choices);
	// postGuards are its post_call guardrails.
	guarded    bool
	postGuards []*guardrail
	// conv and history are the stored conversation (ConversationID) the pre_call
	// guardrails loaded and checked, its texts masked as sent upstream (the store keeps
	// them as they were); prepare uses them instead of loading it again.
	conv    *Conversation
	history []StoredMessage
	// masked maps each of the request's own texts a pre_call guardrail masked to what was
	// sent instead (the Responses API stores the masked input items: maskItems).
	masked map[string]string
}

// AssistantMessage is the generated message: Role is always "assistant", Type always "text".
type AssistantMessage struct {
	Role    string         `json:"role" jsonschema:"enum=assistant"`
	Type    string         `json:"type" jsonschema:"enum=text"`
	Content []ContentBlock `json:"content"`
}

func assistantText(text string) AssistantMessage {
	return AssistantMessage{Role: "assistant", Type: "text", Content: []ContentBlock{{Type: "text", Text: text}}}
}

// Costs are USD amounts computed from the price catalogue. PriceKnown is false when the
// catalogue has no price for the model; the amounts are then 0, never a guess. For an
// answer billed over several attempts (a continued answer, a hedged start that lost),
// PriceKnown is false when any of them has no price, and the amounts add up the priced
// ones (each attempt's own usage is in the attempts).
type Costs struct {
	InputTokensCost  float64 `json:"input_tokens_cost"`
	OutputTokensCost float64 `json:"output_tokens_cost"`
	TotalTokensCost  float64 `json:"total_tokens_cost"`
	PriceKnown       bool    `json:"price_known"`
	// SearchCost is the provider's fee for its own web searches (an extension; see
	// Usage.WebSearches), apart from the tokens' total.
	SearchCost float64 `json:"search_cost,omitempty"`
}

// Spent is what the answer cost in all: its tokens and its web searches. Budgets, the
// usage log and the cost metric count it.
func (c Costs) Spent() float64 { return c.TotalTokensCost + c.SearchCost }

// Usage is the token usage of the answer. TotalTokens = PromptTokens + CompletionTokens.
type Usage struct {
	PromptTokens     int `json:"promptTokens"`
	CompletionTokens int `json:"completionTokens"`
	TotalTokens      int `json:"totalTokens"`
	ReasoningTokens  int `json:"reasoningTokens"`
	CachedTokens     int `json:"cachedTokens"`
	// CacheCreationTokens are prompt tokens written to a provider's cache (Anthropic's
	// cache_creation_input_tokens; part of PromptTokens, priced at the write rate).
	CacheCreationTokens int `json:"cacheCreationTokens,omitempty"`
	// CacheCreation1hTokens are the part of CacheCreationTokens written to Anthropic's
	// one-hour cache (a cache_control ttl of "1h"), priced at its own rate.
	CacheCreation1hTokens int `json:"cacheCreation1hTokens,omitempty"`
	// WebSearches counts the provider's own web searches for the answer (an extension),
	// billed per search (Costs.SearchCost).
	WebSearches int `json:"webSearches,omitempty"`
	// PromptAudioTokens are the part of PromptTokens that input_audio parts made, as the
	// upstream reported them, priced at the model's audio input rate.
	PromptAudioTokens int `json:"promptAudioTokens,omitempty"`
	// CompletionAudioTokens are the part of CompletionTokens a spoken answer made, priced
	// at the model's audio output rate.
	CompletionAudioTokens int   `json:"completionAudioTokens,omitempty"`
	Costs                 Costs `json:"costs"`
}

// Attempt reports one upstream call made for a request.
type Attempt struct {
	// Model is the "provider/model" string tried.
	Model string `json:"model"`
	// ModelGroup is the name Model was asked by: the model group it was tried as a member
	// of (the one the request named, or a fallback group after it), else Model itself; ""
	// where the path that tried it does not say (then the request's RequestRecord.ModelGroup
	// is the best guess). Not on the wire; the metrics' deployment id (LiteLLM's model_id).
	ModelGroup string `json:"-"`
	// Outcome is "ok" or "error".
	Outcome string `json:"outcome"`
	// Kind classifies a failure (providers.ErrorKind name, e.g. "rate_limited"); empty on ok.
	Kind string `json:"kind,omitempty"`
	// Error is the failure message; empty on ok.
	Error string `json:"error,omitempty"`
	// Err is the failure itself (a *providers.Error for an upstream failure, a context error
	// for a cancelled call); nil on ok. Not on the wire.
	Err error `json:"-"`
	// Mock marks an attempt that called no model: a failure made up for a request's
	// Request.MockFailure (LiteLLM's mock_testing_fallbacks), or the answer of its
	// Request.MockResponse.
	Mock bool `json:"mock,omitempty"`
	// LatencyMS is how long the attempt took, in milliseconds.
	LatencyMS int64 `json:"latency_ms"`
	// Usage is what the attempt consumed when it was billed and is not the whole answer's
	// only attempt: the part of a continued answer, a hedged start that lost. Estimated
	// says the upstream reported no usage for this attempt and its tokens were estimated:
	// on the answering attempt counted locally with a tokenizer (see
	// providers.EstimateUsage; the answer's usage is then Response.UsageEstimated), on the
	// other parts the prompt from the answering attempt's count and the output as one token
	// per 4 characters.
	Usage     *Usage `json:"usage,omitempty"`
	Estimated bool   `json:"usage_estimated,omitempty"`
	// AnswerBytes is set on a failed attempt whose answer was refused as larger than the
	// cap on an answer's size (providers.ErrResponseTooLarge): the bytes of it read, or
	// the length it announced. The upstream billed that call: Usage is then what the
	// gateway charged for it (the usage the upstream reported, else the prompt's estimate,
	// Estimated).
	AnswerBytes int64 `json:"answer_bytes,omitempty"`
	// charged marks a failed attempt whose call the upstream billed all the same (an
	// answer over the size cap, a ranking refused, part of an answer): Usage is what it
	// was charged, which a request that then fails records as its usage.
	charged bool
	// ContinuedFrom is set on an attempt that continued a broken stream: the character
	// (Unicode code point) offset of the answer it started from.
	ContinuedFrom *int `json:"continued_from,omitempty"`
	// Started is when the attempt began (zero for one skipped without a call); not on the
	// wire, for traces.
	Started time.Time `json:"-"`
	// MaxTokens is the output bound the attempt's call was sent (gen_ai.request.max_tokens
	// of its span): the request's, lowered to the model's catalogued output limit (the
	// Anthropic Messages and Gemini surfaces) or filled in for a thinking request
	// (attemptRequest); 0: none was sent. Set on every attempt that called a model with a
	// chat request; not on the wire, for traces.
	MaxTokens int `json:"-"`
	// SpanID is the span id Options.TraceAttempt reserved for the attempt's span (zero
	// without one, or for an attempt that made no call); not on the wire, for traces.
	SpanID [8]byte `json:"-"`
	// SkippedEvents counts undecodable stream events that could not have held any of the
	// answer and were skipped.
	SkippedEvents int `json:"skipped_events,omitempty"`
}

// LostHedge reports whether a is a hedged start that lost the race (Outcome "cancelled",
// Kind "hedged"): it made a call, but stands for no attempt of its own to LiteLLM's headers
// and metrics.
func (a Attempt) LostHedge() bool { return a.Outcome == OutcomeCancelled && a.Kind == "hedged" }

// Outcomes of an Attempt. "skipped" is a model passed over without a call (its circuit
// breaker is open: Kind "circuit_open"); "cancelled" a hedged start that lost the race
// (Kind "hedged"), or a call or stream its caller left: a client that disconnected (Kind
// "client_gone", also while the call had not answered yet) or closed the stream before its
// end (Kind "closed_early"), or one the server cut with a cause (Kind "cut": its shutdown
// timeout ran out).
const (
	OutcomeOK        = "ok"
	OutcomeError     = "error"
	OutcomeSkipped   = "skipped"
	OutcomeCancelled = "cancelled"
)

// Response is the answer of POST /api/v1/completions, and the final event of a stream.
type Response struct {
	Provider          string           `json:"provider"`
	Model             string           `json:"model"`
	ResponseMessageID string           `json:"responseMessageId" jsonschema:"format=uuid"`
	Message           AssistantMessage `json:"message"`
	ConversationID    string           `json:"conversationId"`
	ConversationTitle string           `json:"conversationTitle"`
	Usage             Usage            `json:"usage"`
	// UsageEstimated says that Usage is not (only) what the upstream reported: an upstream
	// that reported no tokens had them counted locally (providers.EstimateUsage: OpenAI's
	// tokenizer for OpenAI models and a cl100k_base estimate for other families) and Costs
	// priced from that count. The attempts whose usage was estimated have
	// Attempt.Estimated set.
	UsageEstimated bool `json:"usage_estimated,omitempty"`
	// Latency is milliseconds from request received to response complete.
	Latency int64 `json:"latency"`
	// TTFT is milliseconds from request received to the first generated token.
	TTFT int64 `json:"ttft"`
	// FinishReason is the upstream's reason for stopping (e.g. "stop", "length",
	// "tool_calls").
	FinishReason string `json:"finishReason,omitempty"`
	// ToolCalls are the function calls the model made (requests with Tools only).
	ToolCalls []providers.ToolCall `json:"toolCalls,omitempty"`
	// Refusal is the model's explanation when it declined to answer in the requested
	// format (OpenAI's message.refusal).
	Refusal string `json:"refusal,omitempty"`
	// Audio is the spoken answer of an OpenAI audio model (chat's modalities ["text",
	// "audio"]): OpenAI's message.audio. Not on the native API.
	Audio *providers.AudioAnswer `json:"-"`
	// Attempts lists every upstream call made, in order, the last being the one that answered.
	Attempts []Attempt `json:"attempts"`
	// Continued is set when a stream broke mid-answer and another model continued it: the
	// answer is one text, and Usage adds up every attempt that was billed.
	Continued *Continuation `json:"continued,omitempty"`
	// StopSequence is the stop sequence that ended the answer, when the provider says which
	// (Anthropic).
	StopSequence string `json:"stopSequence,omitempty"`
	// masked is the request's texts a pre_call guardrail masked (Request.masked), for the
	// input items a Responses answer is stored with.
	masked map[string]string
	// Reasoning is the reasoning the model showed before its answer (see
	// providers.ReasoningBlock), for the OpenAI-compatible and Messages surfaces; the native
	// API does not return it.
	Reasoning []providers.ReasoningBlock `json:"-"`
	// CodeExecution and URLContextMetadata are Gemini's code execution parts and URL
	// context metadata (see providers.Response), for the Gemini surface; the text has the
	// code and its output as Markdown code blocks for the others.
	CodeExecution      []providers.CodeExecutionPart `json:"-"`
	URLContextMetadata json.RawMessage               `json:"-"`
	// Sources are the web pages the provider's own search found for the answer (the
	// Messages surface returns them as web_search_tool_result blocks).
	Sources []providers.Source `json:"-"`
	// SystemFingerprint and ServiceTier are what an OpenAI-compatible upstream said of the
	// answer (providers.Response's), for the chat completions surface; "" when it did not.
	SystemFingerprint, ServiceTier string `json:"-"`
	// ModelGroup is the model group the request named (Options.ModelGroups), when it named
	// one; Provider and Model say which of its models answered.
	ModelGroup string `json:"modelGroup,omitempty"`
	// Logprobs are the log probabilities of the answer's tokens (its text's and its
	// refusal's) when the request asked for them (Request.Logprobs): never nil then, empty
	// when the upstream gave none; nil when it did not ask. The OpenAI-compatible surfaces
	// answer them in their shapes, the native API as Answer.TokenLogprobs.
	Logprobs *providers.Logprobs `json:"-"`
	// ConversationNotSaved is set when the answer was generated (and billed) but the store
	// could not save the turn (a full disk, a database down): the answer is still returned,
	// and this says the turn is not part of the conversation. ConversationID is then the
	// conversation the request named, or empty for a new one (it was never created); the
	// cause is logged, not returned.
	ConversationNotSaved string `json:"conversationNotSaved,omitempty"`
	// Cache says how the response cache took part (an extension; absent without a cache or
	// for a request that cannot be cached): a hit was answered from it with no model
	// called, its Usage the answer's tokens with costs of 0.
	Cache *CacheStatus `json:"cache,omitempty"`
}

// Answer is the body of a non-streamed POST /api/v1/completions: the Response with the
// chunk fields type ("text") and text (the whole generated text, the one fragment of an
// answer that is not streamed), as the spec's "the final non-streaming response carries
// the full set of fields above" asks.
type Answer struct {
	Type string `json:"type" jsonschema:"enum=text"`
	Text string `json:"text"`
	Response
	// TokenLogprobs are the answer's log probabilities in OpenAI's choices[].logprobs
	// shape (an extension: only when the request asked, with logprobs).
	TokenLogprobs *OpenAILogprobs `json:"logprobs,omitempty" jsonschema:"description=An extension\\, present when the request asked (logprobs): the log probability of each token of the answer in OpenAI's choices[].logprobs shape (content: token\\, logprob\\, bytes\\, top_logprobs; refusal)"`
}

// NewAnswer returns r as the body of a non-streamed answer.
func NewAnswer(r *Response) Answer {
	return Answer{Type: EventText, Text: r.Text(), Response: *r, TokenLogprobs: openAILogprobs(r.Logprobs)}
}

// Text returns the generated text.
func (r *Response) Text() string {
	var b strings.Builder
	for _, c := range r.Message.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

// Chunk is one streamed fragment: text (Type EventText), a fragment of a tool call
// (Type EventToolCall, ToolCall set, Text empty; requests with Tools only) or of the
// model's reasoning (Type EventReasoning, Reasoning set, Text empty), or a piece of a
// spoken answer (Type EventAudio, Audio set, Text empty).
type Chunk struct {
	Provider          string           `json:"provider"`
	Model             string           `json:"model"`
	ResponseMessageID string           `json:"responseMessageId" jsonschema:"format=uuid"`
	Type              string           `json:"type"`
	Text              string           `json:"text"`
	Message           AssistantMessage `json:"message"`
	// ToolCall is the tool-call fragment of an EventToolCall chunk: the first fragment of a
	// call has its ID and Name, later ones pieces of its Arguments.
	ToolCall providers.ToolCallDelta `json:"-"`
	// Reasoning is the reasoning fragment of an EventReasoning chunk (nil on the others: a
	// pointer keeps the text chunks, the hot path, as small as they were).
	Reasoning *providers.ReasoningDelta `json:"-"`
	// Search is the web pages of an EventSources chunk (nil on the others, as Reasoning).
	Search *SearchResults `json:"-"`
	// Logprobs are the log probabilities of an EventText chunk's tokens when the request
	// asked for them (Request.Logprobs) and the upstream gave them with this text; nil
	// otherwise. Tokens that came without text (a refusal's, a last event's) are in the
	// final Response.Logprobs.
	Logprobs *providers.Logprobs `json:"-"`
	// Audio is the piece of a spoken answer of an EventAudio chunk (nil on the others);
	// the final Response.Audio is the whole answer.
	Audio *providers.AudioDelta `json:"-"`
}

// SearchResults are web pages a provider's own search found (an EventSources chunk).
type SearchResults struct {
	Sources []providers.Source
}

// namedFallbacks reports whether r named fallbacks of its own: FallbackModels non-nil (an
// empty list included, which asks for none) when first asked, before anything else is
// known of r. Those replace the scope's and the model group's plain fallbacks, as
// LiteLLM's request fallbacks replace its key's and its router's.
func (r *Request) namedFallbacks() bool {
	if !r.fallbacksRead {
		r.fallbacksRead, r.ownFallbacks = true, r.FallbackModels != nil
	}
	return r.ownFallbacks
}
