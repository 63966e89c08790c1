package providers

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
)

// openAIMaxStop is the most stop sequences OpenAI's own API takes.
const openAIMaxStop = 4

// DefaultOpenAIBaseURL is the OpenAI API root used when Config.BaseURL is empty.
const DefaultOpenAIBaseURL = "https://api.openai.com/v1"

// OpenAI speaks the OpenAI chat-completions wire format (POST {base}/chat/completions,
// Bearer auth, SSE "data:" lines ending with "data: [DONE]"). It serves OpenAI itself, the
// OpenAI-compatible presets and any compatible server. On OpenAI's own API it calls the
// Responses API (POST {base}/responses) instead for the models only that API serves, for
// web search, for reasoning asked to be shown and for encrypted reasoning given back (see
// ResponsesMode and responsesBody).
//
// Thinking: on OpenAI's own API (see ownAPI) Request.Thinking becomes reasoning_effort for
// its reasoning models (o1, o3, o4, gpt-5; not o1-mini, o1-preview or the -chat models)
// when the request gives no ReasoningEffort of its own (see openAIReasoningEffort), and
// those models get no temperature, top_p, penalties or logit_bias but their defaults, the
// only ones they take (openAIReasoningModel). OpenRouter gets Thinking as its reasoning
// object (an effort, or a budget as max_tokens), which it maps to each model's own; other
// upstreams get nothing from it, since their reasoning options differ. OpenAI does not
// return its reasoning in chat completions, but compatible servers do, as a string beside
// the content: reasoning_content (DeepSeek, vLLM) or reasoning (OpenRouter, Groq, Ollama,
// newer vLLM); it becomes Response.Reasoning (one block, reasoning_content preferred when
// both are there) or, streamed, Chunk.Reasoning fragments (of block 0, or a later block
// once reasoning comes back after text: reasoningBlocks), each relayed before the text of
// the same event. Message.Reasoning is never sent: the format has no field for it and
// DeepSeek refuses reasoning_content in its input. parallel_tool_calls is left out for the
// o-series models, which refuse it (see openAIParallelToolCalls).
type OpenAI struct {
	ep      endpoint
	baseURL string
	// ownAPI: the upstream is OpenAI's own API, the only one reasoning_effort is derived
	// for from Request.Thinking. It is told by the provider's name, "openai" (the preset,
	// also behind a proxy that overrides its base URL, as searchModels is), or by the
	// default base URL (a provider of another name configured without one).
	ownAPI bool
	// openRouter: the upstream is OpenRouter (the preset's name or its host), which takes
	// Request.Thinking as its reasoning object.
	openRouter bool
	// parallelToolCalls: a compatible upstream known to take parallel_tool_calls (see
	// takesParallelToolCalls), sent Request.SingleToolCall as OpenAI's own API is.
	parallelToolCalls bool
	// searchModels reports whether a model accepts web_search_options (OpenAI's
	// *-search-preview models); nil means no model does.
	searchModels func(model string) bool
	// noSummaries: OpenAI refused this organisation a reasoning summary (it gives them to
	// verified organisations only); none is asked any more (see startResponses).
	noSummaries atomic.Bool
	// azure is set for Azure OpenAI (see Azure): its URLs, auth header and the models its
	// deployments run; nil for every other upstream.
	azure *azureRoute
}

// url is the address of an operation (path: "/chat/completions", "/embeddings", …) for
// model: path joined to the base URL's path (its query kept, operationURL), or Azure's
// deployment URL.
func (o *OpenAI) url(path, model string) string {
	if o.azure != nil {
		return o.azure.url(o.baseURL, path, model)
	}
	return operationURL(o.baseURL, path)
}

// setAuth sets the request's credentials for model: Bearer with the API key (when one is
// set), or Azure's (which may fetch an Entra ID token with ctx; its failure is the
// call's *Error).
func (o *OpenAI) setAuth(ctx context.Context, model string, h http.Header) error {
	switch {
	case o.azure != nil:
		return o.azure.setAuth(ctx, o.ep.cfg.Name, model, h, o.ep.cfg.APIKey)
	case o.ep.cfg.APIKey != "":
		h.Set("Authorization", "Bearer "+o.ep.cfg.APIKey)
	}
	return nil
}

// family is the OpenAI model name model runs, for the decisions made by model family
// (reasoning models, efforts): model itself, or the model an Azure deployment runs when
// its configuration says (AzureConfig.BaseModels).
func (o *OpenAI) family(model string) string {
	if o.azure != nil {
		return o.azure.family(model)
	}
	return model
}

// NewOpenAI returns an OpenAI-format adapter.
func NewOpenAI(cfg Config) *OpenAI {
	if cfg.Name == "" {
		cfg.Name = "openai"
	}
	base := strings.TrimRight(cfg.BaseURL, "/")
	if base == "" {
		base = DefaultOpenAIBaseURL
	}
	if cfg.MaxTokensField == "" {
		cfg.MaxTokensField = "max_tokens"
	}
	o := &OpenAI{ep: newEndpoint(cfg), baseURL: base, ownAPI: cfg.Name == "openai" || base == DefaultOpenAIBaseURL,
		openRouter: cfg.Name == "openrouter" || strings.Contains(base, "openrouter.ai"), parallelToolCalls: takesParallelToolCalls(cfg.Name, base)}
	if cfg.Name == "openai" {
		o.searchModels = func(m string) bool { return strings.Contains(m, "search-preview") || strings.Contains(m, "search-api") }
	}
	return o
}

// Name returns the provider prefix.
func (o *OpenAI) Name() string { return o.ep.cfg.Name }

// unnamed is Config.Unnamed (IsNamed).
func (o *OpenAI) unnamed() bool { return o.ep.cfg.Unnamed }

// Configured reports whether an API key is set or the provider needs none.
func (o *OpenAI) Configured() bool {
	return o.ep.missing == "" && (o.ep.cfg.APIKey != "" || o.ep.cfg.KeyOptional)
}

// BaseURL returns the endpoint root requests go to.
func (o *OpenAI) BaseURL() string { return o.baseURL }

// SupportsPrefill implements Prefiller: true when Config.Prefill names a mode (and the
// adapter does not speak the Responses API to every model, which cannot continue one).
func (o *OpenAI) SupportsPrefill() bool {
	return o.ep.cfg.Prefill != PrefillNone && o.ep.cfg.ResponsesAPI != ResponsesAlways
}

// SupportsSearch reports whether model has a native web search on this provider: OpenAI's
// search-preview models through chat completions' web_search_options, and on OpenAI's own
// API the models its Responses API gives the web_search tool (see openAIResponsesSearch),
// which a request with Search is then sent through.
func (o *OpenAI) SupportsSearch(model string) bool {
	return o.searchModels != nil && o.searchModels(model) || o.responsesSearch(model)
}

// responsesSearch reports whether model searches through the Responses API's web_search
// tool here: on OpenAI's own API (or one configured to speak the Responses API), not for a
// search-preview model, which searches through chat completions.
func (o *OpenAI) responsesSearch(model string) bool {
	if o.azure != nil {
		return false // Azure's Responses API has no web search
	}
	if o.ep.cfg.ResponsesAPI == ResponsesNever || !o.ownAPI && o.ep.cfg.ResponsesAPI != ResponsesAlways {
		return false
	}
	return (o.searchModels == nil || !o.searchModels(model)) && openAIResponsesSearch(model)
}

// openAIMessage is a request message; content is null for an assistant turn that only
// called tools, and a list of parts for a turn with images.
type openAIMessage struct {
	Role       string           `json:"role"`
	Content    any              `json:"content"` // *string, nil or []openAIPart
	ToolCalls  []openAIToolCall `json:"tool_calls,omitempty"`
	ToolCallID string           `json:"tool_call_id,omitempty"`
	Name       string           `json:"name,omitempty"`
	Prefix     bool             `json:"prefix,omitempty"` // PrefillPrefix
	// Audio names the spoken answer an assistant turn was (Message.AudioID).
	Audio *openAIAudioRef `json:"audio,omitempty"`
}

// openAIAudioRef is an assistant turn's earlier spoken answer, by id.
type openAIAudioRef struct {
	ID string `json:"id"`
}

// openAIPart is a content part: text, image_url, file or input_audio.
type openAIPart struct {
	Type       string          `json:"type"`
	Text       *string         `json:"text,omitempty"`
	ImageURL   *openAIImageURL `json:"image_url,omitempty"`
	File       *openAIFile     `json:"file,omitempty"`
	InputAudio *Audio          `json:"input_audio,omitempty"`
}

type openAIFile struct {
	FileData string `json:"file_data"`
	Filename string `json:"filename"`
}

type openAIImageURL struct {
	URL    string `json:"url"`
	Detail string `json:"detail,omitempty"`
}

func openAIParts(parts []Part) []openAIPart {
	out := make([]openAIPart, len(parts))
	for i := range parts {
		if img := parts[i].Image; img != nil {
			out[i] = openAIPart{Type: "image_url", ImageURL: &openAIImageURL{URL: img.URL, Detail: img.Detail}}
		} else if f := parts[i].File; f != nil {
			name := f.Filename
			if name == "" {
				name = "document.pdf" // OpenAI requires one with file_data
			}
			out[i] = openAIPart{Type: "file", File: &openAIFile{FileData: f.URL, Filename: name}}
		} else if a := parts[i].Audio; a != nil {
			out[i] = openAIPart{Type: "input_audio", InputAudio: a}
		} else {
			out[i] = openAIPart{Type: "text", Text: &parts[i].Text}
		}
	}
	return out
}

type openAIToolCall struct {
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type openAITool struct {
	Type     string             `json:"type"`
	Function openAIFunctionDecl `json:"function"`
}

type openAIFunctionDecl struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	Strict      bool            `json:"strict,omitempty"`
}

type openAIResponseFormat struct {
	Type       string            `json:"type"`
	JSONSchema *openAIJSONSchema `json:"json_schema,omitempty"`
}

type openAIJSONSchema struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Schema      json.RawMessage `json:"schema,omitempty"`
	Strict      bool            `json:"strict,omitempty"`
}

type openAIStreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// openAIRequest is the chat-completions request body, except the output-token limit whose
// openAIWebSearchOptions is chat completions' web_search_options (search models).
type openAIWebSearchOptions struct {
	SearchContextSize string              `json:"search_context_size,omitempty"`
	UserLocation      *openAIUserLocation `json:"user_location,omitempty"`
}

// openAIUserLocation is web_search_options' user_location.
type openAIUserLocation struct {
	Type        string         `json:"type"` // "approximate"
	Approximate SearchLocation `json:"approximate"`
}

// field name varies by preset (see body).
type openAIRequest struct {
	Model            string                  `json:"model"`
	Messages         []openAIMessage         `json:"messages"`
	Temperature      *float64                `json:"temperature,omitempty"`
	TopP             *float64                `json:"top_p,omitempty"`
	Stop             []string                `json:"stop,omitempty"`
	Stream           bool                    `json:"stream,omitempty"`
	StreamOptions    *openAIStreamOptions    `json:"stream_options,omitempty"`
	WebSearchOptions *openAIWebSearchOptions `json:"web_search_options,omitempty"`
	Tools            []openAITool            `json:"tools,omitempty"`
	// ToolChoice is "none", "auto", "required" or {"type":"function","function":{"name":…}}.
	ToolChoice        any                   `json:"tool_choice,omitempty"`
	ParallelToolCalls *bool                 `json:"parallel_tool_calls,omitempty"`
	ResponseFormat    *openAIResponseFormat `json:"response_format,omitempty"`
	// PrefillContinueFinal (vLLM).
	ContinueFinalMessage bool  `json:"continue_final_message,omitempty"`
	AddGenerationPrompt  *bool `json:"add_generation_prompt,omitempty"`
	// Reasoning is OpenRouter's reasoning object (Request.Thinking there).
	Reasoning *openRouterReasoning `json:"reasoning,omitempty"`
	// Logprobs and TopLogprobs ask for the answer's log probabilities (Request.Logprobs).
	Logprobs    bool `json:"logprobs,omitempty"`
	TopLogprobs *int `json:"top_logprobs,omitempty"`
	// Modalities and Audio ask for a spoken answer (Request.Audio).
	Modalities []string     `json:"modalities,omitempty"`
	Audio      *AudioOutput `json:"audio,omitempty"`
	OpenAIOptions
}

// openRouterReasoning is OpenRouter's reasoning request: an effort or a token budget, which
// it maps to each model's own (Claude's thinking, Gemini's budget, OpenAI's effort).
type openRouterReasoning struct {
	Effort    string `json:"effort,omitempty"`
	MaxTokens int    `json:"max_tokens,omitempty"`
}

// body encodes the request: a struct rather than a map (no reflection over map keys, no
// sorting), with the max-tokens field, whose name depends on the preset, appended.
// toolCallID is id as the server takes it: with Config.ShortToolCallIDs, 9 letters and
// digits (an id already of that form unchanged, any other a hash of it, so a call and its
// result keep matching).
func (o *OpenAI) toolCallID(id string) string {
	if !o.ep.cfg.ShortToolCallIDs || id == "" || shortToolCallID(id) {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	const digits = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	out := make([]byte, 9)
	for i := range out {
		out[i] = digits[int(sum[i])%len(digits)]
	}
	return string(out)
}

// shortToolCallID reports whether id is 9 ASCII letters and digits.
func shortToolCallID(id string) bool {
	if len(id) != 9 {
		return false
	}
	for i := range len(id) {
		c := id[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}

func (o *OpenAI) body(req *Request, stream bool) ([]byte, error) {
	msgs := make([]openAIMessage, len(req.Messages))
	for i := range req.Messages {
		m := &req.Messages[i]
		msgs[i] = openAIMessage{Role: m.Role, Content: &m.Content, ToolCallID: o.toolCallID(m.ToolCallID), Name: m.Name}
		if len(m.Parts) > 0 {
			msgs[i].Content = openAIParts(m.Parts)
		}
		if m.AudioID != "" {
			msgs[i].Audio = &openAIAudioRef{ID: m.AudioID}
			if m.Content == "" {
				msgs[i].Content = nil // OpenAI's form of a spoken turn: content null
			}
		}
		if len(m.ToolCalls) > 0 {
			if m.Content == "" {
				msgs[i].Content = nil
			}
			msgs[i].ToolCalls = make([]openAIToolCall, len(m.ToolCalls))
			for j, c := range m.ToolCalls {
				tc := &msgs[i].ToolCalls[j]
				tc.ID, tc.Type = o.toolCallID(c.ID), "function"
				tc.Function.Name, tc.Function.Arguments = c.Name, c.Arguments
			}
		}
	}
	b := openAIRequest{Model: req.Model, Messages: msgs, Temperature: req.Temperature, TopP: req.TopP, Stop: req.Stop,
		OpenAIOptions: req.OpenAIOptions, Modalities: req.Modalities, Audio: req.Audio}
	fam := o.family(req.Model)
	if o.ownAPI && openAIReasoningModel(fam) {
		// OpenAI's reasoning models refuse sampling settings other than their defaults (a
		// request that falls back to one from GPT-4o, or is routed there): left out, as
		// LiteLLM's drop_params does.
		if t := b.Temperature; t != nil && *t != 1 {
			b.Temperature = nil
		}
		if p := b.TopP; p != nil && *p != 1 {
			b.TopP = nil
		}
		b.PresencePenalty, b.FrequencyPenalty, b.LogitBias = nil, nil, nil
	}
	if req.Thinking != nil && b.ReasoningEffort == "" && o.ownAPI {
		b.ReasoningEffort = openAIReasoningEffort(fam, req.Thinking) // b's copy: req is left as it was
	}
	if t := req.Thinking; t != nil && b.ReasoningEffort == "" && o.openRouter {
		if t.BudgetTokens > 0 {
			b.Reasoning = &openRouterReasoning{MaxTokens: t.BudgetTokens}
		} else {
			b.Reasoning = &openRouterReasoning{Effort: openRouterEffort(t.effort())}
		}
	}
	if b.ReasoningEffort != "" && o.ownAPI {
		if openAIRefusesReasoningEffort(fam) {
			// A request for effort that falls back to (or routes to) a model without
			// reasoning: OpenAI refuses the field there, and the answer needs no effort
			// (drop_params).
			b.ReasoningEffort = ""
		} else {
			b.ReasoningEffort = openAIEffort(fam, b.ReasoningEffort)
		}
	}
	if req.AssistantPrefix != "" {
		prefix := prefillText(req.AssistantPrefix)
		m := openAIMessage{Role: "assistant", Content: &prefix}
		switch o.ep.cfg.Prefill {
		case PrefillPrefix:
			m.Prefix = true
		case PrefillContinueFinal:
			no := false
			b.ContinueFinalMessage, b.AddGenerationPrompt = true, &no
		}
		b.Messages = append(b.Messages, m)
	}
	openAITools(&b, req)
	b.ParallelToolCalls = o.openAIParallelToolCalls(req, fam)
	if req.Logprobs {
		b.Logprobs = true
		if req.TopLogprobs > 0 {
			top := req.TopLogprobs
			b.TopLogprobs = &top
		}
	}
	if req.Search {
		b.WebSearchOptions = &openAIWebSearchOptions{}
		if o := req.SearchOptions; o != nil {
			b.WebSearchOptions.SearchContextSize = o.ContextSize
			if o.Location != nil {
				b.WebSearchOptions.UserLocation = &openAIUserLocation{Type: "approximate", Approximate: *o.Location}
			}
		}
	}
	if stream {
		b.Stream = true
		if !o.ep.cfg.OmitStreamOptions {
			b.StreamOptions = &openAIStreamOptions{IncludeUsage: true}
		}
	}
	payload, err := json.Marshal(b)
	if err != nil || req.MaxTokens <= 0 {
		return payload, err
	}
	field, err := json.Marshal(o.ep.cfg.MaxTokensField)
	if err != nil {
		return nil, err
	}
	payload = append(payload[:len(payload)-1], ',') // drop the closing brace
	payload = append(payload, field...)
	payload = append(payload, ':')
	payload = strconv.AppendInt(payload, int64(req.MaxTokens), 10)
	return append(payload, '}'), nil
}

// openAIReasoningEffort is the reasoning_effort that carries t to an OpenAI model, "" for
// models that take none (non-reasoning models, and o1-mini, o1-preview and the -chat
// models, which refuse the field). OpenAI's efforts stop at "high", so "max" and "xhigh"
// ask for that; "minimal" is gpt-5's own, the o-series' least is "low".
func openAIReasoningEffort(model string, t *Thinking) string {
	if !openAIReasoningModel(model) || strings.HasPrefix(model, "o1-mini") || strings.HasPrefix(model, "o1-preview") {
		return ""
	}
	gpt5 := strings.HasPrefix(model, "gpt-5")
	switch e := t.effort(); e {
	case "max", "xhigh":
		return "high"
	case "minimal", "none": // "none" asks as little as BudgetForEffort gives it
		if gpt5 {
			return "minimal"
		}
		return "low"
	default:
		return e
	}
}

// openAIReasoningModel reports whether model is one of OpenAI's reasoning models: the o1, o3
// and o4 families, codex-mini (an o4-mini) and GPT-5 (not its -chat models).
func openAIReasoningModel(model string) bool {
	return openAIOSeries(model) || strings.HasPrefix(model, "codex-mini") ||
		strings.HasPrefix(model, "gpt-5") && !strings.Contains(model, "-chat")
}

// openAIOSeries reports whether model is of OpenAI's o1, o3 or o4 families (their -mini
// models included).
func openAIOSeries(model string) bool {
	return strings.HasPrefix(model, "o1") || strings.HasPrefix(model, "o3") || strings.HasPrefix(model, "o4")
}

// openAIEffort is an effort the gateway accepts (any case; Anthropic's max) as OpenAI's
// model takes it: max is high; xhigh, minimal and none are GPT-5's, high, low and low for
// the o-series.
func openAIEffort(model, effort string) string {
	e := strings.ToLower(effort)
	gpt5 := strings.HasPrefix(model, "gpt-5")
	switch {
	case e == "max", e == "xhigh" && !gpt5:
		return "high"
	case (e == "minimal" || e == "none") && !gpt5:
		return "low"
	}
	return e
}

// openRouterEffort is an effort as OpenRouter's reasoning.effort takes it (minimal to high).
func openRouterEffort(e string) string {
	switch e {
	case "max", "xhigh":
		return "high"
	case "none":
		return "minimal"
	}
	return e
}

// openAIRefusesReasoningEffort reports whether model is one of OpenAI's models known to
// refuse reasoning_effort (GPT-3.5, GPT-4 and 4o, ChatGPT, o1-mini and o1-preview, the
// -chat models); a model not known to refuse it gets it.
func openAIRefusesReasoningEffort(model string) bool {
	for _, p := range []string{"gpt-3.5", "gpt-4", "chatgpt-", "o1-mini", "o1-preview", "davinci", "babbage"} {
		if strings.HasPrefix(model, p) {
			return true
		}
	}
	return strings.Contains(model, "-chat")
}

func (o *OpenAI) start(ctx context.Context, req *Request, stream bool) (*call, error) {
	if err := o.ep.checkKey(req.Model); err != nil {
		return nil, err
	}
	if req.Search && !o.SupportsSearch(req.Model) {
		return nil, o.ep.errorf(req.Model, KindBadRequest, "model %s/%s does not support search", o.ep.cfg.Name, req.Model)
	}
	if req.AssistantPrefix != "" && !o.SupportsPrefill() {
		return nil, o.ep.errNoPrefill(req.Model)
	}
	if err := o.Check(req.Model, req); err != nil {
		return nil, &Error{Provider: o.ep.cfg.Name, Model: req.Model, Kind: KindBadRequest, Message: err.Error(), Err: err}
	}
	h := http.Header{}
	if err := o.setAuth(ctx, req.Model, h); err != nil {
		return nil, err
	}
	if stream {
		h.Set("Accept", "text/event-stream")
	}
	if o.useResponses(req) {
		c, err := o.startResponses(ctx, req, h, stream)
		if c != nil {
			c.responses = true
		}
		return c, err
	}
	payload, err := o.body(req, stream)
	if err != nil {
		return nil, &Error{Provider: o.ep.cfg.Name, Model: req.Model, Kind: KindBadRequest, Message: "encoding request", Err: err}
	}
	return o.ep.send(ctx, req.Model, o.url("/chat/completions", req.Model), h, payload, parseOpenAIError)
}

// Check implements RequestChecker: OpenAI's chat completions take a file as data only, so
// a file given by URL is refused, naming the part; a request that goes to the Responses API
// (see ResponsesMode) may not have stop sequences; a search may not exclude domains.
func (o *OpenAI) Check(model string, req *Request) error {
	if err := checkLogprobs(o, model, req); err != nil {
		return err
	}
	if o.ownAPI && len(req.Stop) > openAIMaxStop {
		return &UnsupportedError{Provider: o.Name(), Field: "stop", Reason: fmt.Sprintf("OpenAI takes at most %d stop sequences", openAIMaxStop)}
	}
	if req.Search && req.SearchOptions != nil && len(req.SearchOptions.BlockedDomains) > 0 {
		// Searching the sites the caller ruled out would not be what was asked.
		return &UnsupportedError{Provider: o.Name(), Field: "blocked_domains", Reason: "OpenAI's web search cannot exclude domains"}
	}
	if o.useResponses(req) {
		if err := o.checkResponses(req); err != nil {
			return err
		}
	}
	if !hasFileURL(req.Messages) {
		return nil
	}
	for i := range req.Messages {
		for j, p := range req.Messages[i].Parts {
			if p.File != nil && !strings.HasPrefix(p.File.URL, "data:") {
				return &UnsupportedError{Provider: o.Name(), Field: fmt.Sprintf("messages[%d].content[%d].file.file_data", i, j),
					Reason: "OpenAI-format APIs take a file as a base64 data URL, not a URL"}
			}
		}
	}
	return nil
}

// SupportsAudioInput implements AudioInputSupporter: OpenAI-format chat completions take
// input_audio parts (which models do is the upstream's to say), the Responses API, which
// this adapter calls for some requests (see ResponsesMode), none.
func (o *OpenAI) SupportsAudioInput(model string, req *Request) (bool, string) {
	if o.useResponses(req) {
		return false, "this request goes to OpenAI's Responses API (web search or reasoning shown or a model only it serves), which takes no audio input"
	}
	return true, ""
}

// SupportsAudioOutput implements AudioOutputSupporter: OpenAI-format chat completions
// answer aloud when the model can (the upstream's call), whole or streamed (delta.audio,
// Chunk.Audio), never on the Responses API.
func (o *OpenAI) SupportsAudioOutput(model string, req *Request) (bool, string) {
	if o.useResponses(req) {
		return false, "this request goes to OpenAI's Responses API (web search or reasoning shown or a model only it serves), which does not answer aloud"
	}
	return true, ""
}

// SupportsLogprobs implements LogprobsSupporter: OpenAI-format chat completions return
// log probabilities (choices[].logprobs), except from OpenAI's (and Azure's) reasoning
// models, which refuse them, and on the Responses API, which this adapter calls for some
// requests (see ResponsesMode) and reads none from.
func (o *OpenAI) SupportsLogprobs(model string, req *Request) (bool, string) {
	if (o.ownAPI || o.azure != nil) && openAIRefusesLogprobs(o.family(model)) {
		return false, "OpenAI's reasoning models return no log probabilities"
	}
	if o.useResponses(req) {
		return false, "this request goes to OpenAI's Responses API (web search or reasoning shown or a model only it serves), whose log probabilities the gateway does not read"
	}
	return true, ""
}

// openAIErrorBody is {"error": {"message", "type", "code", "param"}}; some compatible
// servers send {"error": "text"} or {"message": "text"}.
type openAIErrorBody struct {
	Error   json.RawMessage `json:"error"`
	Message string          `json:"message"`
}

type openAIErrorObject struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Code    any    `json:"code"`
}

func parseOpenAIError(body []byte) (code, msg string) {
	var eb openAIErrorBody
	if json.Unmarshal(body, &eb) != nil {
		return "", ""
	}
	var obj openAIErrorObject
	if len(eb.Error) > 0 && json.Unmarshal(eb.Error, &obj) == nil {
		c := obj.Type
		if s, ok := obj.Code.(string); ok && s != "" {
			c = s
		}
		return c, obj.Message
	}
	var s string
	if len(eb.Error) > 0 && json.Unmarshal(eb.Error, &s) == nil {
		return "", s
	}
	return "", eb.Message
}

type openAIUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int `json:"cached_tokens"`
		AudioTokens  int `json:"audio_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails *struct {
		ReasoningTokens int `json:"reasoning_tokens"`
		AudioTokens     int `json:"audio_tokens"`
	} `json:"completion_tokens_details"`
}

func (u *openAIUsage) usage() Usage {
	out := Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens}
	if u.PromptTokensDetails != nil {
		out.CachedTokens = u.PromptTokensDetails.CachedTokens
		out.PromptAudioTokens = u.PromptTokensDetails.AudioTokens
	}
	if u.CompletionTokensDetails != nil {
		out.ReasoningTokens = u.CompletionTokensDetails.ReasoningTokens
		out.CompletionAudioTokens = u.CompletionTokensDetails.AudioTokens
	}
	return out
}

type openAIResponse struct {
	Model string `json:"model"`
	// SystemFingerprint and ServiceTier are raw, so that a value other than a string (null,
	// or a server's own structure) is ignored rather than failing the answer.
	SystemFingerprint json.RawMessage `json:"system_fingerprint"`
	ServiceTier       json.RawMessage `json:"service_tier"`
	Choices           []struct {
		FinishReason string          `json:"finish_reason"`
		Logprobs     json.RawMessage `json:"logprobs"`
		Message      struct {
			Content   *string          `json:"content"`
			Refusal   *string          `json:"refusal"`
			ToolCalls []openAIToolCall `json:"tool_calls"`
			// ReasoningContent and Reasoning are compatible servers' reasoning (see
			// openAIReasoning); raw, so that a value other than a string (a server's own
			// structure) is ignored rather than failing the answer.
			ReasoningContent json.RawMessage `json:"reasoning_content"`
			Reasoning        json.RawMessage `json:"reasoning"`
			// Annotations are a search model's citations (url_citation).
			Annotations json.RawMessage `json:"annotations"`
			// Audio is an audio model's spoken answer (OpenAIOptions.Audio).
			Audio *AudioAnswer `json:"audio"`
		} `json:"message"`
	} `json:"choices"`
	Usage *openAIUsage    `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// upstreamString is raw as a string when it is a JSON string, else "".
func upstreamString(raw json.RawMessage) string {
	if len(raw) == 0 || raw[0] != '"' {
		return "" // before s is declared: decoding into it puts it on the heap
	}
	var s string
	if decodeUpstream(raw, &s) != nil {
		return ""
	}
	return s
}

// openAIReasoning is the reasoning of a whole answer: reasoning_content when it is a
// non-empty string, else reasoning when that is one; nil when neither is.
func openAIReasoning(reasoningContent, reasoning json.RawMessage) []ReasoningBlock {
	for _, raw := range []json.RawMessage{reasoningContent, reasoning} {
		if len(raw) == 0 || raw[0] != '"' {
			continue // before s is declared: decoding into it puts it on the heap
		}
		var s string
		if decodeUpstream(raw, &s) == nil && s != "" {
			return []ReasoningBlock{{Text: s}}
		}
	}
	return nil
}

// Complete sends a non-streamed chat completion.
func (o *OpenAI) Complete(ctx context.Context, req *Request) (*Response, error) {
	c, err := o.start(ctx, req, false)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if c.responses {
		return completeResponses(c)
	}
	raw, err := c.readAll(maxResponseBody)
	if err != nil {
		return nil, err
	}
	var r openAIResponse
	if err := decodeUpstream(raw, &r); err != nil {
		return nil, c.malformedBody(raw, int64(len(raw)), err, "response body")
	}
	if len(r.Error) > 0 && string(r.Error) != "null" {
		code, msg := parseOpenAIError(raw)
		return nil, c.failure(bodyErrorKind(code, msg), msg, nil)
	}
	if len(r.Choices) == 0 {
		return nil, c.failure(KindStreamBroken, "response has no choices", nil)
	}
	ch := r.Choices[0]
	if ch.FinishReason == "content_filter" {
		e := c.failure(KindContentFilter, "response blocked by the content filter", nil)
		if r.Usage != nil {
			u := r.Usage.usage()
			e.Usage = &u
		}
		return nil, e
	}
	resp := &Response{FinishReason: ch.FinishReason, Model: r.Model,
		SystemFingerprint: upstreamString(r.SystemFingerprint), ServiceTier: upstreamString(r.ServiceTier)}
	if ch.Message.Content != nil {
		resp.Text = *ch.Message.Content
	}
	resp.Audio = ch.Message.Audio
	if ch.Message.Refusal != nil {
		resp.Refusal = *ch.Message.Refusal
	}
	for _, c := range ch.Message.ToolCalls {
		resp.ToolCalls = append(resp.ToolCalls, ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: argumentsOrEmptyObject(c.Function.Arguments)})
	}
	resp.Reasoning = openAIReasoning(ch.Message.ReasoningContent, ch.Message.Reasoning)
	resp.Sources = openAIChatSources(ch.Message.Annotations, nil)
	if req.Logprobs {
		if resp.Logprobs, err = decodeOpenAILogprobs(ch.Logprobs); err != nil {
			return nil, c.malformedBody(raw, int64(len(raw)), err, "choices[0].logprobs")
		}
	}
	if r.Usage != nil {
		resp.Usage = r.Usage.usage()
	}
	return resp, nil
}

// bodyErrorKind classifies an error object received with HTTP 200 (inside a body or a
// stream): rate limits and overloads keep their kind, anything unrecognised is a broken
// response.
func bodyErrorKind(code, msg string) ErrorKind {
	k := classifyStatus(0, code, msg)
	if k == KindUnknown {
		lc := strings.ToLower(code + " " + msg)
		switch {
		case strings.Contains(lc, "rate") && strings.Contains(lc, "limit"):
			return KindRateLimited
		case strings.Contains(lc, "server_error"), strings.Contains(lc, "internal"):
			return KindOverloaded
		case strings.Contains(lc, "invalid_request"):
			return KindBadRequest
		}
		return KindStreamBroken
	}
	return k
}

// Stream starts a streamed chat completion with usage in the last chunk.
func (o *OpenAI) Stream(ctx context.Context, req *Request) (Stream, error) {
	c, err := o.start(ctx, req, true)
	if err != nil {
		return nil, err
	}
	if c.responses {
		return newResponsesStream(c), nil
	}
	// OpenAI's reasoning models reason before their first fragment and show nothing of it on
	// chat completions: the stream says so first (ReasoningDelta.Started).
	return &openAIStream{streamState: newStreamState(c), reasons: o.ownAPI && openAIReasoningModel(o.family(req.Model))}, nil
}

type openAIStream struct {
	streamState
	chunks   openAIChunkDecoder
	finished bool // a finish reason came: a clean end of the body completes the answer
	// filtered: the finish reason was content_filter; the stream reads on to the usage
	// chunk (stream_options.include_usage) to bill the blocked answer, then fails.
	filtered bool
	// pending is the rest of an event whose reasoning was just returned (its text, calls,
	// finish or usage), returned by the next Recv when hasPending.
	pending    Chunk
	hasPending bool
	// thoughts numbers the reasoning blocks (see reasoningBlocks).
	thoughts reasoningBlocks
	// reasons: the model reasons silently first; the first Recv says so.
	reasons bool
	// calls notes the answer's tool calls and whether each had arguments (see
	// emptyArgumentCalls).
	calls emptyArgumentCalls
}

// failFiltered ends a stream whose answer the content filter blocked, with the usage the
// upstream reported for it (u nil when none).
func (s *openAIStream) failFiltered(u *Usage) error {
	return s.failBilled(KindContentFilter, "response blocked by the content filter", u)
}

// fillBeforeFinish is, when out ends the answer (its finish reason) and some of its tool
// calls came without arguments, the chunk giving them "{}", to be returned before out; nil
// otherwise.
func (s *openAIStream) fillBeforeFinish(out Chunk) *Chunk {
	if out.FinishReason == "" {
		return nil
	}
	fill := s.calls.fill()
	if len(fill) == 0 {
		return nil
	}
	return &Chunk{ToolCalls: fill}
}

// Recv returns the next non-empty chunk, io.EOF after "data: [DONE]", or an *Error.
func (s *openAIStream) Recv() (Chunk, error) {
	if s.err != nil {
		return Chunk{}, s.err
	}
	if s.reasons {
		s.reasons = false
		return Chunk{Reasoning: &ReasoningDelta{}}, nil
	}
	if s.hasPending {
		if fill := s.fillBeforeFinish(s.pending); fill != nil {
			return *fill, nil // the pending finish comes next
		}
		s.hasPending = false
		if s.pending.Text != "" || len(s.pending.ToolCalls) > 0 || s.pending.Audio != nil {
			s.thoughts.answer()
		}
		return s.pending, nil
	}
	for {
		ev, err := s.next()
		if s.filtered && (err != nil || ev.raw || string(bytes.TrimSpace(ev.data)) == "[DONE]") {
			return Chunk{}, s.failFiltered(nil) // ended without a usage chunk
		}
		if err == io.EOF {
			if s.finished {
				// Servers that end the body after the finish reason (and usage) without
				// [DONE] sent a whole answer.
				return Chunk{}, s.stop(io.EOF)
			}
			return Chunk{}, s.fail(KindStreamBroken, "stream ended without data: [DONE]", nil)
		}
		if err != nil {
			return Chunk{}, err
		}
		if ev.raw {
			return Chunk{}, s.failRaw(ev.data, parseOpenAIError)
		}
		data := bytes.TrimSpace(ev.data)
		if string(data) == "[DONE]" {
			return Chunk{}, s.stop(io.EOF)
		}
		out, errorBody, err := s.chunks.decode(data)
		if err != nil {
			if s.skip(data) {
				continue
			}
			return Chunk{}, s.fail(KindStreamBroken, "malformed stream chunk", err)
		}
		if out.FinishReason != "" {
			s.finished = true
		}
		if errorBody {
			code, msg := parseOpenAIError(data)
			return Chunk{}, s.fail(bodyErrorKind(code, msg), msg, nil)
		}
		if out.FinishReason == "content_filter" {
			s.filtered = true
		}
		if s.filtered {
			if out.Usage != nil {
				return Chunk{}, s.failFiltered(out.Usage)
			}
			continue
		}
		s.calls.note(out.ToolCalls)
		empty := out.Text == "" && out.FinishReason == "" && out.Usage == nil && len(out.ToolCalls) == 0 && out.Refusal == "" && len(out.Sources) == 0 && out.Audio == nil
		if r := s.chunks.reasoning; r != "" {
			// A chunk with reasoning carries nothing else: the rest of the event follows.
			if !empty {
				s.pending, s.hasPending = out, true
			}
			return Chunk{Reasoning: &ReasoningDelta{Index: s.thoughts.next(), Text: r},
				SystemFingerprint: out.SystemFingerprint, ServiceTier: out.ServiceTier}, nil
		}
		if empty {
			continue
		}
		if out.Text != "" || len(out.ToolCalls) > 0 || out.Audio != nil {
			s.thoughts.answer()
		}
		if fill := s.fillBeforeFinish(out); fill != nil {
			s.pending, s.hasPending = out, true
			return *fill, nil
		}
		return out, nil
	}
}

// openAITools sets the tool-calling and structured-output fields of b but
// parallel_tool_calls (see openAIParallelToolCalls). tool_choice is sent only with tools,
// as OpenAI refuses it otherwise.
func openAITools(b *openAIRequest, req *Request) {
	if len(req.Tools) > 0 {
		b.Tools = make([]openAITool, len(req.Tools))
		for i, t := range req.Tools {
			b.Tools[i] = openAITool{Type: "function", Function: openAIFunctionDecl{Name: t.Name, Description: t.Description,
				Parameters: t.Parameters, Strict: t.Strict}}
		}
		if c := req.ToolChoice; c != nil {
			if c.Mode == ToolChoiceFunction {
				b.ToolChoice = map[string]any{"type": "function", "function": map[string]string{"name": c.Name}}
			} else if c.Mode != "" {
				b.ToolChoice = c.Mode
			}
		}
	}
	if f := req.ResponseFormat; f.JSON() {
		b.ResponseFormat = &openAIResponseFormat{Type: f.Type}
		if f.Type == ResponseJSONSchema {
			b.ResponseFormat.JSONSchema = &openAIJSONSchema{Name: f.Name, Description: f.Description, Schema: f.Schema, Strict: f.Strict}
		}
	}
}

// openAIChatSources are the pages a chat completion's annotations cite (url_citation, as
// OpenAI's search models give them), each once, leaving out those in seen (which it then
// holds too; nil keeps none); nil for anything else.
func openAIChatSources(raw json.RawMessage, seen sourceSet) []Source {
	if len(raw) == 0 || raw[0] != '[' {
		return nil
	}
	var anns []struct {
		Type        string `json:"type"`
		URLCitation struct {
			URL   string `json:"url"`
			Title string `json:"title"`
		} `json:"url_citation"`
	}
	if decodeUpstream(raw, &anns) != nil {
		return nil
	}
	if seen == nil {
		seen = sourceSet{}
	}
	var out []Source
	for _, a := range anns {
		if a.Type == "url_citation" {
			out = seen.add(out, a.URLCitation.URL, a.URLCitation.Title)
		}
	}
	return out
}

// needs is what the configuration lacks (see Needs).
func (o *OpenAI) needs() string { return o.ep.needs() }
