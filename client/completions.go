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

// ContentBlock is one block of a completions message; Type is "text".
type ContentBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// ChatMessage is one turn of a completions conversation.
type ChatMessage struct {
	// Role is "system", "user" or "assistant".
	Role    string         `json:"role"`
	Content []ContentBlock `json:"content"`
}

// TextMessage returns a message with one text block.
func TextMessage(role, text string) ChatMessage {
	return ChatMessage{Role: role, Content: []ContentBlock{{Type: "text", Text: text}}}
}

// CompletionRequest is the body of POST /api/v1/completions. Stream is set by the method
// called (Complete or CompleteStream), not by the caller.
type CompletionRequest struct {
	Messages []ChatMessage `json:"messages"`
	// Models are "provider/model" strings, at least one.
	Models []string `json:"models"`
	// FallbackModels are tried in order after every model in Models failed.
	FallbackModels []string `json:"fallback_models,omitempty"`
	Stream         bool     `json:"stream,omitempty"`
	// Temperature is between 0 and 1; nil for the model's preset.
	Temperature *float64 `json:"temperature,omitempty"`
	MaxTokens   int      `json:"maxTokens,omitempty"`
	// MaxRetries is the retries of a retryable failure per model; nil for the default.
	MaxRetries *int `json:"maxRetries,omitempty"`
	Search     bool `json:"search,omitempty"`
	// ConversationID continues a stored conversation.
	ConversationID string `json:"conversationId,omitempty"`
	// Cache is the request's say over the server's response cache (nil: the server's
	// defaults).
	Cache *CacheControl `json:"cache,omitempty"`
	// Tags label the request for cost attribution (the usage log's per-tag totals) and,
	// for a tag-filtered model group, select its deployments ("!tag" leaves out those
	// carrying tag, "&tag" requires it); at most 16, each 1-64 letters, digits or . _ : / -.
	Tags []string `json:"tags,omitempty"`
	// Guardrails names the server's opt-in guardrails to run on the request; a block is an
	// *Error matching ErrGuardrailBlocked.
	Guardrails []string `json:"guardrails,omitempty"`
	// Logprobs asks for the log probability of each token of the answer
	// (Completion.Logprobs, and each Chunk's own tokens when streamed), TopLogprobs (0 to
	// 20, with Logprobs only) for that many likeliest alternatives at each position. Only
	// the models that give them are tried; none of the request's is a 422 *Error naming
	// logprobs.
	Logprobs    bool `json:"logprobs,omitempty"`
	TopLogprobs int  `json:"top_logprobs,omitempty"`
}

// Logprobs are the log probabilities of an answer's tokens, in OpenAI's
// choices[].logprobs shape: Content the text's tokens, Refusal a refusal's.
type Logprobs struct {
	Content []TokenLogprob `json:"content"`
	Refusal []TokenLogprob `json:"refusal,omitempty"`
}

// TokenLogprob is one token of an answer with its (natural) log probability, its UTF-8
// bytes, and the likeliest tokens at its position (CompletionRequest.TopLogprobs of them).
type TokenLogprob struct {
	Token       string       `json:"token"`
	Logprob     float64      `json:"logprob"`
	Bytes       []int        `json:"bytes,omitempty"`
	TopLogprobs []TopLogprob `json:"top_logprobs,omitempty"`
}

// TopLogprob is one of the likeliest tokens at a position of the answer.
type TopLogprob struct {
	Token   string  `json:"token"`
	Logprob float64 `json:"logprob"`
	Bytes   []int   `json:"bytes,omitempty"`
}

// CacheControl is a request's say over the server's response cache (serve --cache), in
// LiteLLM's words.
type CacheControl struct {
	// NoCache asks the model even when the cache has the answer (the new answer is kept).
	NoCache bool `json:"no-cache,omitempty"`
	// NoStore keeps the answer out of the cache.
	NoStore bool `json:"no-store,omitempty"`
	// TTL is how many seconds to keep the answer (0: the server's default).
	TTL float64 `json:"ttl,omitempty"`
	// MaxAge accepts a cached answer only when at most this many seconds old (0: any age).
	MaxAge float64 `json:"s-maxage,omitempty"`
	// Namespace keeps these answers apart from the key's others.
	Namespace string `json:"namespace,omitempty"`
	// Use asks for the cache when the server caches only on request (--cache-opt-in).
	Use bool `json:"use-cache,omitempty"`
	// SimilarityThreshold is this request's least cosine similarity of a semantic hit, 0-1
	// (the server's --cache-similarity-threshold when nil).
	SimilarityThreshold *float64 `json:"similarity_threshold,omitempty"`
	// NoSemantic keeps this request to exact matches (nothing embedded).
	NoSemantic bool `json:"no-semantic,omitempty"`
}

// CacheStatus says how the server's response cache took part in an answer.
type CacheStatus struct {
	// Result is "hit" (no model was called; the costs are 0), "miss" or "bypass".
	Result string `json:"result"`
	// Key identifies the cached answer.
	Key string `json:"key"`
	// AgeSeconds is how old a hit's answer is.
	AgeSeconds int64 `json:"age_seconds,omitempty"`
	// SavedUSD is what a hit's answer cost when it was made.
	SavedUSD float64 `json:"saved_usd,omitempty"`
	// Semantic says a hit was found by meaning (--cache-semantic-model); Key is then the
	// answer's, made for the request it was similar to.
	Semantic bool `json:"semantic,omitempty"`
	// Similarity is a semantic hit's cosine similarity to that request.
	Similarity float64 `json:"similarity,omitempty"`
}

// AssistantMessage is the generated message (role "assistant", type "text").
type AssistantMessage struct {
	Role    string         `json:"role"`
	Type    string         `json:"type"`
	Content []ContentBlock `json:"content"`
}

// Costs are the USD cost of a completion. PriceKnown is false when the server has no
// price for the model (the amounts are then 0).
type Costs struct {
	InputTokensCost  float64 `json:"input_tokens_cost"`
	OutputTokensCost float64 `json:"output_tokens_cost"`
	TotalTokensCost  float64 `json:"total_tokens_cost"`
	PriceKnown       bool    `json:"price_known"`
}

// Usage is the token usage of a completion.
type Usage struct {
	PromptTokens     int   `json:"promptTokens"`
	CompletionTokens int   `json:"completionTokens"`
	TotalTokens      int   `json:"totalTokens"`
	ReasoningTokens  int   `json:"reasoningTokens"`
	CachedTokens     int   `json:"cachedTokens"`
	Costs            Costs `json:"costs"`
}

// Attempt is one upstream call the gateway made for a request.
type Attempt struct {
	Model     string `json:"model"`
	Outcome   string `json:"outcome"`
	Kind      string `json:"kind,omitempty"`
	Error     string `json:"error,omitempty"`
	LatencyMS int64  `json:"latency_ms"`
}

// Completion is the answer of a completion request (and the final event of a stream).
type Completion struct {
	Provider          string           `json:"provider"`
	Model             string           `json:"model"`
	ResponseMessageID string           `json:"responseMessageId"`
	Message           AssistantMessage `json:"message"`
	ConversationID    string           `json:"conversationId"`
	ConversationTitle string           `json:"conversationTitle"`
	Usage             Usage            `json:"usage"`
	// UsageEstimated says the upstream reported no usage and the gateway counted the
	// tokens itself (Usage and its costs are then an estimate).
	UsageEstimated bool `json:"usage_estimated,omitempty"`
	// Latency is milliseconds from request received to response complete.
	Latency int64 `json:"latency"`
	// TTFT is milliseconds to the first token.
	TTFT         int64     `json:"ttft"`
	FinishReason string    `json:"finishReason,omitempty"`
	Attempts     []Attempt `json:"attempts,omitempty"`
	// Cache says how the response cache took part (nil: it did not).
	Cache *CacheStatus `json:"cache,omitempty"`
	// Logprobs are the answer's tokens' log probabilities when the request asked for them
	// (CompletionRequest.Logprobs); nil otherwise.
	Logprobs *Logprobs `json:"logprobs,omitempty"`
}

// Text returns the generated text.
func (c *Completion) Text() string {
	var b strings.Builder
	for _, blk := range c.Message.Content {
		b.WriteString(blk.Text)
	}
	return b.String()
}

// Chunk is one streamed fragment.
type Chunk struct {
	Provider          string           `json:"provider"`
	Model             string           `json:"model"`
	ResponseMessageID string           `json:"responseMessageId"`
	Type              string           `json:"type"`
	Text              string           `json:"text"`
	Message           AssistantMessage `json:"message"`
	// Logprobs are the log probabilities of this fragment's tokens when the request asked
	// for them (CompletionRequest.Logprobs); nil otherwise.
	Logprobs *Logprobs `json:"logprobs,omitempty"`
}

// Complete asks for a completion and waits for the whole answer.
func (c *Client) Complete(ctx context.Context, req *CompletionRequest) (*Completion, error) {
	r := *req
	r.Stream = false
	var out Completion
	if err := c.do(ctx, http.MethodPost, "/api/v1/completions", nil, &r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// StreamError is the error event that ends a stream which failed after its first
// fragment: the answer is incomplete.
type StreamError struct {
	Kind     string    `json:"error"`
	Message  string    `json:"message"`
	Attempts []Attempt `json:"attempts,omitempty"`
	// RequestID is the x-request-id the stream was answered with (Stream.RequestID).
	RequestID string `json:"-"`
}

// Error names the failure's kind and message.
func (e *StreamError) Error() string {
	return fmt.Sprintf("switchyard: stream failed: %s: %s", e.Kind, e.Message)
}

// ErrStreamTruncated is returned when a stream ends without its end marker, or (native
// completions) with it but without the final response: whatever arrived is not a
// confirmed, complete answer.
var ErrStreamTruncated = errors.New("switchyard: stream truncated")

// Stream reads a streamed completion. Call Next until it returns false, then Err; Final
// holds the full response once the stream completed. Close releases the connection early.
//
//	st, err := c.CompleteStream(ctx, req)
//	defer st.Close()
//	for st.Next() { fmt.Print(st.Chunk().Text) }
//	if err := st.Err(); err != nil { ... }
//	fmt.Println(st.Final().Usage.TotalTokens)
type Stream struct {
	requestID string
	body      io.ReadCloser
	events    *sseReader
	chunk     Chunk
	final     *Completion
	err       error
	done      bool
}

// CompleteStream asks for a streamed completion. Errors before the stream starts (bad
// request, no key, every model failing before the first token) are returned here as *Error.
func (c *Client) CompleteStream(ctx context.Context, req *CompletionRequest) (*Stream, error) {
	r := *req
	r.Stream = true
	hr, err := c.newRequest(ctx, http.MethodPost, "/api/v1/completions", nil, &r)
	if err != nil {
		return nil, err
	}
	hr.Header.Set("Accept", "text/event-stream")
	resp, err := c.send(hr)
	if err != nil {
		return nil, err
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		// A server may answer a non-streamed JSON body; present it as a stream of one.
		defer resp.Body.Close()
		var out Completion
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			return nil, fmt.Errorf("client: decoding completion: %w", err)
		}
		finalEvent := struct {
			Type string `json:"type"`
			*Completion
		}{"final", &out}
		ch := Chunk{Provider: out.Provider, Model: out.Model, ResponseMessageID: out.ResponseMessageID, Type: "text", Text: out.Text(), Message: out.Message, Logprobs: out.Logprobs}
		text := "data: " + mustJSON(ch) + "\n\ndata: " + mustJSON(finalEvent) + "\n\ndata: [DONE]\n\n"
		st := &Stream{requestID: resp.Header.Get("X-Request-Id"), body: io.NopCloser(strings.NewReader("")), events: newSSEReader(strings.NewReader(text))}
		return st, nil
	}
	return &Stream{requestID: resp.Header.Get("X-Request-Id"), body: resp.Body, events: newSSEReader(resp.Body)}, nil
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// Next advances to the next fragment. It returns false at the end of the stream or on
// failure; Err tells which.
func (s *Stream) Next() bool {
	for !s.done {
		event, data, err := s.events.next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				s.fail(fmt.Errorf("%w: the connection ended before [DONE]", ErrStreamTruncated))
			} else {
				s.fail(fmt.Errorf("client: reading stream: %w", err))
			}
			return false
		}
		if s.dispatch(event, data) {
			return true
		}
	}
	return false
}

// dispatch handles one event; it reports whether a chunk is ready for the caller.
func (s *Stream) dispatch(event, data string) bool {
	if data == "[DONE]" {
		s.done = true
		if s.final == nil {
			s.err = fmt.Errorf("%w: [DONE] came without the final response", ErrStreamTruncated)
		}
		s.body.Close()
		return false
	}
	if event == "error" {
		s.fail(parseStreamError(data))
		return false
	}
	var probe struct {
		Type  string          `json:"type"`
		Final bool            `json:"final"`
		Error json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal([]byte(data), &probe); err != nil {
		s.fail(fmt.Errorf("client: malformed stream event %q: %w", truncate(data, 120), err))
		return false
	}
	switch {
	case probe.Type == "error" || hasError(probe.Error):
		s.fail(parseStreamError(data))
		return false
	case probe.Final || probe.Type == "final": // "final" was its type before it became a text chunk
		var f Completion
		if err := json.Unmarshal([]byte(data), &f); err != nil {
			s.fail(fmt.Errorf("client: malformed final event: %w", err))
			return false
		}
		s.final = &f
		return false
	default:
		var ch Chunk
		if err := json.Unmarshal([]byte(data), &ch); err != nil {
			s.fail(fmt.Errorf("client: malformed chunk: %w", err))
			return false
		}
		s.chunk = ch
		return true
	}
}

// hasError reports whether an event's "error" field says something (not absent, null,
// false or an empty string).
func hasError(raw json.RawMessage) bool {
	switch strings.TrimSpace(string(raw)) {
	case "", "null", "false", `""`:
		return false
	}
	return true
}

// parseStreamError reads the payload of an error event, whatever its shape: Switchyard's
// {"error": kind, "message", "attempts"}, OpenAI's {"error": {"type", "message"}} (or
// {"error": {"code", "message"}}, the code a string or a number, as proxies send it), a JSON
// string, or text that is not JSON (the whole of it is the message). Kind is "Stream
// Error" when the payload names none.
func parseStreamError(data string) *StreamError {
	se := &StreamError{}
	var body struct {
		Error    json.RawMessage `json:"error"`
		Message  string          `json:"message"`
		Attempts []Attempt       `json:"attempts"`
	}
	var text string
	switch {
	case json.Unmarshal([]byte(data), &body) == nil:
		se.Message, se.Attempts = body.Message, body.Attempts
		var envelope struct {
			Type    string          `json:"type"`
			Code    json.RawMessage `json:"code"` // a string, or a number (OpenRouter's, other proxies')
			Message string          `json:"message"`
		}
		if json.Unmarshal(body.Error, &se.Kind) != nil && json.Unmarshal(body.Error, &envelope) == nil {
			se.Kind = cmp.Or(envelope.Type, errorCode(envelope.Code))
			se.Message = cmp.Or(se.Message, envelope.Message)
		}
	case json.Unmarshal([]byte(data), &text) == nil:
		se.Message = text
	default:
		se.Message = data
	}
	if se.Kind == "" {
		se.Kind = "Stream Error"
	}
	return se
}

// errorCode is an error envelope's code as text: a string as it is, a number as written
// (502), "" for null or anything else.
func errorCode(raw json.RawMessage) string {
	var code string
	if json.Unmarshal(raw, &code) == nil {
		return code
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}

func (s *Stream) fail(err error) {
	if se, ok := err.(*StreamError); ok {
		se.RequestID = s.requestID
	}
	s.err = err
	s.done = true
	s.body.Close()
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// Chunk returns the fragment Next advanced to.
func (s *Stream) Chunk() Chunk { return s.chunk }

// Final returns the full response (usage, costs, latency, conversation fields) once its
// event arrived, nil before that. It can be set on a stream whose Err is
// ErrStreamTruncated (the connection ended between the final event and [DONE]): the
// answer is whole then, but the server did not confirm its end.
func (s *Stream) Final() *Completion { return s.final }

// Err returns the failure that ended the stream: a *StreamError sent by the server,
// ErrStreamTruncated when the connection ended early or [DONE] came without the final
// response, or a transport error. It is nil after a complete stream.
func (s *Stream) Err() error { return s.err }

// RequestID is the x-request-id the server answered the stream with: the request's id in
// its usage history; "" when it sent none.
func (s *Stream) RequestID() string { return s.requestID }

// Close releases the connection. It is safe to call more than once.
func (s *Stream) Close() error {
	s.done = true
	return s.body.Close()
}

// Chunks ranges over the fragments; a failure is yielded last with a zero Chunk.
//
//	for ch, err := range st.Chunks() { if err != nil { ... }; fmt.Print(ch.Text) }
func (s *Stream) Chunks() iter.Seq2[Chunk, error] {
	return rangeStream(s.Next, s.Chunk, s.Err, s.Close)
}

// rangeStream adapts a Next/current/Err/Close stream to a range-over-func sequence: each
// item with a nil error, then the stream's failure (if any) with a zero item. Breaking out
// of the loop closes the stream.
func rangeStream[T any](next func() bool, current func() T, err func() error, close func() error) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		for next() {
			if !yield(current(), nil) {
				close()
				return
			}
		}
		if e := err(); e != nil {
			var zero T
			yield(zero, e)
		}
	}
}
