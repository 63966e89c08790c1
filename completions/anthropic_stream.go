package completions

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// anthropicEvent is one event of a Messages stream; unused members are omitted.
type anthropicEvent struct {
	Type         string                  `json:"type"`
	Message      *AnthropicResponse      `json:"message,omitempty"`
	Index        *int                    `json:"index,omitempty"`
	ContentBlock *AnthropicResponseBlock `json:"content_block,omitempty"`
	Delta        any                     `json:"delta,omitempty"`
	Usage        *AnthropicUsage         `json:"usage,omitempty"`
	Error        *AnthropicErrorObject   `json:"error,omitempty"`
}

type anthropicTextDelta struct {
	Type string `json:"type"` // text_delta
	Text string `json:"text"`
}

type anthropicThinkingDelta struct {
	Type     string `json:"type"` // thinking_delta
	Thinking string `json:"thinking"`
}

type anthropicSignatureDelta struct {
	Type      string `json:"type"` // signature_delta
	Signature string `json:"signature"`
}

type anthropicJSONDelta struct {
	Type        string `json:"type"` // input_json_delta
	PartialJSON string `json:"partial_json"`
}

type anthropicMessageDelta struct {
	StopReason   string  `json:"stop_reason"`
	StopSequence *string `json:"stop_sequence"`
}

// anthropicKeepalive is how long a Messages stream may hold tool-call fragments without
// sending anything before it sends a ping.
var anthropicKeepalive = 5 * time.Second

// anthropicWriter writes a Messages stream's events from the relay and from its keepalive
// goroutine, one at a time.
type anthropicWriter struct {
	mu   sync.Mutex
	sse  *SSEWriter
	sent time.Time // when events were last flushed
}

// Buffer writes one event.
func (w *anthropicWriter) Buffer(name string, v any) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.sse.Buffer(name, v)
}

// Flush sends the written events.
func (w *anthropicWriter) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.sent = time.Now()
	return w.sse.Flush()
}

// startText opens text block i.
func (w *anthropicWriter) startText(i int) error {
	empty := ""
	return w.Buffer("content_block_start", anthropicEvent{Type: "content_block_start", Index: idxp(i),
		ContentBlock: &AnthropicResponseBlock{Type: "text", Text: &empty}})
}

// textDelta writes a piece of text block i.
func (w *anthropicWriter) textDelta(i int, text string) error {
	return w.Buffer("content_block_delta", anthropicEvent{Type: "content_block_delta", Index: idxp(i),
		Delta: anthropicTextDelta{Type: "text_delta", Text: text}})
}

// keepalive sends a ping whenever nothing was flushed for every; the returned function
// (which may be called more than once) stops it and returns once it can write no more.
func (w *anthropicWriter) keepalive(every time.Duration) (stop func()) {
	w.mu.Lock()
	w.sent = time.Now()
	w.mu.Unlock()
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		t := time.NewTicker(max(every/5, time.Millisecond)) // a gap of at most 1.2 × every
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				w.mu.Lock()
				if time.Since(w.sent) >= every && w.sse.Buffer("ping", anthropicEvent{Type: "ping"}) == nil {
					_ = w.sse.Flush()
					w.sent = time.Now()
				}
				w.mu.Unlock()
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(done)
			<-exited
		})
	}
}

// WriteAnthropicStream sends st to rw as the Messages API's server-sent events:
// message_start; the model's reasoning as thinking blocks (a thinking_delta per fragment,
// Claude's signature in a signature_delta) or redacted_thinking blocks; the text as a
// text block (content_block_start, a text_delta per fragment, content_block_stop; another
// after the model thought again); each tool call as a tool_use block whose input comes in
// one input_json_delta once the stream has ended (upstreams may interleave the fragments of
// several calls, which a sequence of blocks cannot); a ping whenever nothing was sent for
// anthropicKeepalive; message_delta with the stop reason and the usage; message_stop. A failure after the stream started ends it with an "error"
// event, which Anthropic's SDKs raise. model is the model as the request named it. It
// closes st.
func WriteAnthropicStream(rw http.ResponseWriter, st *ResponseStream, model string) error {
	defer st.Close()
	w := &anthropicWriter{sse: NewSSEWriter(rw)}
	sse := w
	start := &AnthropicResponse{ID: "msg_" + st.ResponseMessageID(), Type: "message", Role: "assistant", Model: model,
		Content: []AnthropicResponseBlock{}, Usage: st.promptUsage()}
	if err := sse.Buffer("message_start", anthropicEvent{Type: "message_start", Message: start}); err != nil {
		return err
	}
	if err := sse.Buffer("ping", anthropicEvent{Type: "ping"}); err != nil {
		return err
	}
	if err := sse.Flush(); err != nil {
		return err
	}
	next := 0       // index of the next block
	text := -1      // index of the open text block
	thought := -1   // index of the open thinking block
	thoughtOf := -1 // the reasoning block (ReasoningDelta.Index) it holds
	wroteText := false
	searches := 0 // web searches shown so far (their blocks' ids)
	// closeBlock ends the open block at *open, if any.
	closeBlock := func(open *int) error {
		if *open < 0 {
			return nil
		}
		i := *open
		*open = -1
		return sse.Buffer("content_block_stop", anthropicEvent{Type: "content_block_stop", Index: idxp(i)})
	}
	var calls streamedCalls
	// Calls are held until the upstream ends, and a model may think long before its first
	// token: a ping whenever nothing was sent for anthropicKeepalive keeps the connection
	// visibly alive for proxies and clients meanwhile.
	stopKeepalive := w.keepalive(anthropicKeepalive)
	defer stopKeepalive()
	for {
		c, err := st.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			typ := "api_error"
			switch providers.KindOf(err) {
			case providers.KindOverloaded:
				typ = "overloaded_error"
			case providers.KindRateLimited:
				typ = "rate_limit_error"
			}
			if errors.Is(err, ErrGuardrailBlocked) {
				typ = "invalid_request_error" // a post_call guardrail refused the answer
			}
			_ = sse.Buffer("error", anthropicEvent{Type: "error", Error: &AnthropicErrorObject{Type: typ, Message: err.Error()}})
			_ = sse.Flush()
			return err
		}
		if c.Type == EventSources {
			// The pages the search found, between the text before it and the text after.
			if err := closeBlock(&text); err != nil {
				return err
			}
			if err := closeBlock(&thought); err != nil {
				return err
			}
			searches++
			for _, b := range anthropicSearchBlocks(fmt.Sprintf("srvtoolu_%s_%d", st.ResponseMessageID(), searches), c.Search.Sources) {
				if err := sse.Buffer("content_block_start", anthropicEvent{Type: "content_block_start", Index: idxp(next), ContentBlock: &b}); err != nil {
					return err
				}
				if err := sse.Buffer("content_block_stop", anthropicEvent{Type: "content_block_stop", Index: idxp(next)}); err != nil {
					return err
				}
				next++
			}
			if err := sse.Flush(); err != nil {
				return err
			}
			continue
		}
		if c.Type == EventReasoning {
			// Thinking comes in blocks of its own, before the text it leads to (and between
			// a text and the next when the model thinks again).
			if err := reasoningEvents(sse, *c.Reasoning, &next, &text, &thought, &thoughtOf, closeBlock); err != nil {
				return err
			}
			if err := sse.Flush(); err != nil {
				return err
			}
			continue
		}
		if c.Type == EventToolCall {
			calls.add(c.ToolCall)
			continue
		}
		if c.Text == "" {
			continue
		}
		if err := closeBlock(&thought); err != nil {
			return err
		}
		if text < 0 {
			wroteText = true
			text, next = next, next+1
			if err := sse.startText(text); err != nil {
				return err
			}
		}
		if err := sse.textDelta(text, c.Text); err != nil {
			return err
		}
		if err := sse.Flush(); err != nil {
			return err
		}
	}
	stopKeepalive() // the closing events follow one another: no ping among them
	if err := closeBlock(&thought); err != nil {
		return err
	}
	if err := closeBlock(&text); err != nil {
		return err
	}
	if resp := st.Response(); resp != nil && resp.Refusal != "" && !wroteText {
		// A refusal is whole only at the end (it is not streamed): the answer's text, as in
		// a whole message (NewAnthropicResponse).
		i := next
		next++
		if err := sse.startText(i); err != nil {
			return err
		}
		if err := sse.textDelta(i, resp.Refusal); err != nil {
			return err
		}
		if err := sse.Buffer("content_block_stop", anthropicEvent{Type: "content_block_stop", Index: idxp(i)}); err != nil {
			return err
		}
	}
	for _, call := range calls.sorted() {
		if call.signature != "" {
			// Gemini's thought signature, in a thinking block just before its call.
			i := next
			next++
			block := anthropicThinkingBlock("", "", "")
			if err := sse.Buffer("content_block_start", anthropicEvent{Type: "content_block_start", Index: idxp(i), ContentBlock: &block}); err != nil {
				return err
			}
			if err := sse.Buffer("content_block_delta", anthropicEvent{Type: "content_block_delta", Index: idxp(i),
				Delta: anthropicSignatureDelta{Type: "signature_delta", Signature: thoughtSignatureToken(call.id, call.signature)}}); err != nil {
				return err
			}
			if err := sse.Buffer("content_block_stop", anthropicEvent{Type: "content_block_stop", Index: idxp(i)}); err != nil {
				return err
			}
		}
		i := next
		next++
		block := &AnthropicResponseBlock{Type: "tool_use", ID: call.id, Name: call.name, Input: json.RawMessage("{}")}
		if err := sse.Buffer("content_block_start", anthropicEvent{Type: "content_block_start", Index: idxp(i), ContentBlock: block}); err != nil {
			return err
		}
		if args := anthropicInput(string(call.args)); string(args) != "{}" {
			if err := sse.Buffer("content_block_delta", anthropicEvent{Type: "content_block_delta", Index: idxp(i),
				Delta: anthropicJSONDelta{Type: "input_json_delta", PartialJSON: string(args)}}); err != nil {
				return err
			}
		}
		if err := sse.Buffer("content_block_stop", anthropicEvent{Type: "content_block_stop", Index: idxp(i)}); err != nil {
			return err
		}
	}
	reason := anthropicStopReason("", len(calls.order) > 0)
	var usage AnthropicUsage
	var seq *string
	if resp := st.Response(); resp != nil {
		reason = anthropicStopReason(resp.FinishReason, len(calls.order) > 0)
		usage = anthropicUsage(resp.Usage)
		if resp.StopSequence != "" && reason == "end_turn" {
			reason, seq = "stop_sequence", &resp.StopSequence
		}
	}
	if err := sse.Buffer("message_delta", anthropicEvent{Type: "message_delta", Delta: anthropicMessageDelta{StopReason: reason, StopSequence: seq}, Usage: &usage}); err != nil {
		return err
	}
	if err := sse.Buffer("message_stop", anthropicEvent{Type: "message_stop"}); err != nil {
		return err
	}
	return sse.Flush()
}

// promptUsage is the usage a Messages stream's message_start reports, as Anthropic's does:
// the prompt's tokens as the upstream counted them when it said so at its start (Claude),
// else a local count (clients such as LangChain's take the input tokens from here), and
// one output token. message_delta has the whole usage.
func (s *ResponseStream) promptUsage() AnthropicUsage {
	if r, ok := s.up.(providers.PromptUsageReporter); ok {
		if u, ok := r.PromptUsage(); ok {
			a := anthropicUsage(Usage{PromptTokens: u.PromptTokens, CachedTokens: u.CachedTokens, CacheCreationTokens: u.CacheCreationTokens,
				CacheCreation1hTokens: u.CacheCreation1hTokens})
			a.OutputTokens = 1
			return a
		}
	}
	req := s.p.preq
	req.Model = s.t.model
	return AnthropicUsage{InputTokens: providers.EstimateUsage(s.t.name, &req, nil).PromptTokens, OutputTokens: 1}
}

// reasoningEvents writes the events of the reasoning fragment d: a new thinking block (or a
// whole redacted_thinking block) when d starts one — closing an open text or thinking
// block first — then its thinking_delta or signature_delta.
func reasoningEvents(sse *anthropicWriter, d providers.ReasoningDelta, next, text, thought, thoughtOf *int, closeBlock func(*int) error) error {
	if *thought >= 0 && *thoughtOf != d.Index {
		if err := closeBlock(thought); err != nil {
			return err
		}
	}
	if err := closeBlock(text); err != nil {
		return err
	}
	if d.Redacted != "" {
		i := *next
		*next++
		if err := sse.Buffer("content_block_start", anthropicEvent{Type: "content_block_start", Index: idxp(i),
			ContentBlock: &AnthropicResponseBlock{Type: "redacted_thinking", Data: d.Redacted}}); err != nil {
			return err
		}
		return sse.Buffer("content_block_stop", anthropicEvent{Type: "content_block_stop", Index: idxp(i)})
	}
	if *thought < 0 {
		*thought, *thoughtOf = *next, d.Index
		*next++
		block := anthropicThinkingBlock("", "", "")
		if err := sse.Buffer("content_block_start", anthropicEvent{Type: "content_block_start", Index: idxp(*thought), ContentBlock: &block}); err != nil {
			return err
		}
	}
	if d.Text != "" {
		if err := sse.Buffer("content_block_delta", anthropicEvent{Type: "content_block_delta", Index: idxp(*thought),
			Delta: anthropicThinkingDelta{Type: "thinking_delta", Thinking: d.Text}}); err != nil {
			return err
		}
	}
	if sig := surfaceSignature(d.Signature, d.Encrypted, d.EncryptedBy); sig != "" {
		return sse.Buffer("content_block_delta", anthropicEvent{Type: "content_block_delta", Index: idxp(*thought),
			Delta: anthropicSignatureDelta{Type: "signature_delta", Signature: sig}})
	}
	return nil
}

// WriteAnthropicEvents sends a message decided before anything was streamed (a content
// filter's refusal) as the events of a stream: message_start, its blocks, message_delta
// and message_stop.
func WriteAnthropicEvents(rw http.ResponseWriter, m *AnthropicResponse) error {
	sse := NewSSEWriter(rw)
	start := *m
	start.Content, start.StopReason, start.Usage = []AnthropicResponseBlock{}, nil, AnthropicUsage{}
	if err := sse.Buffer("message_start", anthropicEvent{Type: "message_start", Message: &start}); err != nil {
		return err
	}
	for i := range m.Content {
		b := m.Content[i]
		if err := sse.Buffer("content_block_start", anthropicEvent{Type: "content_block_start", Index: idxp(i), ContentBlock: &b}); err != nil {
			return err
		}
		if err := sse.Buffer("content_block_stop", anthropicEvent{Type: "content_block_stop", Index: idxp(i)}); err != nil {
			return err
		}
	}
	reason := "end_turn"
	if m.StopReason != nil {
		reason = *m.StopReason
	}
	usage := m.Usage
	if err := sse.Buffer("message_delta", anthropicEvent{Type: "message_delta", Delta: anthropicMessageDelta{StopReason: reason}, Usage: &usage}); err != nil {
		return err
	}
	if err := sse.Buffer("message_stop", anthropicEvent{Type: "message_stop"}); err != nil {
		return err
	}
	return sse.Flush()
}
