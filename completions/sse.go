package completions

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
)

// The server-sent-events framing of POST /api/v1/completions with "stream": true:
//
//	data: {"provider":…,"model":…,"responseMessageId":…,"type":"text","text":"Hel","message":{…}}
//
//	data: {"type":"text","text":"","final":true,"provider":…,"usage":{…},"latency":…,"ttft":…,"attempts":[…],…}
//
//	data: [DONE]
//
// One "data:" event per fragment, then the full response marked "final": true, then the end
// marker "data: [DONE]". When the upstream fails after the first fragment the stream ends with
//
//	event: error
//	data: {"type":"text","text":"","error":"Stream Error","message":"…","attempts":[…]}
//
// and no [DONE]: a stream without [DONE] is never a complete answer. Every payload is a
// chunk of type "text", as the spec's events are ("each carries a chunk with type text and
// a text fragment"): the last two add an empty fragment, so a client that joins every
// event's text reads the answer unchanged.

// Values of the "type" field of stream events.
const (
	EventText = "text"
	// EventToolCall is a tool-call fragment (ResponseStream only; the native stream never
	// carries one, since its requests have no tools).
	EventToolCall = "tool_call"
	// EventReasoning is a fragment of the model's reasoning (ResponseStream only; the
	// native stream never sends it).
	EventReasoning = "reasoning"
	// EventAudio is a piece of a spoken answer (ResponseStream only, for chat requests
	// asking for audio: Chunk.Audio).
	EventAudio = "audio"
	// EventSources carries web pages the provider's own search found (ResponseStream only,
	// for requests that show them: the Messages surface).
	EventSources = "sources"
	// EventFinal was the final event's type before it became a "text" chunk marked
	// "final": true; clients still accept it.
	EventFinal = "final"
	// EventError is the SSE event name (not the type) of the event that ends a failed stream.
	EventError = "error"
)

// SSEWriter writes server-sent events and flushes after each one.
type SSEWriter struct {
	w     io.Writer
	flush func()
	buf   bytes.Buffer
	enc   *json.Encoder // writes into buf; made once per stream
}

// NewSSEWriter sets the event-stream headers on w, sends the 200 status and returns a
// writer for the events.
func NewSSEWriter(w http.ResponseWriter) *SSEWriter {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	s := &SSEWriter{w: w, flush: func() {}}
	s.enc = json.NewEncoder(&s.buf)
	s.enc.SetEscapeHTML(false)
	if f, ok := w.(http.Flusher); ok {
		s.flush = f.Flush
	}
	s.flush()
	return s
}

// Event writes one event, an optional "event:" name line and v encoded as one "data:" line,
// and flushes it to the client.
func (s *SSEWriter) Event(name string, v any) error {
	if err := s.Buffer(name, v); err != nil {
		return err
	}
	return s.Flush()
}

// Buffer writes one event like Event but does not flush it; call Flush once the events
// that are ready have been buffered.
func (s *SSEWriter) Buffer(name string, v any) error {
	s.buf.Reset()
	if name != "" {
		s.buf.WriteString("event: ")
		s.buf.WriteString(name)
		s.buf.WriteByte('\n')
	}
	s.buf.WriteString("data: ")
	if err := s.enc.Encode(v); err != nil { // Encode appends '\n'
		return err
	}
	s.buf.WriteByte('\n')
	_, err := s.w.Write(s.buf.Bytes())
	return err
}

// BufferData writes one unnamed event whose data is the already encoded JSON in data, and
// does not flush it.
func (s *SSEWriter) BufferData(data []byte) error {
	s.buf.Reset()
	s.buf.WriteString("data: ")
	s.buf.Write(data)
	s.buf.WriteString("\n\n")
	_, err := s.w.Write(s.buf.Bytes())
	return err
}

// Flush sends the buffered events to the client.
func (s *SSEWriter) Flush() error {
	s.flush()
	return nil
}

// Done writes the end marker "data: [DONE]" and flushes.
func (s *SSEWriter) Done() error {
	if _, err := io.WriteString(s.w, "data: [DONE]\n\n"); err != nil {
		return err
	}
	s.flush()
	return nil
}

// relay prepares st for relaying to sse: fragments are buffered and flushed whenever st is
// about to wait for its upstream, so fragments that arrived together leave together and
// none waits for the network. It returns the function to call after buffering each
// fragment: a no-op, or a flush when st's upstream cannot say when it waits.
func relay(st *ResponseStream, sse *SSEWriter) (afterFragment func() error) {
	if st.NotifyWait(func() { _ = sse.Flush() }) {
		return func() error { return nil }
	}
	return sse.Flush
}

// finalEvent is the response as a "text" chunk with an empty fragment, marked final: a
// client that joins every event's text, as the spec's "every payload is a chunk" invites,
// reads the answer unchanged.
type finalEvent struct {
	Type  string `json:"type"`
	Text  string `json:"text"`
	Final bool   `json:"final"`
	*Response
	// TokenLogprobs are the whole answer's log probabilities, as Answer's.
	TokenLogprobs *OpenAILogprobs `json:"logprobs,omitempty"`
}

// logprobsChunk is a text chunk with the log probabilities of its tokens (a request that
// asked for them): the native stream's logprobs extension, OpenAI's chunk shape.
type logprobsChunk struct {
	*Chunk
	TokenLogprobs *OpenAILogprobs `json:"logprobs"`
}

// StreamErrorEvent is the data of the "error" event that ends a failed stream: a "text"
// chunk with an empty fragment and the error.
type StreamErrorEvent struct {
	// Type is "text", as every payload of the stream.
	Type string `json:"type"`
	// Text is always empty, so that every payload of a stream has a text (see WriteStream).
	Text     string    `json:"text"`
	Error    string    `json:"error"`
	Message  string    `json:"message"`
	Attempts []Attempt `json:"attempts,omitempty"`
}

// WriteStream sends st to w as server-sent events and closes st: one "data: {chunk}" event
// per text fragment (provider, model, responseMessageId, type "text", text, message), then
// "data: {"type":"text","text":"","final":true, …the whole Response}" and "data: [DONE]"; a stream that
// fails after its first fragment ends with "event: error" and a StreamErrorEvent, and no
// [DONE]. A request that asked for log probabilities gets each text chunk's tokens in its
// "logprobs" ({"content": […], "refusal": null}, OpenAI's chunk shape) and the whole
// answer's in the final event's. Fragments are flushed whenever the stream is about to wait. It returns nil
// when the answer was delivered completely, the *StreamError (or other failure) that ended
// the stream, or the write error when the client went away.
func WriteStream(w http.ResponseWriter, st *ResponseStream) error {
	defer st.Close()
	sse := NewSSEWriter(w)
	afterFragment := relay(st, sse)
	tpl := newFragmentTemplate(st.chunkFor(fragmentPlaceholder), 2)
	tplModel := st.t.name
	for {
		c, err := st.Recv()
		if errors.Is(err, io.EOF) {
			resp := st.Response()
			if err := sse.Buffer("", finalEvent{Type: EventText, Final: true, Response: resp, TokenLogprobs: openAILogprobs(resp.Logprobs)}); err != nil {
				return err
			}
			return sse.Done()
		}
		if err != nil {
			ev := StreamErrorEvent{Type: EventText, Error: "Stream Error", Message: err.Error(), Attempts: st.p.attempts}
			switch {
			case errors.Is(err, ErrGuardrailBlocked):
				ev.Error = "Guardrail Violation" // a post_call guardrail refused the answer
			case !errors.Is(err, ErrStreamFailed):
				ev.Error = "Internal Server Error"
			}
			_ = sse.Event(EventError, ev)
			return err
		}
		if c.Type == EventToolCall || c.Type == EventReasoning || c.Type == EventSources || c.Type == EventAudio {
			continue // the native API has no tools, shows no reasoning and asks for no audio
		}
		if tpl != nil && st.t.name != tplModel {
			// Another model continued a broken answer: its fragments carry its name.
			tpl, tplModel = newFragmentTemplate(st.chunkFor(fragmentPlaceholder), 2), st.t.name
		}
		switch {
		case c.Logprobs != nil:
			// Rare (asked for), so encoded in full; the template path stays lean.
			err = sse.Buffer("", logprobsChunk{Chunk: c, TokenLogprobs: &OpenAILogprobs{Content: c.Logprobs.Content}})
		case tpl != nil:
			err = sse.BufferData(tpl.event(c.Text))
		default:
			err = sse.Buffer("", c)
		}
		if err != nil {
			return err
		}
		if err := afterFragment(); err != nil {
			return err
		}
	}
}
