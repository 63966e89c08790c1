package providers

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
)

// DefaultAnthropicBaseURL is the Anthropic API root used when Config.BaseURL is empty.
const DefaultAnthropicBaseURL = "https://api.anthropic.com"

// AnthropicVersion is the anthropic-version header sent with every request.
const AnthropicVersion = "2023-06-01"

// AnthropicInterleavedThinkingBeta is the anthropic-beta value that lets Claude 4 think
// between tool calls (Thinking.Interleaved); adaptive thinking does so without it.
const AnthropicInterleavedThinkingBeta = "interleaved-thinking-2025-05-14"

// DefaultAnthropicMaxTokens is sent as max_tokens (which the Messages API requires) when
// Request.MaxTokens is 0.
const DefaultAnthropicMaxTokens = 4096

// Anthropic speaks the Anthropic Messages API (POST {base}/v1/messages, x-api-key auth,
// typed SSE events ending with message_stop). System messages go to the "system" field.
// Finish reasons are normalised: end_turn and stop_sequence → "stop", max_tokens →
// "length", tool_use → "tool_calls"; a "refusal" stop reason (Claude's safety classifiers
// stopped the answer) fails with KindContentFilter, which the OpenAI-compatible surface
// reports as finish_reason "content_filter".
//
// Tools map to tools with input_schema (an open object schema when a function has no
// parameters) and tool_choice auto/any/tool/none; parallel_tool_calls false (or, without
// it, SingleToolCall) sets disable_parallel_tool_use. Assistant tool calls become tool_use blocks, "tool" messages
// tool_result blocks in a user turn (consecutive results, and a user's text after them,
// share one turn). Streamed tool_use blocks become indexed ToolCallDeltas: the
// content_block_start carries id and name, each input_json_delta a piece of the arguments.
//
// Structured output (json_schema and json_object) uses Anthropic's native means, a forced
// tool: a tool named after the schema (json_answer for JSON mode) whose input_schema is the
// schema (an open object for JSON mode), with tool_choice {type: tool} — or {type: any}
// when the caller's own tools may be called instead. Its input is returned as the answer's
// text, streamed from its input_json_delta pieces, with finish reason "stop"; it is never a
// tool call. A schema whose root is not an object is refused (see Check).
//
// Request.Thinking turns on extended thinking for the models that have it (Claude 3.7 and
// Claude 4 or later, see anthropicThinks): thinking {type: enabled, budget_tokens}, with
// the budget below max_tokens (max_tokens is raised by the budget when the request gives
// none; a budget derived from an effort leaves a quarter of the caller's max_tokens, up to
// 4,096, for the answer; one that would not fit 1,024 tokens below it sends no thinking),
// or {type: adaptive} with output_config.effort on the models that take it (see
// anthropicAdaptive) when no budget is given; Thinking.Interleaved adds the
// interleaved-thinking beta header for Claude 4. Claude thinks only at temperature 1,
// without top_k and with top_p of at least 0.95, so other values are left out of a thinking
// request. A request Claude would refuse with thinking is sent without it: one that forces
// a tool (tool_choice required or a function, or structured output), one with an
// AssistantPrefix, and one whose tool loop in progress began with an answer that has none
// of the signed reasoning Claude needs back (a turn another provider began; see
// anthropicThinkingRefused). The thinking and
// redacted_thinking blocks of an answer are its Reasoning (streamed as ReasoningDeltas,
// indexed by reasoning block); those of the history's assistant turns go back first in
// their turn when thinking is on, and only when signed (Signature) or redacted: reasoning
// from other providers is dropped, as Claude would refuse it.
type Anthropic struct {
	ep      endpoint
	baseURL string
	// host, when set, sends the requests to a cloud that serves Claude (Vertex AI) instead
	// of Anthropic's API; nil for Anthropic's own.
	host *anthropicHost
}

// anthropicHost is the seam through which a cloud serves Claude with this adapter's
// Messages bodies, answers and streams: where a request goes, how it is authenticated,
// how its body differs from Anthropic's and how the cloud's errors read.
type anthropicHost struct {
	// url is where a request for model goes (whole or streamed).
	url func(model string, stream bool) string
	// auth sets the request's credentials on h (instead of x-api-key), with the call's
	// context, or returns the *Error of credentials that cannot be had.
	auth func(ctx context.Context, model string, h http.Header) error
	// version is the body's anthropic_version member; the model is then left out of the
	// body (it is in the URL).
	version string
	// betasInBody sends the anthropic-beta values in the body's anthropic_beta member too.
	betasInBody bool
	// parseError reads the cloud's error bodies (code and message).
	parseError func(body []byte) (code, msg string)
}

// parseError reads an error body of the adapter's upstream.
func (a *Anthropic) parseError(body []byte) (code, msg string) {
	if a.host != nil && a.host.parseError != nil {
		return a.host.parseError(body)
	}
	return parseAnthropicError(body)
}

// NewAnthropic returns an Anthropic Messages adapter.
func NewAnthropic(cfg Config) *Anthropic {
	if cfg.Name == "" {
		cfg.Name = "anthropic"
	}
	if cfg.KeyEnv == "" {
		cfg.KeyEnv = "ANTHROPIC_API_KEY"
	}
	base := strings.TrimRight(cfg.BaseURL, "/")
	if base == "" {
		base = DefaultAnthropicBaseURL
	}
	// "/v1" ending the base's path goes (the operation has it), also before a query.
	base = withBasePath(base, func(path string) string { return strings.TrimSuffix(strings.TrimRight(path, "/"), "/v1") })
	return &Anthropic{ep: newEndpoint(cfg), baseURL: base}
}

// Name returns the provider prefix.
func (a *Anthropic) Name() string { return a.ep.cfg.Name }

// BaseURL returns the endpoint root requests go to.
func (a *Anthropic) BaseURL() string { return a.baseURL }

// Configured reports whether an API key is set.
func (a *Anthropic) Configured() bool { return a.ep.cfg.APIKey != "" || a.ep.cfg.KeyOptional }

// SupportsPrefill implements Prefiller: a trailing assistant message is continued.
func (a *Anthropic) SupportsPrefill() bool { return true }

// SupportsSearch reports true: Claude models take the server-side web_search tool.
func (a *Anthropic) SupportsSearch(model string) bool {
	return !strings.HasPrefix(model, "claude-2") && !strings.HasPrefix(model, "claude-instant") &&
		!strings.HasPrefix(model, "claude-3-haiku") && !strings.HasPrefix(model, "claude-3-opus") &&
		!strings.HasPrefix(model, "claude-3-sonnet")
}

// anthropicMessage is a turn; Content is a string, or blocks when the turn carries tool
// use or tool results.
type anthropicMessage struct {
	Role    string `json:"role"`
	Content any    `json:"content"`
}

// anthropicBlock is a content block of a request turn: text, image, document, tool_use,
// tool_result, thinking or redacted_thinking.
type anthropicBlock struct {
	Type   string                `json:"type"`
	Text   string                `json:"text,omitempty"`
	Source *anthropicImageSource `json:"source,omitempty"`
	Title  string                `json:"title,omitempty"` // a document's
	// CacheControl marks the end of the prompt prefix Anthropic caches (PromptCache).
	CacheControl *anthropicCache `json:"cache_control,omitempty"`
	ID           string          `json:"id,omitempty"`
	Name         string          `json:"name,omitempty"`
	Input        json.RawMessage `json:"input,omitempty"`
	ToolUseID    string          `json:"tool_use_id,omitempty"`
	Content      string          `json:"content,omitempty"`
	// Thinking is a thinking block's text; a pointer because Claude requires the member
	// even when the text is empty (reasoning it returned with its text omitted).
	Thinking  *string `json:"thinking,omitempty"`
	Signature string  `json:"signature,omitempty"` // a thinking block's
	Data      string  `json:"data,omitempty"`      // a redacted_thinking block's
}

// appendReasoning appends the reasoning blocks of an assistant turn that Claude takes back:
// thinking blocks with their signature and redacted_thinking blocks. Blocks with neither
// came from another provider and are dropped: Claude refuses reasoning it cannot verify.
func appendReasoning(blocks []anthropicBlock, rs []ReasoningBlock) []anthropicBlock {
	for i := range rs {
		switch r := &rs[i]; {
		case r.Signature != "":
			blocks = append(blocks, anthropicBlock{Type: "thinking", Thinking: &r.Text, Signature: r.Signature})
		case r.Redacted != "":
			blocks = append(blocks, anthropicBlock{Type: "redacted_thinking", Data: r.Redacted})
		}
	}
	return blocks
}

// anthropicImageSource is an image or document block's source: base64 data or a URL.
type anthropicImageSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type,omitempty"`
	Data      string `json:"data,omitempty"`
	URL       string `json:"url,omitempty"`
}

// anthropicSource is the source of an image or document at url: its base64 data (of
// mediaType) for a data URL, else the URL, which Anthropic fetches.
func anthropicSource(url, mediaType string) *anthropicImageSource {
	if _, data, ok := ParseDataURL(url); ok {
		return &anthropicImageSource{Type: "base64", MediaType: mediaType, Data: data}
	}
	return &anthropicImageSource{Type: "url", URL: url}
}

// anthropicParts is a user turn's text, images and documents as blocks; whitespace-only
// text parts are left out (Anthropic refuses them).
func anthropicParts(parts []Part) []anthropicBlock {
	out := make([]anthropicBlock, 0, len(parts))
	for _, p := range parts {
		switch {
		case p.Image != nil:
			out = append(out, anthropicBlock{Type: "image", Source: anthropicSource(p.Image.URL, ImageMediaType(*p.Image))})
		case p.File != nil:
			out = append(out, anthropicBlock{Type: "document", Source: anthropicSource(p.File.URL, FileMediaType), Title: p.File.Filename})
		case strings.TrimSpace(p.Text) != "":
			out = append(out, anthropicBlock{Type: "text", Text: p.Text})
		}
	}
	return out
}

type anthropicTool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"input_schema"`
	CacheControl *anthropicCache `json:"cache_control,omitempty"`
}

// anthropicCache is a cache_control breakpoint.
type anthropicCache struct {
	Type string `json:"type"`          // ephemeral
	TTL  string `json:"ttl,omitempty"` // "1h"; the default is 5 minutes
}

// AnthropicExtendedCacheTTLBeta is the anthropic-beta value sent with one-hour cache
// breakpoints (Request.PromptCacheTTL).
const AnthropicExtendedCacheTTLBeta = "extended-cache-ttl-2025-04-11"

// cacheTTLs are the TTLs of the tools', the system prompt's and the conversation's (tail)
// breakpoints of req, each "1h" or "" (5 minutes) as the caller asked, except where
// Anthropic would refuse the order: it reads tools, system, messages, and a breakpoint
// kept an hour may not follow one kept 5 minutes, so a part kept an hour keeps those
// before it an hour too.
func cacheTTLs(req *Request) (tools, system, tail string) {
	tail = oneHour(req.PromptCacheTailTTL)
	system = cmp.Or(oneHour(req.PromptCacheTTL), tail)
	tools = cmp.Or(oneHour(req.PromptCacheToolsTTL), system)
	return tools, system, tail
}

func oneHour(ttl string) string {
	if ttl == "1h" {
		return ttl
	}
	return ""
}

// markCachePrefix puts cache_control breakpoints where a caller that asked for prompt
// caching (Request.PromptCache) reuses its prompt: at the end of the system prompt, of the
// tools and of the conversation so far — three of the four Anthropic allows — with the
// request's TTLs. A prompt shorter than the model's minimum (about 1,024 tokens) is simply
// not cached.
func markCachePrefix(b *anthropicRequest, toolsTTL, systemTTL, tailTTL string) {
	tail := &anthropicCache{Type: "ephemeral", TTL: tailTTL}
	if sys, ok := b.System.(string); ok && sys != "" {
		b.System = []anthropicBlock{{Type: "text", Text: sys, CacheControl: &anthropicCache{Type: "ephemeral", TTL: systemTTL}}}
	}
	if n := len(b.Tools); n > 0 {
		if t, ok := b.Tools[n-1].(anthropicTool); ok {
			t.CacheControl = &anthropicCache{Type: "ephemeral", TTL: toolsTTL}
			b.Tools[n-1] = t
		}
	}
	if n := len(b.Messages); n > 0 {
		m := &b.Messages[n-1]
		switch c := m.Content.(type) {
		case string:
			if strings.TrimSpace(c) != "" {
				m.Content = []anthropicBlock{{Type: "text", Text: c, CacheControl: tail}}
			}
		case []anthropicBlock:
			// Anthropic refuses cache_control on a thinking block: the last other block.
			for i := len(c) - 1; i >= 0; i-- {
				if c[i].Type != "thinking" && c[i].Type != "redacted_thinking" {
					c[i].CacheControl = tail
					break
				}
			}
		}
	}
}

type anthropicToolChoice struct {
	Type                   string `json:"type"`
	Name                   string `json:"name,omitempty"`
	DisableParallelToolUse bool   `json:"disable_parallel_tool_use,omitempty"`
}

type anthropicRequest struct {
	Model       string               `json:"model,omitempty"` // left out on a cloud that names it in its URL
	MaxTokens   int                  `json:"max_tokens"`
	System      any                  `json:"system,omitempty"` // a string; text blocks with PromptCache
	Messages    []anthropicMessage   `json:"messages"`
	Temperature *float64             `json:"temperature,omitempty"`
	TopP        *float64             `json:"top_p,omitempty"`
	TopK        *int                 `json:"top_k,omitempty"`
	Stop        []string             `json:"stop_sequences,omitempty"`
	Stream      bool                 `json:"stream,omitempty"`
	Tools       []any                `json:"tools,omitempty"`
	ToolChoice  *anthropicToolChoice `json:"tool_choice,omitempty"`
	// Metadata carries OpenAIOptions.User as user_id.
	Metadata *anthropicMetadata `json:"metadata,omitempty"`
	// Thinking and OutputConfig carry Request.Thinking (see anthropicThinkingFor); both are
	// absent from a request without thinking.
	Thinking     *anthropicThinking     `json:"thinking,omitempty"`
	OutputConfig *anthropicOutputConfig `json:"output_config,omitempty"`
	// AnthropicVersion and AnthropicBeta are a cloud's body members for what Anthropic's API
	// takes as headers (see anthropicHost); absent on Anthropic's own.
	AnthropicVersion string   `json:"anthropic_version,omitempty"`
	AnthropicBeta    []string `json:"anthropic_beta,omitempty"`
}

// anthropicThinking is the thinking member: {type: enabled, budget_tokens} or
// {type: adaptive} (the model decides how much to think, guided by output_config.effort).
type anthropicThinking struct {
	Type         string `json:"type"`
	BudgetTokens int    `json:"budget_tokens,omitempty"`
}

// anthropicOutputConfig is the output_config member; only its effort (low, medium, high,
// max) is sent, with adaptive thinking.
type anthropicOutputConfig struct {
	Effort string `json:"effort,omitempty"`
}

// anthropicMinBudget is the smallest budget_tokens Anthropic takes.
const anthropicMinBudget = 1024

// anthropicThinkingFor is the thinking and output_config members of req and its max_tokens.
// Thinking is nil (and max_tokens the caller's, or the default) when req asks for none, the
// model cannot think, or Claude would refuse the request with it (see
// anthropicThinkingRefused); likewise when the caller's max_tokens leaves no room for the
// minimum budget below it, as budget_tokens must be less than max_tokens. Without a
// max_tokens of the caller's, the default one is raised by the budget so that thinking does
// not eat the answer's tokens (with adaptive thinking, by the budget of its effort, as its
// thinking counts against max_tokens too).
func anthropicThinkingFor(req *Request) (*anthropicThinking, *anthropicOutputConfig, int) {
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = DefaultAnthropicMaxTokens
	}
	t := req.Thinking
	if t == nil || !anthropicThinks(req.Model) || anthropicThinkingRefused(req) {
		return nil, nil, maxTokens
	}
	budget := t.Budget(anthropicMinBudget, 0)
	if req.MaxTokens <= 0 {
		maxTokens = budget + DefaultAnthropicMaxTokens
	}
	if t.BudgetTokens <= 0 && anthropicAdaptive(req.Model) {
		return &anthropicThinking{Type: "adaptive"}, &anthropicOutputConfig{Effort: anthropicEffort(t.effort())}, maxTokens
	}
	if req.MaxTokens > 0 && t.BudgetTokens <= 0 {
		// A budget of the adapter's choosing leaves room for the answer: a quarter of
		// max_tokens, up to an answer's default.
		budget = max(min(budget, req.MaxTokens-min(DefaultAnthropicMaxTokens, req.MaxTokens/4)), anthropicMinBudget)
	}
	if req.MaxTokens > 0 && budget >= req.MaxTokens {
		budget = req.MaxTokens - 1
		if budget < anthropicMinBudget {
			return nil, nil, maxTokens
		}
	}
	return &anthropicThinking{Type: "enabled", BudgetTokens: budget}, nil, maxTokens
}

// anthropicThinkingRefused reports whether Claude would refuse req with thinking on: it
// forces a tool (tool_choice any or tool, which structured output is too), continues an
// assistant prefill, or the assistant turn in progress — a tool loop, one turn to Claude,
// from the last user message that is not a tool's result — called tools and its first
// answer does not start with a signed or redacted reasoning block, which Claude requires
// when thinking is on (the turn was begun by another provider, or by Claude without
// thinking). Later answers of the loop carry none: Claude thinks at a turn's start.
func anthropicThinkingRefused(req *Request) bool {
	if anthropicOutputTool(req) != "" || req.AssistantPrefix != "" || req.Search && req.SearchOptions != nil && req.SearchOptions.Required {
		return true
	}
	if c := req.ToolChoice; len(req.Tools) > 0 && c != nil && (c.Mode == ToolChoiceRequired || c.Mode == ToolChoiceFunction) {
		return true
	}
	msgs := req.Messages
	start := 0 // the current turn's user message
	for i := len(msgs) - 1; i >= 0; i-- {
		// A user message right after tool results is part of them (text sent with the
		// results), not a new turn.
		if msgs[i].Role == "user" && (i == 0 || msgs[i-1].Role != "tool") {
			start = i
			break
		}
	}
	var first *Message // the turn's first answer that reaches Claude
	calls := false
	for i := start; i < len(msgs); i++ {
		m := &msgs[i]
		if m.Role != "assistant" || len(m.ToolCalls) == 0 && strings.TrimSpace(m.Content) == "" {
			continue // empty answers are left out of the body
		}
		if first == nil {
			first = m
		}
		calls = calls || len(m.ToolCalls) > 0
	}
	return calls && !HasSigned(first.Reasoning)
}

// anthropicEffort is an effort as output_config.effort takes it: low, medium, high or max.
func anthropicEffort(effort string) string {
	switch effort {
	case "minimal", "none", "low":
		return "low"
	case "high":
		return "high"
	case "max", "xhigh":
		return "max"
	}
	return "medium"
}

// claudeVersion parses a Claude model name ("claude-3-7-sonnet-20250219",
// "claude-opus-4-1-20250805", "claude-sonnet-4-6", also behind a prefix such as Bedrock's
// "anthropic."): its major and minor version (major -1 when the name has none) and its
// family (opus, sonnet, haiku, instant). ok is false for a name that is not Claude's.
func claudeVersion(model string) (major, minor int, family string, ok bool) {
	model = strings.ToLower(model)
	i := strings.Index(model, "claude-")
	if i < 0 {
		return -1, 0, "", false
	}
	rest := model[i+len("claude-"):]
	if j := strings.IndexAny(rest, "@:"); j >= 0 { // Vertex's "@date", Bedrock's ":0"
		rest = rest[:j]
	}
	major = -1
	fields := strings.FieldsFunc(rest, func(r rune) bool { return r == '-' || r == '.' })
	for k, f := range fields {
		n, isNum := claudeNumber(f)
		switch {
		case isNum && major < 0:
			major = n
			if k+1 < len(fields) {
				if m, ok := claudeNumber(fields[k+1]); ok {
					minor = m
				}
			}
		case !isNum && family == "":
			family = f
		}
	}
	return major, minor, family, true
}

// claudeNumber is s as a version number: one or two digits (a longer number is a date).
func claudeNumber(s string) (int, bool) {
	if len(s) == 0 || len(s) > 2 {
		return 0, false
	}
	n := 0
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}

// anthropicThinks reports whether model has extended thinking: Claude 3.7 and every
// Claude 4 or later, including Claude names not known yet; not Claude 1, 2, Instant or the
// other Claude 3 models, which refuse the thinking member.
func anthropicThinks(model string) bool {
	major, minor, family, ok := claudeVersion(model)
	switch {
	case !ok || family == "instant":
		return false
	case major < 0:
		return true
	case major == 3:
		return minor == 7
	}
	return major >= 4
}

// anthropicStops is stop as Claude takes it: without whitespace-only sequences ("\n", an
// OpenAI client's usual one), which it refuses; nil when none is left.
func anthropicStops(stop []string) []string {
	blank := func(s string) bool { return strings.TrimSpace(s) == "" }
	if !slices.ContainsFunc(stop, blank) {
		return stop // the usual case, without a copy
	}
	var out []string
	for _, s := range stop {
		if !blank(s) {
			out = append(out, s)
		}
	}
	return out
}

// anthropicOneSampler reports whether model takes temperature or top_p but not both: Claude
// 4.1 and later (Opus 4.1, Sonnet and Haiku 4.5, …).
func anthropicOneSampler(model string) bool {
	major, minor, _, ok := claudeVersion(model)
	return ok && (major > 4 || major == 4 && minor >= 1)
}

// anthropicAdaptive reports whether model takes adaptive thinking (thinking {type:
// adaptive} with output_config.effort), which Anthropic recommends over a fixed budget
// where it exists: Opus and Sonnet 4.6 and later 4.x, and every Claude 5 or later.
func anthropicAdaptive(model string) bool {
	major, minor, family, ok := claudeVersion(model)
	switch {
	case !ok:
		return false
	case major >= 5:
		return true
	}
	return major == 4 && minor >= 6 && (family == "opus" || family == "sonnet")
}

type anthropicMetadata struct {
	UserID string `json:"user_id"`
}

// openObjectSchema is the input schema of a function without parameters, and of the output
// tool of JSON mode: any object.
var openObjectSchema = json.RawMessage(`{"type":"object"}`)

func (a *Anthropic) body(req *Request, stream bool) anthropicRequest {
	b := anthropicRequest{Model: req.Model, MaxTokens: req.MaxTokens, Temperature: req.Temperature, TopP: req.TopP, TopK: req.TopK,
		Stop: anthropicStops(req.Stop), Stream: stream}
	b.Thinking, b.OutputConfig, b.MaxTokens = anthropicThinkingFor(req)
	if t := b.Temperature; t != nil && *t > 1 {
		// Claude's range is 0-1 and OpenAI's 0-2: a request written for the one, falling
		// back to Claude, gets Claude's most random setting rather than a refusal.
		one := 1.0
		b.Temperature = &one
	}
	thinking := b.Thinking != nil
	if thinking {
		// Claude thinks only at temperature 1, without top_k, and with top_p of 0.95 or more.
		if t := b.Temperature; t != nil && *t != 1 {
			b.Temperature = nil
		}
		b.TopK = nil
		if p := b.TopP; p != nil && *p < 0.95 {
			b.TopP = nil
		}
	}
	if b.Temperature != nil && b.TopP != nil && anthropicOneSampler(req.Model) {
		// Claude 4.1 and later refuse temperature and top_p together (OpenAI clients often
		// send both): the temperature is kept.
		b.TopP = nil
	}
	if req.User != "" {
		b.Metadata = &anthropicMetadata{UserID: req.User}
	}
	var system []string
	historyTools := map[string]bool{} // functions the history's tool calls name
	for i := range req.Messages {
		m := &req.Messages[i]
		switch {
		case m.Role == "system" || m.Role == "developer":
			system = append(system, m.Content)
		case m.Role == "tool":
			// Tool results go back in a user turn; consecutive results share one turn.
			block := anthropicBlock{Type: "tool_result", ToolUseID: anthropicToolID(m.ToolCallID), Content: m.Content}
			if n := len(b.Messages); n > 0 && b.Messages[n-1].Role == "user" {
				if blocks, ok := b.Messages[n-1].Content.([]anthropicBlock); ok && blocks[len(blocks)-1].Type == "tool_result" {
					b.Messages[n-1].Content = append(blocks, block)
					continue
				}
			}
			b.Messages = append(b.Messages, anthropicMessage{Role: "user", Content: []anthropicBlock{block}})
		case len(m.ToolCalls) > 0:
			var blocks []anthropicBlock
			if thinking && len(m.Reasoning) > 0 {
				// The turn's reasoning goes first, as Claude requires.
				blocks = appendReasoning(make([]anthropicBlock, 0, len(m.Reasoning)+len(m.ToolCalls)+1), m.Reasoning)
			} else {
				blocks = make([]anthropicBlock, 0, len(m.ToolCalls)+1)
			}
			if strings.TrimSpace(m.Content) != "" { // Anthropic refuses whitespace-only text blocks
				blocks = append(blocks, anthropicBlock{Type: "text", Text: m.Content})
			}
			for _, c := range m.ToolCalls {
				blocks = append(blocks, anthropicBlock{Type: "tool_use", ID: anthropicToolID(c.ID), Name: c.Name, Input: argumentsObject(c.Arguments)})
				historyTools[c.Name] = true
			}
			b.Messages = append(b.Messages, anthropicMessage{Role: m.Role, Content: blocks})
		case m.Role == "assistant" && strings.TrimSpace(m.Content) == "":
			// An empty answer sent back (a refusal, a cut answer): Anthropic refuses empty
			// turns, and says nothing is lost by leaving it out.
			continue
		case thinking && m.Role == "assistant" && HasSigned(m.Reasoning):
			// An answer with its reasoning: blocks, the reasoning first.
			blocks := appendReasoning(make([]anthropicBlock, 0, len(m.Reasoning)+max(len(m.Parts), 1)), m.Reasoning)
			if len(m.Parts) > 0 {
				blocks = append(blocks, anthropicParts(m.Parts)...)
			} else {
				blocks = append(blocks, anthropicBlock{Type: "text", Text: m.Content})
			}
			b.Messages = append(b.Messages, anthropicMessage{Role: m.Role, Content: blocks})
		default:
			// A user's text after tool results joins their turn (after the results, as the
			// API requires).
			if n := len(b.Messages); n > 0 && m.Role == "user" && b.Messages[n-1].Role == "user" {
				if blocks, ok := b.Messages[n-1].Content.([]anthropicBlock); ok {
					if len(m.Parts) > 0 {
						b.Messages[n-1].Content = append(blocks, anthropicParts(m.Parts)...)
					} else {
						b.Messages[n-1].Content = append(blocks, anthropicBlock{Type: "text", Text: m.Content})
					}
					continue
				}
			}
			if len(m.Parts) > 0 {
				b.Messages = append(b.Messages, anthropicMessage{Role: m.Role, Content: anthropicParts(m.Parts)})
				continue
			}
			b.Messages = append(b.Messages, anthropicMessage{Role: m.Role, Content: m.Content})
		}
	}
	if len(system) > 0 {
		b.System = strings.Join(system, "\n\n")
	}
	if req.AssistantPrefix != "" {
		b.Messages = append(b.Messages, anthropicMessage{Role: "assistant", Content: prefillText(req.AssistantPrefix)})
	}
	if len(req.Tools) == 0 && len(historyTools) > 0 && anthropicOutputTool(req) == "" {
		// Anthropic refuses tool_use and tool_result blocks in a request without tools (a
		// closing "summarise" call, a fallback from OpenAI): declare the functions the
		// history used, as open objects, and forbid calling them.
		names := slices.Sorted(maps.Keys(historyTools))
		for _, n := range names {
			b.Tools = append(b.Tools, anthropicTool{Name: n, InputSchema: openObjectSchema})
		}
		b.ToolChoice = &anthropicToolChoice{Type: "none"}
	}
	for _, t := range req.Tools {
		schema, _ := anthropicInputSchema(t.Parameters)
		b.Tools = append(b.Tools, anthropicTool{Name: t.Name, Description: t.Description, InputSchema: schema})
	}
	if len(req.Tools) > 0 {
		disable := req.oneToolCallAsked()
		switch c := req.ToolChoice; {
		case c == nil || c.Mode == ToolChoiceAuto || c.Mode == "":
			if disable {
				b.ToolChoice = &anthropicToolChoice{Type: "auto", DisableParallelToolUse: true}
			}
		case c.Mode == ToolChoiceNone:
			b.ToolChoice = &anthropicToolChoice{Type: "none"}
		case c.Mode == ToolChoiceRequired:
			b.ToolChoice = &anthropicToolChoice{Type: "any", DisableParallelToolUse: disable}
		case c.Mode == ToolChoiceFunction:
			b.ToolChoice = &anthropicToolChoice{Type: "tool", Name: c.Name, DisableParallelToolUse: disable}
		}
	}
	if out := anthropicOutputTool(req); out != "" {
		f := req.ResponseFormat
		schema, _ := anthropicInputSchema(f.Schema)
		desc := f.Description
		if desc == "" {
			desc = "Give your final answer by calling this tool: its input is the answer."
		}
		b.Tools = append(b.Tools, anthropicTool{Name: out, Description: desc, InputSchema: schema})
		switch c := req.ToolChoice; {
		case c != nil && c.Mode == ToolChoiceFunction:
			// The caller forced one of its own functions; it is called instead.
		case len(req.Tools) > 0 && (c == nil || c.Mode != ToolChoiceNone):
			// Either one of the caller's functions or the answer.
			b.ToolChoice = &anthropicToolChoice{Type: "any", DisableParallelToolUse: b.ToolChoice != nil && b.ToolChoice.DisableParallelToolUse}
		default:
			b.ToolChoice = &anthropicToolChoice{Type: "tool", Name: out}
		}
	}
	if req.Search {
		b.Tools = append(b.Tools, anthropicSearchTool(req.SearchOptions))
		if req.SearchOptions != nil && req.SearchOptions.Required {
			b.ToolChoice = &anthropicToolChoice{Type: "tool", Name: "web_search"}
		}
	}
	if req.PromptCache {
		tools, system, tail := cacheTTLs(req)
		markCachePrefix(&b, tools, system, tail)
	}
	return b
}

// anthropicToolID is a tool-call id as Anthropic takes it (letters, digits, _ and -): ids
// other providers wrote with other characters (Ollama's "functions.get_weather:0") become a
// stable hash of themselves, the same for the call and its result.
func anthropicToolID(id string) string {
	for i := range len(id) {
		c := id[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' || c == '-') {
			sum := sha256.Sum256([]byte(id))
			return "toolu_" + hex.EncodeToString(sum[:12])
		}
	}
	return id
}

// argumentsObject is a tool call's arguments as the input object Anthropic and Gemini expect:
// empty arguments are {}, and arguments that are not a JSON object are {"arguments": text}.
func argumentsObject(args string) json.RawMessage {
	t := strings.TrimSpace(args)
	if t == "" {
		return json.RawMessage("{}")
	}
	if strings.HasPrefix(t, "{") && json.Valid([]byte(t)) {
		return json.RawMessage(t)
	}
	// A call cut off mid-arguments (finish "length") or not an object is still history the
	// conversation carries: Anthropic and Gemini take only objects, so it goes as text.
	b, _ := json.Marshal(map[string]string{"arguments": args})
	return b
}

// anthropicOutputTool is the name of the tool that carries structured output, or "" when
// req asks for none. Anthropic has no response format: a JSON answer is the input of a
// tool the model is made to call, whose input schema is the requested schema (an open
// object for JSON mode). The adapter returns that input as the answer's text, with finish
// reason "stop", never as a tool call.
func anthropicOutputTool(req *Request) string {
	return outputToolName(req, "json_answer")
}

// outputToolName is the name of the tool whose input carries req's structured output, ""
// when req asks for none: the schema's name, else dflt, with "_answer" appended until no
// function of the request has it.
func outputToolName(req *Request, dflt string) string {
	f := req.ResponseFormat
	if !f.JSON() {
		return ""
	}
	name := dflt
	if f.Type == ResponseJSONSchema && f.Name != "" {
		name = f.Name
	}
	for taken := true; taken; {
		taken = false
		for _, t := range req.Tools {
			if t.Name == name {
				name += "_answer"
				taken = true
			}
		}
	}
	return name
}

// Check refuses a JSON schema whose root is not an object: structured output is asked of
// Anthropic as a forced tool call whose input is the answer, and a tool's input schema must
// describe an object.
func (a *Anthropic) Check(model string, req *Request) error {
	if f := req.ResponseFormat; f.JSON() && f.Type == ResponseJSONSchema {
		if _, ok := anthropicInputSchema(f.Schema); !ok {
			return &UnsupportedError{Provider: a.Name(), Field: "response_format.json_schema.schema",
				Reason: `Anthropic structured output needs a schema whose root is an object ("type": "object" or properties)`}
		}
	}
	return nil
}

// anthropicInputSchema is schema as a tool's input_schema, which Anthropic requires to be an
// object with "type": "object" at its root: an empty schema is any object, and a root
// without a type but with properties gets "type": "object". ok is false for a root that is
// not an object (another type, or an anyOf/oneOf without properties).
func anthropicInputSchema(schema json.RawMessage) (_ json.RawMessage, ok bool) {
	if len(bytes.TrimSpace(schema)) == 0 {
		return openObjectSchema, true
	}
	var root map[string]json.RawMessage
	if json.Unmarshal(schema, &root) != nil {
		return schema, false
	}
	if t, typed := root["type"]; typed {
		return schema, string(bytes.TrimSpace(t)) == `"object"`
	}
	if _, props := root["properties"]; !props && !onlyAnnotations(root) {
		return schema, false
	}
	root["type"] = json.RawMessage(`"object"`)
	out, err := json.Marshal(root)
	if err != nil {
		return schema, false
	}
	return out, true
}

// onlyAnnotations reports whether a schema has nothing but annotations (title, description,
// $schema, …; or nothing at all): it accepts any value, taken here as any object.
func onlyAnnotations(root map[string]json.RawMessage) bool {
	for k := range root {
		switch k {
		case "title", "description", "$schema", "$id", "$comment", "examples", "default":
		default:
			return false
		}
	}
	return true
}

func (a *Anthropic) start(ctx context.Context, req *Request, stream bool) (*call, error) {
	if err := a.ep.checkKey(req.Model); err != nil {
		return nil, err
	}
	if req.Search && !a.SupportsSearch(req.Model) {
		return nil, a.ep.errorf(req.Model, KindBadRequest, "model %s/%s does not support search", a.Name(), req.Model)
	}
	h := http.Header{}
	url := operationURL(a.baseURL, "/v1/messages") // a query of the base's kept after it
	if a.host != nil {
		if err := a.host.auth(ctx, req.Model, h); err != nil {
			return nil, err
		}
		url = a.host.url(req.Model, stream)
	} else {
		h.Set("X-Api-Key", a.ep.cfg.APIKey)
	}
	if a.host == nil || a.host.version == "" { // a cloud's version goes in the body instead
		h.Set("Anthropic-Version", AnthropicVersion)
	}
	if stream {
		h.Set("Accept", "text/event-stream")
	}
	betas := a.betas(req)
	if len(betas) > 0 {
		h.Set("Anthropic-Beta", strings.Join(betas, ","))
	}
	body := a.body(req, stream)
	if a.host != nil && a.host.version != "" {
		body.Model, body.AnthropicVersion = "", a.host.version
		if a.host.betasInBody {
			body.AnthropicBeta = betas
		}
	}
	return a.ep.send(ctx, req.Model, url, h, body, a.parseError)
}

// betas is the anthropic-beta values req needs (interleaved thinking, one-hour cache
// breakpoints), after an operator's own configured ones; nil when it needs none.
func (a *Anthropic) betas(req *Request) []string {
	var betas []string
	if req.Thinking != nil && req.Thinking.Interleaved {
		if th, _, _ := anthropicThinkingFor(req); th != nil && th.Type == "enabled" {
			if major, _, _, _ := claudeVersion(req.Model); major >= 4 { // Claude 3.7 has no interleaved thinking
				betas = append(betas, AnthropicInterleavedThinkingBeta)
			}
		}
	}
	if tools, _, _ := cacheTTLs(req); req.PromptCache && tools != "" { // the first part is kept the longest
		betas = append(betas, AnthropicExtendedCacheTTLBeta)
	}
	if len(betas) > 0 {
		for k, v := range a.ep.cfg.Headers { // an operator's own betas stay (the call's headers win over them)
			if http.CanonicalHeaderKey(k) == "Anthropic-Beta" && v != "" {
				betas = append([]string{v}, betas...)
			}
		}
	}
	return betas
}

type anthropicError struct {
	Type  string `json:"type"`
	Error struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

func parseAnthropicError(body []byte) (code, msg string) {
	var e anthropicError
	if json.Unmarshal(body, &e) != nil {
		return "", ""
	}
	return e.Error.Type, e.Error.Message
}

type anthropicUsage struct {
	InputTokens              *int `json:"input_tokens"`
	OutputTokens             *int `json:"output_tokens"`
	CacheCreationInputTokens *int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     *int `json:"cache_read_input_tokens"`
	// CacheCreation splits the cache writes by TTL.
	CacheCreation *struct {
		OneHour int `json:"ephemeral_1h_input_tokens"`
	} `json:"cache_creation"`
	ServerToolUse *struct {
		WebSearchRequests int `json:"web_search_requests"`
	} `json:"server_tool_use"`
}

// merge copies the counts present in u (message_delta repeats them cumulatively).
func (u anthropicUsage) merge(into *anthropicTotals) {
	if u.InputTokens != nil {
		into.input = *u.InputTokens
	}
	if u.OutputTokens != nil {
		into.output = *u.OutputTokens
	}
	if u.CacheCreationInputTokens != nil {
		into.cacheCreation = *u.CacheCreationInputTokens
	}
	if u.CacheReadInputTokens != nil {
		into.cacheRead = *u.CacheReadInputTokens
	}
	if u.CacheCreation != nil {
		into.cacheCreation1h = u.CacheCreation.OneHour
	}
	if u.ServerToolUse != nil {
		into.searches = u.ServerToolUse.WebSearchRequests
	}
}

type anthropicTotals struct{ input, output, cacheCreation, cacheCreation1h, cacheRead, searches int }

// usage converts to Usage: Anthropic's input_tokens excludes cache reads and writes.
func (t anthropicTotals) usage() Usage {
	return Usage{
		PromptTokens:          t.input + t.cacheRead + t.cacheCreation,
		CompletionTokens:      t.output,
		CachedTokens:          t.cacheRead,
		CacheCreationTokens:   t.cacheCreation,
		CacheCreation1hTokens: min(t.cacheCreation1h, t.cacheCreation),
		WebSearches:           t.searches,
	}
}

func anthropicFinish(stop string) string {
	switch stop {
	case "end_turn", "stop_sequence":
		return "stop"
	case "max_tokens", "model_context_window_exceeded": // the latter: the window filled first
		return "length"
	case "tool_use":
		return "tool_calls"
	}
	return stop
}

type anthropicResponse struct {
	Type    string `json:"type"`
	Model   string `json:"model"`
	Content []struct {
		Type  string          `json:"type"`
		Text  string          `json:"text"`
		ID    string          `json:"id"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
		// A thinking block's text and signature; a redacted_thinking block's data.
		Thinking  string `json:"thinking"`
		Signature string `json:"signature"`
		Data      string `json:"data"`
		// A web_search_tool_result's results (or error object).
		Content json.RawMessage `json:"content"`
	} `json:"content"`
	StopReason   string         `json:"stop_reason"`
	StopSequence string         `json:"stop_sequence"`
	Usage        anthropicUsage `json:"usage"`
}

// Complete sends a non-streamed Messages request.
func (a *Anthropic) Complete(ctx context.Context, req *Request) (*Response, error) {
	c, err := a.start(ctx, req, false)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	raw, err := c.readAll(maxResponseBody)
	if err != nil {
		return nil, err
	}
	var r anthropicResponse
	if err := decodeUpstream(raw, &r); err != nil {
		return nil, c.malformedBody(raw, int64(len(raw)), err, "response body")
	}
	if r.Type == "error" {
		code, msg := a.parseError(raw)
		return nil, c.failure(bodyErrorKind(code, msg), msg, nil)
	}
	if r.StopReason == "refusal" {
		e := c.failure(KindContentFilter, "the model refused (stop_reason refusal)", nil)
		var t anthropicTotals
		r.Usage.merge(&t)
		if u := t.usage(); u.PromptTokens != 0 || u.CompletionTokens != 0 {
			e.Usage = &u
		}
		return nil, e
	}
	var text strings.Builder
	resp := &Response{FinishReason: anthropicFinish(r.StopReason), Model: r.Model}
	if r.StopReason == "stop_sequence" {
		resp.StopSequence = r.StopSequence
	}
	out := anthropicOutputTool(req)
	answered, paragraph := false, false
	for _, b := range r.Content {
		switch {
		case b.Type == "text":
			if paragraph && b.Text != "" {
				text.WriteString("\n\n") // the text after a web search starts a paragraph
				paragraph = false
			}
			text.WriteString(b.Text)
		case searchBlocks[b.Type]:
			paragraph = text.Len() > 0
			if b.Type == "web_search_tool_result" {
				resp.Sources = append(resp.Sources, searchResults(b.Content)...)
			}
		case b.Type == "thinking":
			resp.Reasoning = append(resp.Reasoning, ReasoningBlock{Text: b.Thinking, Signature: b.Signature})
		case b.Type == "redacted_thinking":
			resp.Reasoning = append(resp.Reasoning, ReasoningBlock{Redacted: b.Data})
		case b.Type == "tool_use" && out != "" && b.Name == out:
			answered = true
			text.Reset()
			text.Write(bytes.TrimSpace(b.Input))
		case b.Type == "tool_use":
			args := string(bytes.TrimSpace(b.Input))
			if args == "" || args == "null" {
				args = "{}"
			}
			resp.ToolCalls = append(resp.ToolCalls, ToolCall{ID: b.ID, Name: b.Name, Arguments: args})
		}
	}
	if answered {
		// Structured output: the output tool's input is the answer (see anthropicOutputTool).
		if len(resp.ToolCalls) == 0 {
			resp.FinishReason = "stop"
		}
		if r.StopReason == "max_tokens" {
			resp.FinishReason = "length"
		}
	}
	resp.Text = text.String()
	var t anthropicTotals
	r.Usage.merge(&t)
	resp.Usage = t.usage()
	return resp, nil
}

// Stream starts a streamed Messages request.
func (a *Anthropic) Stream(ctx context.Context, req *Request) (Stream, error) {
	c, err := a.start(ctx, req, true)
	if err != nil {
		return nil, err
	}
	return &anthropicStream{streamState: newStreamState(c), output: anthropicOutputTool(req), parseError: a.parseError}, nil
}

type anthropicEvent struct {
	Type    string `json:"type"`
	Message *struct {
		Usage anthropicUsage `json:"usage"`
	} `json:"message"`
	Index        int `json:"index"`
	ContentBlock *struct {
		Type      string          `json:"type"`
		Text      string          `json:"text"`
		ID        string          `json:"id"`
		Name      string          `json:"name"`
		Thinking  string          `json:"thinking"`
		Signature string          `json:"signature"`
		Data      string          `json:"data"`    // a redacted_thinking block's
		Content   json.RawMessage `json:"content"` // a web_search_tool_result's
	} `json:"content_block"`
	// Delta is held by value, not by pointer: one allocation less per streamed fragment
	// (an absent delta decodes as the zero value).
	Delta struct {
		Type         string `json:"type"`
		Text         string `json:"text"`
		PartialJSON  string `json:"partial_json"`
		Thinking     string `json:"thinking"`
		Signature    string `json:"signature"`
		StopReason   string `json:"stop_reason"`
		StopSequence string `json:"stop_sequence"`
	} `json:"delta"`
	Usage *anthropicUsage `json:"usage"`
	Error *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

type anthropicStream struct {
	streamState
	totals   anthropicTotals
	started  bool
	finished bool // message_delta brought the stop reason: a clean end of the body completes the answer

	output string // name of the structured-output tool, "" if none
	// parseError reads an error body that came instead of events (the adapter's; nil for
	// Anthropic's).
	parseError func([]byte) (code, msg string)

	// Tool-use blocks: the content block index of the open one, what it is, and whether
	// any input arrived for it (a call without input gets "{}").
	block     int
	blockKind blockKind
	gotInput  bool
	calls     int // tool calls started so far; the next call's Index
	answered  bool
	deltas    [1]ToolCallDelta // backing array of Chunk.ToolCalls

	// Reasoning blocks (thinking and redacted_thinking) started so far: the open one's
	// ReasoningDelta.Index is thoughts-1. signature is one that came in a thinking block's
	// content_block_start beside its text, returned by the next Recv.
	thoughts  int
	signature string

	// wrote: some text was relayed; paragraph: a web search (server_tool_use, its result)
	// came after it, so the next text starts a paragraph rather than run on from it.
	wrote, paragraph bool
}

// searchResults is the sources of a web_search_tool_result block's content: its
// web_search_result items (an error object has none).
func searchResults(content json.RawMessage) []Source {
	var items []struct {
		Type  string `json:"type"`
		URL   string `json:"url"`
		Title string `json:"title"`
	}
	if len(content) == 0 || content[0] != '[' || json.Unmarshal(content, &items) != nil {
		return nil
	}
	var out []Source
	for _, it := range items {
		if it.URL != "" {
			out = append(out, Source{URL: it.URL, Title: it.Title})
		}
	}
	return out
}

// searchBlocks are the content blocks of Claude's own web search, between the text it wrote
// before searching and the text after.
var searchBlocks = map[string]bool{"server_tool_use": true, "web_search_tool_result": true}

// text is a piece of the answer's text, after a paragraph break when a web search came
// between it and the text before.
func (s *anthropicStream) text(t string) Chunk {
	if s.paragraph {
		s.paragraph = false
		t = "\n\n" + t
	}
	s.wrote = true
	return Chunk{Text: t}
}

type blockKind int

const (
	blockOther  blockKind = iota
	blockCall             // a tool_use of one of the caller's functions
	blockAnswer           // the structured-output tool's input, relayed as text
)

// reasoning returns a chunk with one fragment of the open reasoning block (the first one
// when a delta came without its content_block_start).
func (s *anthropicStream) reasoning(d ReasoningDelta) Chunk {
	if s.thoughts == 0 {
		s.thoughts = 1
	}
	d.Index = s.thoughts - 1
	return Chunk{Reasoning: &d}
}

// toolDelta returns a chunk with one tool-call fragment of the open call.
func (s *anthropicStream) toolDelta(d ToolCallDelta) Chunk {
	s.deltas[0] = d
	return Chunk{ToolCalls: s.deltas[:1:1]}
}

// anthropicAnswerEvents are the stream's event names that carry the answer, its end or an
// error.
var anthropicAnswerEvents = map[string]bool{"message_start": true, "content_block_start": true,
	"content_block_delta": true, "content_block_stop": true, "message_delta": true, "message_stop": true, "error": true}

// PromptUsage implements PromptUsageReporter: the prompt's tokens as Claude counted them
// in message_start.
func (s *anthropicStream) PromptUsage() (Usage, bool) {
	u := s.totals.usage()
	return u, s.started && u.PromptTokens > 0
}

// Recv returns the next text, tool-call, reasoning or final usage chunk, io.EOF after
// message_stop, or an *Error.
func (s *anthropicStream) Recv() (Chunk, error) {
	if s.err != nil {
		return Chunk{}, s.err
	}
	if s.signature != "" {
		sig := s.signature
		s.signature = ""
		return s.reasoning(ReasoningDelta{Signature: sig}), nil
	}
	for {
		ev, err := s.next()
		if err == io.EOF {
			if s.finished {
				return Chunk{}, s.stop(io.EOF) // the stop reason and usage came: a whole answer
			}
			return Chunk{}, s.fail(KindStreamBroken, "stream ended without message_stop", nil)
		}
		if err != nil {
			return Chunk{}, err
		}
		if ev.raw {
			parse := s.parseError
			if parse == nil {
				parse = parseAnthropicError
			}
			return Chunk{}, s.failRaw(ev.data, parse)
		}
		var e anthropicEvent
		if err := decodeUpstream(bytes.TrimSpace(ev.data), &e); err != nil {
			// An event named for a part of the answer is never skipped, whatever its data.
			if !anthropicAnswerEvents[ev.event] && s.skip(ev.data) {
				continue
			}
			return Chunk{}, s.fail(KindStreamBroken, "malformed stream event "+quote(ev.event), err)
		}
		if e.Type == "" {
			e.Type = ev.event
		}
		switch e.Type {
		case "message_start":
			s.started = true
			if e.Message != nil {
				e.Message.Usage.merge(&s.totals)
			}
		case "content_block_start":
			cb := e.ContentBlock
			if cb == nil {
				continue
			}
			s.block, s.blockKind, s.gotInput = e.Index, blockOther, false
			switch {
			case cb.Type == "text" && cb.Text != "":
				return s.text(cb.Text), nil
			case searchBlocks[cb.Type]:
				s.paragraph = s.wrote
				if sources := searchResults(cb.Content); len(sources) > 0 {
					return Chunk{Sources: sources}, nil
				}
			case cb.Type == "tool_use" && s.output != "" && cb.Name == s.output:
				s.blockKind, s.answered = blockAnswer, true
			case cb.Type == "tool_use":
				s.blockKind = blockCall
				s.calls++
				return s.toolDelta(ToolCallDelta{Index: s.calls - 1, ID: cb.ID, Name: cb.Name}), nil
			case cb.Type == "thinking":
				s.thoughts++
				switch {
				case cb.Thinking != "":
					s.signature = cb.Signature
					return s.reasoning(ReasoningDelta{Text: cb.Thinking}), nil
				case cb.Signature != "":
					return s.reasoning(ReasoningDelta{Signature: cb.Signature}), nil
				}
			case cb.Type == "redacted_thinking":
				s.thoughts++
				if cb.Data != "" {
					return s.reasoning(ReasoningDelta{Redacted: cb.Data}), nil
				}
			}
		case "content_block_delta":
			switch {
			case e.Delta.Type == "text_delta" && e.Delta.Text != "":
				return s.text(e.Delta.Text), nil
			case e.Delta.Type == "thinking_delta" && e.Delta.Thinking != "":
				return s.reasoning(ReasoningDelta{Text: e.Delta.Thinking}), nil
			case e.Delta.Type == "signature_delta" && e.Delta.Signature != "":
				return s.reasoning(ReasoningDelta{Signature: e.Delta.Signature}), nil
			case e.Delta.Type == "input_json_delta" && e.Delta.PartialJSON != "" && e.Index == s.block:
				s.gotInput = true
				switch s.blockKind {
				case blockAnswer:
					return Chunk{Text: e.Delta.PartialJSON}, nil
				case blockCall:
					return s.toolDelta(ToolCallDelta{Index: s.calls - 1, Arguments: e.Delta.PartialJSON}), nil
				}
			}
		case "content_block_stop":
			kind, empty := s.blockKind, !s.gotInput
			s.blockKind = blockOther
			if e.Index == s.block && empty {
				switch kind {
				case blockAnswer:
					return Chunk{Text: "{}"}, nil
				case blockCall:
					return s.toolDelta(ToolCallDelta{Index: s.calls - 1, Arguments: "{}"}), nil
				}
			}
		case "message_delta":
			if e.Usage != nil {
				e.Usage.merge(&s.totals)
			}
			stop := e.Delta.StopReason
			u := s.totals.usage()
			if stop == "refusal" {
				return Chunk{}, s.failBilled(KindContentFilter, "the model refused (stop_reason refusal)", &u)
			}
			finish := anthropicFinish(stop)
			s.finished = s.started && stop != ""
			if s.answered && s.calls == 0 && stop == "tool_use" {
				finish = "stop" // structured output (see anthropicOutputTool)
			}
			out := Chunk{FinishReason: finish, Usage: &u}
			if stop == "stop_sequence" {
				out.StopSequence = e.Delta.StopSequence
			}
			return out, nil
		case "message_stop":
			if !s.started {
				return Chunk{}, s.fail(KindStreamBroken, "message_stop without message_start", nil)
			}
			return Chunk{}, s.stop(io.EOF)
		case "error":
			code, msg := "", ""
			if e.Error != nil {
				code, msg = e.Error.Type, e.Error.Message
			}
			return Chunk{}, s.fail(bodyErrorKind(code, msg), msg, nil)
		default:
			// ping and event types added later carry no text.
		}
	}
}

// anthropicSearchTool is Claude's web_search server tool with o's options (5 searches an
// answer unless o says otherwise).
func anthropicSearchTool(o *SearchOptions) map[string]any {
	t := map[string]any{"type": "web_search_20250305", "name": "web_search", "max_uses": 5}
	if o == nil {
		return t
	}
	if o.MaxUses > 0 {
		t["max_uses"] = o.MaxUses
	}
	if len(o.AllowedDomains) > 0 {
		t["allowed_domains"] = o.AllowedDomains
	}
	if len(o.BlockedDomains) > 0 {
		t["blocked_domains"] = o.BlockedDomains
	}
	if o.Location != nil {
		t["user_location"] = o.Location.approximate()
	}
	return t
}
