package client

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"strings"
)

// chatCompletionsPath is the OpenAI-compatible endpoint of the gateway.
const chatCompletionsPath = "/v1/chat/completions"

// ChatCompletionMessage is an OpenAI chat message with string content.
type ChatCompletionMessage struct {
	// Role is "system", "developer" (read as "system"), "user", "assistant" or "tool".
	Role    string `json:"role"`
	Content string `json:"content"`
	// Name is OpenAI's optional participant name.
	Name string `json:"name,omitempty"`
	// ToolCalls are the calls of an assistant message (see Param).
	ToolCalls []ChatToolCall `json:"tool_calls,omitempty"`
	// ToolCallID is the call a "tool" message answers (see ToolResult).
	ToolCallID string `json:"tool_call_id,omitempty"`
	// ThinkingBlocks are the signed reasoning blocks of an assistant message, sent back as
	// the answer carried them (see ChatCompletionResponseMessage.Param): Claude continues
	// its reasoning with them, and needs them in a tool loop with thinking on.
	ThinkingBlocks []ThinkingBlock `json:"thinking_blocks,omitempty"`
}

// ThinkingBlock is a block of Claude's reasoning: {"type": "thinking", "thinking",
// "signature"} or {"type": "redacted_thinking", "data"} (LiteLLM's thinking_blocks).
type ThinkingBlock struct {
	Type      string `json:"type"`
	Thinking  string `json:"thinking,omitempty"`
	Signature string `json:"signature,omitempty"`
	Data      string `json:"data,omitempty"`
}

// Thinking asks for reasoning with a token budget ({"type": "enabled", "budget_tokens"}),
// adaptive at the request's ReasoningEffort ({"type": "adaptive"}) or none
// ({"type": "disabled"}).
type Thinking struct {
	Type         string `json:"type"`
	BudgetTokens int    `json:"budget_tokens,omitempty"`
}

// ChatStreamOptions is OpenAI's stream_options object.
type ChatStreamOptions struct {
	// IncludeUsage asks for a last chunk carrying usage and no choices.
	IncludeUsage bool `json:"include_usage,omitempty"`
}

// ChatCompletionRequest is the body of the OpenAI-compatible POST /v1/chat/completions.
// Stream is set by the method called (ChatCompletion or ChatCompletionStream), not by the
// caller.
type ChatCompletionRequest struct {
	// Model is "provider/model", e.g. "openai/gpt-4o-mini".
	Model    string                  `json:"model"`
	Messages []ChatCompletionMessage `json:"messages"`
	// Temperature is between 0 and 2; nil for the model's preset.
	Temperature *float64 `json:"temperature,omitempty"`
	// MaxTokens bounds the generated tokens; nil for the model's default.
	MaxTokens *int `json:"max_tokens,omitempty"`
	// MaxCompletionTokens is OpenAI's newer name for MaxTokens and wins over it.
	MaxCompletionTokens *int `json:"max_completion_tokens,omitempty"`
	// TopP is nucleus sampling (0..1); nil for the model's default.
	TopP *float64 `json:"top_p,omitempty"`
	// Stop lists up to 4 sequences that end the answer.
	Stop          []string           `json:"stop,omitempty"`
	Stream        bool               `json:"stream,omitempty"`
	StreamOptions *ChatStreamOptions `json:"stream_options,omitempty"`
	// FallbackModels are tried in order when Model fails (Switchyard extension).
	FallbackModels []string `json:"fallback_models,omitempty"`
	// MaxRetries overrides the gateway's retries per model (Switchyard extension).
	MaxRetries *int `json:"max_retries,omitempty"`
	// Tools are the functions the model may call (see chattools.go).
	Tools []ChatTool `json:"tools,omitempty"`
	// ToolChoice is nil for auto; see ForceFunction.
	ToolChoice *ChatToolChoice `json:"tool_choice,omitempty"`
	// ParallelToolCalls false asks for at most one tool call per answer.
	ParallelToolCalls *bool `json:"parallel_tool_calls,omitempty"`
	// ResponseFormat asks for JSON output; see JSONSchemaFormat.
	ResponseFormat *ChatResponseFormat `json:"response_format,omitempty"`
	// ReasoningEffort ("none", "minimal", "low", "medium", "high", "xhigh", "max") asks
	// every model that can reason to do so: OpenAI's reasoning models as reasoning_effort,
	// Claude and Gemini as a thinking budget. Thinking gives a budget instead.
	ReasoningEffort string    `json:"reasoning_effort,omitempty"`
	Thinking        *Thinking `json:"thinking,omitempty"`
	// Cache is the request's say over the server's response cache (Switchyard extension,
	// LiteLLM's cache object).
	Cache *CacheControl `json:"cache,omitempty"`
	// Metadata is OpenAI's; its "tags" (LiteLLM's: a []string) label the request for cost
	// attribution.
	Metadata map[string]any `json:"metadata,omitempty"`
	// Guardrails names the server's opt-in guardrails to run on the request (LiteLLM's
	// request-body field); a block is an *Error matching ErrGuardrailBlocked.
	Guardrails []string `json:"guardrails,omitempty"`
	// Logprobs asks for the log probability of each token of the answer (each choice's
	// Logprobs, and each chunk's own tokens when streamed); TopLogprobs (0 to 20, with
	// Logprobs only) for that many likeliest alternatives at each position. Only models
	// that give them are tried; none fitting is a 400 *Error naming logprobs.
	Logprobs    bool `json:"logprobs,omitempty"`
	TopLogprobs int  `json:"top_logprobs,omitempty"`
}

// ChatCompletionUsage is OpenAI's usage object.
type ChatCompletionUsage struct {
	PromptTokens            int                      `json:"prompt_tokens"`
	CompletionTokens        int                      `json:"completion_tokens"`
	TotalTokens             int                      `json:"total_tokens"`
	PromptTokensDetails     *ChatPromptTokensDetails `json:"prompt_tokens_details,omitempty"`
	CompletionTokensDetails *ChatCompletionDetails   `json:"completion_tokens_details,omitempty"`
}

// ChatPromptTokensDetails breaks prompt tokens down.
type ChatPromptTokensDetails struct {
	CachedTokens int `json:"cached_tokens"`
}

// ChatCompletionDetails breaks completion tokens down.
type ChatCompletionDetails struct {
	ReasoningTokens int `json:"reasoning_tokens"`
}

// ChatCompletionResponseMessage is the assistant message of a choice. Content is "" when
// the answer is only tool calls (the server sends null).
type ChatCompletionResponseMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
	// Refusal is the model's explanation when it declined to answer in the requested format.
	Refusal string `json:"refusal"`
	// ToolCalls are the functions the model called; FinishReason is then "tool_calls".
	ToolCalls []ChatToolCall `json:"tool_calls,omitempty"`
	// ReasoningContent is the reasoning the model showed (Claude's thinking, Gemini's
	// thought summaries, DeepSeek's reasoning); ThinkingBlocks Claude's signed blocks, which
	// Param carries back.
	ReasoningContent string          `json:"reasoning_content,omitempty"`
	ThinkingBlocks   []ThinkingBlock `json:"thinking_blocks,omitempty"`
}

// ChatCompletionChoice is one choice of a chat.completion.
type ChatCompletionChoice struct {
	Index   int                           `json:"index"`
	Message ChatCompletionResponseMessage `json:"message"`
	// FinishReason is "stop", "length", "tool_calls", "content_filter".
	FinishReason string `json:"finish_reason"`
	// Logprobs are the choice's tokens' log probabilities when the request asked for them
	// (ChatCompletionRequest.Logprobs); nil otherwise.
	Logprobs *Logprobs `json:"logprobs,omitempty"`
}

// ChatCompletionExtension is the "switchyard" member of a chat.completion: the gateway's
// provider, costs, latency and upstream attempts.
type ChatCompletionExtension struct {
	Provider string `json:"provider"`
	// ModelGroup is the model group the request named, when it named one.
	ModelGroup string `json:"model_group,omitempty"`
	Costs      Costs  `json:"costs"`
	// Latency is milliseconds from request received to response complete.
	Latency int64 `json:"latency"`
	// TTFT is milliseconds to the first token.
	TTFT     int64     `json:"ttft"`
	Attempts []Attempt `json:"attempts"`
	// Cache says how the response cache took part (nil: it did not).
	Cache *CacheStatus `json:"cache,omitempty"`
}

// ChatCompletionResponse is an OpenAI "chat.completion" object.
type ChatCompletionResponse struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	// Model is "provider/model" of the model that answered.
	Model   string                 `json:"model"`
	Choices []ChatCompletionChoice `json:"choices"`
	Usage   ChatCompletionUsage    `json:"usage"`
	// Switchyard is the gateway's extension, nil when the server sent none.
	Switchyard *ChatCompletionExtension `json:"switchyard,omitempty"`
}

// Text returns the content of the first choice ("" when there is none).
func (r *ChatCompletionResponse) Text() string {
	if len(r.Choices) == 0 {
		return ""
	}
	return r.Choices[0].Message.Content
}

// ChatCompletionDelta is the incremental message of a chunk.
type ChatCompletionDelta struct {
	Role    string `json:"role,omitempty"`
	Content string `json:"content,omitempty"`
	// ToolCalls are tool-call fragments (see ChatToolCallDelta).
	ToolCalls []ChatToolCallDelta `json:"tool_calls,omitempty"`
	// ReasoningContent is a piece of the model's reasoning; ThinkingBlocks a signed block,
	// whole, once it is complete (ChatCompletionStream.ThinkingBlocks gathers them).
	ReasoningContent string          `json:"reasoning_content,omitempty"`
	ThinkingBlocks   []ThinkingBlock `json:"thinking_blocks,omitempty"`
}

// ChatCompletionChunkChoice is one choice delta of a chunk.
type ChatCompletionChunkChoice struct {
	Index int                 `json:"index"`
	Delta ChatCompletionDelta `json:"delta"`
	// FinishReason is nil until the choice's last chunk.
	FinishReason *string `json:"finish_reason"`
	// Logprobs are the log probabilities of this delta's tokens when the request asked for
	// them (ChatCompletionRequest.Logprobs); nil otherwise.
	Logprobs *Logprobs `json:"logprobs,omitempty"`
}

// ChatCompletionChunk is an OpenAI "chat.completion.chunk" object. The usage chunk asked
// for with StreamOptions.IncludeUsage has no choices and a non-nil Usage.
type ChatCompletionChunk struct {
	ID      string                      `json:"id"`
	Object  string                      `json:"object"`
	Created int64                       `json:"created"`
	Model   string                      `json:"model"`
	Choices []ChatCompletionChunkChoice `json:"choices"`
	Usage   *ChatCompletionUsage        `json:"usage,omitempty"`
	// Switchyard is the gateway's extension on the usage chunk (StreamOptions.IncludeUsage):
	// the whole answer's provider, costs, timing and attempts; nil on other chunks and
	// from servers that send none.
	Switchyard *ChatCompletionExtension `json:"switchyard,omitempty"`
}

// Text returns the content delta of the chunk's first choice ("" when there is none).
func (c ChatCompletionChunk) Text() string {
	if len(c.Choices) == 0 {
		return ""
	}
	return c.Choices[0].Delta.Content
}

// ChatStreamError is the OpenAI error object that ends a chat stream which failed after
// its first chunk: the answer is incomplete.
type ChatStreamError struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Code    string `json:"code"`
	Param   string `json:"param"`
	// RequestID is the x-request-id the stream was answered with
	// (ChatCompletionStream.RequestID).
	RequestID string `json:"-"`
}

// Error names the failure's type, code and message.
func (e *ChatStreamError) Error() string {
	if e.Code != "" {
		return fmt.Sprintf("switchyard: chat stream failed: %s (%s): %s", e.Type, e.Code, e.Message)
	}
	return fmt.Sprintf("switchyard: chat stream failed: %s: %s", e.Type, e.Message)
}

// ChatCompletion asks the OpenAI-compatible endpoint for a completion and waits for the
// whole answer. Failures answered by the server are *Error (Kind is OpenAI's error type).
func (c *Client) ChatCompletion(ctx context.Context, req *ChatCompletionRequest) (*ChatCompletionResponse, error) {
	r := *req
	r.Stream = false
	r.StreamOptions = nil
	var out ChatCompletionResponse
	if err := c.do(ctx, http.MethodPost, chatCompletionsPath, nil, &r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ChatCompletionStream reads a streamed chat completion as OpenAI chat.completion.chunk
// events. Call Next until it returns false, then Err: it is nil only when the stream ended
// with "data: [DONE]". Close releases the connection early.
//
//	st, err := c.ChatCompletionStream(ctx, req)
//	defer st.Close()
//	for st.Next() { fmt.Print(st.Chunk().Text()) }
//	if err := st.Err(); err != nil { ... }
type ChatCompletionStream struct {
	requestID string
	body      io.ReadCloser
	events    *sseReader
	pending   []ChatCompletionChunk // chunks made from a non-streamed answer
	chunk     ChatCompletionChunk
	usage     *ChatCompletionUsage
	summary   *ChatCompletionExtension
	calls     toolCallAssembler
	// thinking gathers the first choice's signed reasoning blocks.
	thinking []ThinkingBlock
	err      error
	done     bool
}

// ChatCompletionStream asks the OpenAI-compatible endpoint for a streamed completion.
// Failures before the stream starts (bad request, no key, every model failing before the
// first token) are returned here as *Error; they are retried under the client's
// RetryPolicy, a started stream never is.
func (c *Client) ChatCompletionStream(ctx context.Context, req *ChatCompletionRequest) (*ChatCompletionStream, error) {
	r := *req
	r.Stream = true
	hr, err := c.newRequest(ctx, http.MethodPost, chatCompletionsPath, nil, &r)
	if err != nil {
		return nil, err
	}
	hr.Header.Set("Accept", "text/event-stream")
	resp, err := c.send(hr)
	if err != nil {
		return nil, err
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		// A server may answer a non-streamed chat.completion; present it as chunks.
		defer resp.Body.Close()
		var out ChatCompletionResponse
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			return nil, fmt.Errorf("client: decoding chat completion: %w", err)
		}
		return &ChatCompletionStream{requestID: resp.Header.Get("X-Request-Id"), body: io.NopCloser(strings.NewReader("")), pending: chunksOf(&out, r.StreamOptions)}, nil
	}
	return &ChatCompletionStream{requestID: resp.Header.Get("X-Request-Id"), body: resp.Body, events: newSSEReader(resp.Body)}, nil
}

// chunksOf renders a whole chat.completion as the chunks a stream of it would carry.
func chunksOf(r *ChatCompletionResponse, opts *ChatStreamOptions) []ChatCompletionChunk {
	base := ChatCompletionChunk{ID: r.ID, Object: "chat.completion.chunk", Created: r.Created, Model: r.Model}
	ck := base
	for _, ch := range r.Choices {
		fr := ch.FinishReason
		d := ChatCompletionDelta{Role: ch.Message.Role, Content: ch.Message.Content,
			ReasoningContent: ch.Message.ReasoningContent, ThinkingBlocks: ch.Message.ThinkingBlocks}
		for i, tc := range ch.Message.ToolCalls {
			d.ToolCalls = append(d.ToolCalls, ChatToolCallDelta{Index: i, ID: tc.ID, Type: tc.Type, Function: tc.Function})
		}
		ck.Choices = append(ck.Choices, ChatCompletionChunkChoice{Index: ch.Index, Delta: d, FinishReason: &fr, Logprobs: ch.Logprobs})
	}
	out := []ChatCompletionChunk{ck}
	if opts != nil && opts.IncludeUsage {
		u := r.Usage
		ck := base
		ck.Choices = []ChatCompletionChunkChoice{}
		ck.Usage, ck.Switchyard = &u, r.Switchyard
		out = append(out, ck)
	}
	return out
}

// Next advances to the next chunk. It returns false at the end of the stream or on
// failure; Err tells which.
func (s *ChatCompletionStream) Next() bool {
	if s.events == nil { // a non-streamed answer
		if s.done || len(s.pending) == 0 {
			s.done = true
			return false
		}
		s.setChunk(s.pending[0])
		s.pending = s.pending[1:]
		return true
	}
	for !s.done {
		event, data, err := s.events.next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				s.fail(fmt.Errorf("%w: the connection ended before [DONE]", ErrStreamTruncated))
			} else {
				s.fail(fmt.Errorf("client: reading chat stream: %w", err))
			}
			return false
		}
		if data == "[DONE]" {
			s.done = true
			s.body.Close()
			return false
		}
		if event == "error" {
			s.fail(chatEventError(data))
			return false
		}
		var ev struct {
			Error json.RawMessage `json:"error"`
			ChatCompletionChunk
		}
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			s.fail(fmt.Errorf("client: malformed chat stream event %q: %w", truncate(data, 120), err))
			return false
		}
		if len(ev.Error) > 0 && string(ev.Error) != "null" {
			s.fail(chatStreamError(ev.Error))
			return false
		}
		s.setChunk(ev.ChatCompletionChunk)
		return true
	}
	return false
}

// chatEventError reads the payload of an "event: error", whatever its shape: OpenAI's
// {"error": {...}}, the error object itself, Switchyard's {"error": kind, "message"}, a JSON
// string, or text that is not JSON (the whole of it is the message). Type is "error" when
// the payload names none.
func chatEventError(data string) *ChatStreamError {
	e := readChatEventError(data)
	e.Type = cmp.Or(e.Type, "error") // an envelope or bare object without one, JSON null
	return e
}

// readChatEventError is chatEventError's reading, Type left as the payload gives it.
func readChatEventError(data string) *ChatStreamError {
	var body struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	var text string
	switch {
	case json.Unmarshal([]byte(data), &body) == nil:
		var kind string
		switch {
		case len(body.Error) == 0 || string(body.Error) == "null":
			return chatStreamError(json.RawMessage(data))
		case json.Unmarshal(body.Error, &kind) == nil && body.Message != "":
			return &ChatStreamError{Message: body.Message, Type: cmp.Or(kind, "error")}
		}
		return chatStreamError(body.Error)
	case json.Unmarshal([]byte(data), &text) == nil:
		return &ChatStreamError{Message: text, Type: "error"}
	}
	return &ChatStreamError{Message: data, Type: "error"}
}

// chatStreamError reads an OpenAI error object; code and param may be strings, numbers or
// null, and a bare string is taken as the message.
func chatStreamError(raw json.RawMessage) *ChatStreamError {
	var obj struct {
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
		Param   json.RawMessage `json:"param"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		var msg string
		if json.Unmarshal(raw, &msg) != nil {
			msg = truncate(string(raw), 200)
		}
		return &ChatStreamError{Message: msg, Type: "error"}
	}
	scalar := func(r json.RawMessage) string {
		var s string
		if json.Unmarshal(r, &s) == nil {
			return s
		}
		if string(r) == "null" {
			return ""
		}
		return string(r)
	}
	return &ChatStreamError{Message: obj.Message, Type: obj.Type, Code: scalar(obj.Code), Param: scalar(obj.Param)}
}

func (s *ChatCompletionStream) setChunk(ck ChatCompletionChunk) {
	s.chunk = ck
	if ck.Usage != nil {
		s.usage = ck.Usage
		s.summary = ck.Switchyard
	}
	if len(ck.Choices) > 0 {
		s.calls.add(ck.Choices[0].Delta.ToolCalls)
		s.thinking = append(s.thinking, ck.Choices[0].Delta.ThinkingBlocks...)
	}
}

// ThinkingBlocks returns the first choice's signed reasoning blocks read so far (each comes
// whole once complete); after a complete stream they are the answer's, to send back with
// its assistant message (ChatCompletionMessage.ThinkingBlocks).
func (s *ChatCompletionStream) ThinkingBlocks() []ThinkingBlock {
	return append([]ThinkingBlock(nil), s.thinking...)
}

// ToolCalls returns the tool calls of the first choice assembled from the fragments read
// so far; after a complete stream they are the answer's calls, as ChatCompletion returns
// them.
func (s *ChatCompletionStream) ToolCalls() []ChatToolCall {
	return append([]ChatToolCall(nil), s.calls.calls...)
}

func (s *ChatCompletionStream) fail(err error) {
	if se, ok := err.(*ChatStreamError); ok {
		se.RequestID = s.requestID
	}
	s.err = err
	s.done = true
	s.body.Close()
}

// Chunk returns the chunk Next advanced to.
func (s *ChatCompletionStream) Chunk() ChatCompletionChunk { return s.chunk }

// Usage returns the usage chunk's usage once it arrived (asked for with
// StreamOptions.IncludeUsage), else nil.
func (s *ChatCompletionStream) Usage() *ChatCompletionUsage { return s.usage }

// Summary returns the gateway's summary of the whole answer sent with the usage chunk
// (provider, costs, latency, attempts; asked for with StreamOptions.IncludeUsage), else
// nil: what ChatCompletionResponse.Switchyard says of a whole answer.
func (s *ChatCompletionStream) Summary() *ChatCompletionExtension { return s.summary }

// Err returns the failure that ended the stream: a *ChatStreamError sent by the server,
// ErrStreamTruncated when the stream ended without "data: [DONE]", or a transport or
// decoding error. It is nil after a complete stream.
func (s *ChatCompletionStream) Err() error { return s.err }

// RequestID is the x-request-id the server answered the stream with: the request's id in
// its usage history; "" when it sent none.
func (s *ChatCompletionStream) RequestID() string { return s.requestID }

// Close releases the connection. It is safe to call more than once.
func (s *ChatCompletionStream) Close() error {
	s.done = true
	return s.body.Close()
}

// Chunks ranges over the chunks; a failure is yielded last with a zero chunk.
//
//	for ck, err := range st.Chunks() { if err != nil { ... }; fmt.Print(ck.Text()) }
func (s *ChatCompletionStream) Chunks() iter.Seq2[ChatCompletionChunk, error] {
	return rangeStream(s.Next, s.Chunk, s.Err, s.Close)
}
