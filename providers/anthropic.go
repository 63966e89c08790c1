package providers

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
)

// DefaultAnthropicBaseURL is the Anthropic API root used when Config.BaseURL is empty.
const DefaultAnthropicBaseURL = "https://api.anthropic.com"

// AnthropicVersion is the anthropic-version header sent with every request.
const AnthropicVersion = "2023-06-01"

// DefaultAnthropicMaxTokens is sent as max_tokens (which the Messages API requires) when
// Request.MaxTokens is 0.
const DefaultAnthropicMaxTokens = 4096

// Anthropic speaks the Anthropic Messages API (POST {base}/v1/messages, x-api-key auth,
// typed SSE events ending with message_stop). System messages go to the "system" field.
// Finish reasons are normalised: end_turn and stop_sequence → "stop", max_tokens →
// "length", tool_use → "tool_calls"; a "refusal" fails with KindContentFilter.
type Anthropic struct {
	ep      endpoint
	baseURL string
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
	base = strings.TrimSuffix(base, "/v1")
	return &Anthropic{ep: newEndpoint(cfg), baseURL: base}
}

// Name returns the provider prefix.
func (a *Anthropic) Name() string { return a.ep.cfg.Name }

// Configured reports whether an API key is set.
func (a *Anthropic) Configured() bool { return a.ep.cfg.APIKey != "" || a.ep.cfg.KeyOptional }

// SupportsSearch reports true: Claude models take the server-side web_search tool.
func (a *Anthropic) SupportsSearch(model string) bool {
	return !strings.HasPrefix(model, "claude-2") && !strings.HasPrefix(model, "claude-instant") &&
		!strings.HasPrefix(model, "claude-3-haiku") && !strings.HasPrefix(model, "claude-3-opus") &&
		!strings.HasPrefix(model, "claude-3-sonnet")
}

type anthropicMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type anthropicRequest struct {
	Model       string             `json:"model"`
	MaxTokens   int                `json:"max_tokens"`
	System      string             `json:"system,omitempty"`
	Messages    []anthropicMessage `json:"messages"`
	Temperature *float64           `json:"temperature,omitempty"`
	TopP        *float64           `json:"top_p,omitempty"`
	Stop        []string           `json:"stop_sequences,omitempty"`
	Stream      bool               `json:"stream,omitempty"`
	Tools       []map[string]any   `json:"tools,omitempty"`
}

func (a *Anthropic) body(req *Request, stream bool) anthropicRequest {
	b := anthropicRequest{Model: req.Model, MaxTokens: req.MaxTokens, Temperature: req.Temperature, TopP: req.TopP,
		Stop: req.Stop, Stream: stream}
	if b.MaxTokens <= 0 {
		b.MaxTokens = DefaultAnthropicMaxTokens
	}
	var system []string
	for _, m := range req.Messages {
		if m.Role == "system" || m.Role == "developer" {
			system = append(system, m.Content)
			continue
		}
		b.Messages = append(b.Messages, anthropicMessage{Role: m.Role, Content: m.Content})
	}
	b.System = strings.Join(system, "\n\n")
	if req.Search {
		b.Tools = []map[string]any{{"type": "web_search_20250305", "name": "web_search", "max_uses": 5}}
	}
	return b
}

func (a *Anthropic) start(ctx context.Context, req *Request, stream bool) (*call, error) {
	if err := a.ep.checkKey(req.Model); err != nil {
		return nil, err
	}
	if req.Search && !a.SupportsSearch(req.Model) {
		return nil, a.ep.errorf(req.Model, KindBadRequest, "model %s/%s does not support search", a.Name(), req.Model)
	}
	h := http.Header{}
	h.Set("X-Api-Key", a.ep.cfg.APIKey)
	h.Set("Anthropic-Version", AnthropicVersion)
	if stream {
		h.Set("Accept", "text/event-stream")
	}
	return a.ep.send(ctx, req.Model, a.baseURL+"/v1/messages", h, a.body(req, stream), parseAnthropicError)
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
}

type anthropicTotals struct{ input, output, cacheCreation, cacheRead int }

// usage converts to Usage: Anthropic's input_tokens excludes cache reads and writes.
func (t anthropicTotals) usage() Usage {
	return Usage{
		PromptTokens:        t.input + t.cacheRead + t.cacheCreation,
		CompletionTokens:    t.output,
		CachedTokens:        t.cacheRead,
		CacheCreationTokens: t.cacheCreation,
	}
}

func anthropicFinish(stop string) string {
	switch stop {
	case "end_turn", "stop_sequence":
		return "stop"
	case "max_tokens":
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
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StopReason string         `json:"stop_reason"`
	Usage      anthropicUsage `json:"usage"`
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
		return nil, c.failure(KindStreamBroken, "malformed response body", err)
	}
	if r.Type == "error" {
		code, msg := parseAnthropicError(raw)
		return nil, c.failure(bodyErrorKind(code, msg), msg, nil)
	}
	if r.StopReason == "refusal" {
		return nil, c.failure(KindContentFilter, "the model refused (stop_reason refusal)", nil)
	}
	var text strings.Builder
	for _, b := range r.Content {
		if b.Type == "text" {
			text.WriteString(b.Text)
		}
	}
	var t anthropicTotals
	r.Usage.merge(&t)
	return &Response{Text: text.String(), Usage: t.usage(), FinishReason: anthropicFinish(r.StopReason), Model: r.Model}, nil
}

// Stream starts a streamed Messages request.
func (a *Anthropic) Stream(ctx context.Context, req *Request) (Stream, error) {
	c, err := a.start(ctx, req, true)
	if err != nil {
		return nil, err
	}
	return &anthropicStream{streamState: newStreamState(c)}, nil
}

type anthropicEvent struct {
	Type    string `json:"type"`
	Message *struct {
		Usage anthropicUsage `json:"usage"`
	} `json:"message"`
	ContentBlock *struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content_block"`
	Delta *struct {
		Type       string `json:"type"`
		Text       string `json:"text"`
		StopReason string `json:"stop_reason"`
	} `json:"delta"`
	Usage *anthropicUsage `json:"usage"`
	Error *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

type anthropicStream struct {
	streamState
	totals  anthropicTotals
	started bool
}

// Recv returns the next text or final usage chunk, io.EOF after message_stop, or an *Error.
func (s *anthropicStream) Recv() (Chunk, error) {
	if s.err != nil {
		return Chunk{}, s.err
	}
	for {
		ev, err := s.next()
		if err == io.EOF {
			return Chunk{}, s.fail(KindStreamBroken, "stream ended without message_stop", nil)
		}
		if err != nil {
			return Chunk{}, err
		}
		if ev.raw {
			return Chunk{}, s.failRaw(ev.data, parseAnthropicError)
		}
		var e anthropicEvent
		if err := decodeUpstream(bytes.TrimSpace(ev.data), &e); err != nil {
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
			if e.ContentBlock != nil && e.ContentBlock.Type == "text" && e.ContentBlock.Text != "" {
				return Chunk{Text: e.ContentBlock.Text}, nil
			}
		case "content_block_delta":
			if e.Delta != nil && e.Delta.Type == "text_delta" && e.Delta.Text != "" {
				return Chunk{Text: e.Delta.Text}, nil
			}
		case "message_delta":
			if e.Usage != nil {
				e.Usage.merge(&s.totals)
			}
			stop := ""
			if e.Delta != nil {
				stop = e.Delta.StopReason
			}
			if stop == "refusal" {
				return Chunk{}, s.fail(KindContentFilter, "the model refused (stop_reason refusal)", nil)
			}
			u := s.totals.usage()
			return Chunk{FinishReason: anthropicFinish(stop), Usage: &u}, nil
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
			// ping, content_block_stop and event types added later carry no text.
		}
	}
}
