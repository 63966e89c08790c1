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
//	data: {"type":"final","provider":…,"usage":{…},"latency":…,"ttft":…,"attempts":[…],…}
//
//	data: [DONE]
//
// One "data:" event per fragment, then the full response with "type":"final", then the end
// marker "data: [DONE]". When the upstream fails after the first fragment the stream ends with
//
//	event: error
//	data: {"type":"error","error":"Stream Error","message":"…","attempts":[…]}
//
// and no [DONE]: a stream without [DONE] is never a complete answer.

// Values of the "type" field of stream events.
const (
	EventText  = "text"
	EventFinal = "final"
	EventError = "error"
)

// SSEWriter writes server-sent events and flushes after each one.
type SSEWriter struct {
	w     io.Writer
	flush func()
	buf   bytes.Buffer
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
	if f, ok := w.(http.Flusher); ok {
		s.flush = f.Flush
	}
	s.flush()
	return s
}

// Event writes one event: an optional "event:" name line and v encoded as one "data:" line.
func (s *SSEWriter) Event(name string, v any) error {
	s.buf.Reset()
	if name != "" {
		s.buf.WriteString("event: ")
		s.buf.WriteString(name)
		s.buf.WriteByte('\n')
	}
	s.buf.WriteString("data: ")
	enc := json.NewEncoder(&s.buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil { // Encode appends '\n'
		return err
	}
	s.buf.WriteByte('\n')
	return s.write()
}

// Done writes the end marker "data: [DONE]".
func (s *SSEWriter) Done() error {
	s.buf.Reset()
	s.buf.WriteString("data: [DONE]\n\n")
	return s.write()
}

func (s *SSEWriter) write() error {
	if _, err := s.w.Write(s.buf.Bytes()); err != nil {
		return err
	}
	s.flush()
	return nil
}

// finalEvent is the response with "type":"final" in front.
type finalEvent struct {
	Type string `json:"type"`
	*Response
}

// StreamErrorEvent is the data of the "error" event that ends a failed stream.
type StreamErrorEvent struct {
	Type     string    `json:"type"`
	Error    string    `json:"error"`
	Message  string    `json:"message"`
	Attempts []Attempt `json:"attempts,omitempty"`
}

// WriteStream sends st to w in the framing described above and closes st. It returns nil
// when the answer was delivered completely, the *StreamError (or other failure) that ended
// the stream, or the write error when the client went away.
func WriteStream(w http.ResponseWriter, st *ResponseStream) error {
	defer st.Close()
	sse := NewSSEWriter(w)
	for {
		c, err := st.Recv()
		if errors.Is(err, io.EOF) {
			if err := sse.Event("", finalEvent{Type: EventFinal, Response: st.Response()}); err != nil {
				return err
			}
			return sse.Done()
		}
		if err != nil {
			ev := StreamErrorEvent{Type: EventError, Error: "Stream Error", Message: err.Error(), Attempts: st.p.attempts}
			if !errors.Is(err, ErrStreamFailed) {
				ev.Error = "Internal Server Error"
			}
			_ = sse.Event(EventError, ev)
			return err
		}
		if err := sse.Event("", c); err != nil {
			return err
		}
	}
}
