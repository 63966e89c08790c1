package completions

import (
	"errors"
	"io"
	"net/http"
)

// responsesEvent is one typed event of a Responses stream; unused members are omitted.
type responsesEvent struct {
	Type           string              `json:"type"`
	SequenceNumber int                 `json:"sequence_number"`
	Response       *ResponseObject     `json:"response,omitempty"`
	OutputIndex    *int                `json:"output_index,omitempty"`
	ContentIndex   *int                `json:"content_index,omitempty"`
	ItemID         string              `json:"item_id,omitempty"`
	Item           *ResponseOutputItem `json:"item,omitempty"`
	Part           *ResponseOutputPart `json:"part,omitempty"`
	Delta          *string             `json:"delta,omitempty"`
	Text           *string             `json:"text,omitempty"`
	Arguments      *string             `json:"arguments,omitempty"`
	Code           string              `json:"code,omitempty"`
	Message        string              `json:"message,omitempty"`
}

// responsesWriter emits the events of one Responses stream with increasing sequence numbers.
type responsesWriter struct {
	sse *SSEWriter
	seq int
	o   *ResponseObject
	// The item being streamed: its index in o.Output, and for a message its text so far, for
	// a function call its arguments so far; open is false between items.
	open     bool
	index    int
	text     []byte
	callByUp map[int]int // upstream tool-call index → output index
}

func (w *responsesWriter) emit(e responsesEvent) error {
	e.SequenceNumber = w.seq
	w.seq++
	return w.sse.Buffer(e.Type, e)
}

func idxp(i int) *int { return &i }

// closeItem ends the item being streamed with its done events.
func (w *responsesWriter) closeItem() error {
	if !w.open {
		return nil
	}
	w.open = false
	item := &w.o.Output[w.index]
	item.Status = "completed"
	if item.Type == "message" {
		text := string(w.text)
		item.Content = []ResponseOutputPart{{Type: "output_text", Text: text, Annotations: []any{}}}
		if err := w.emit(responsesEvent{Type: "response.output_text.done", ItemID: item.ID, OutputIndex: idxp(w.index), ContentIndex: idxp(0), Text: &text}); err != nil {
			return err
		}
		if err := w.emit(responsesEvent{Type: "response.content_part.done", ItemID: item.ID, OutputIndex: idxp(w.index), ContentIndex: idxp(0), Part: &item.Content[0]}); err != nil {
			return err
		}
	} else {
		args := string(w.text)
		item.Arguments = &args
		if err := w.emit(responsesEvent{Type: "response.function_call_arguments.done", ItemID: item.ID, OutputIndex: idxp(w.index), Arguments: &args}); err != nil {
			return err
		}
	}
	done := *item
	return w.emit(responsesEvent{Type: "response.output_item.done", OutputIndex: idxp(w.index), Item: &done})
}

// WriteResponsesStream sends st to w as the Responses API's typed server-sent events:
// response.created and response.in_progress; for text, response.output_item.added,
// response.content_part.added, response.output_text.delta per fragment, then the .done
// events; for each function call, response.output_item.added and
// response.function_call_arguments.delta per argument fragment, then the .done events; and
// response.completed with the whole response (its usage included). A failure after the
// stream started ends it with an "error" event and response.failed, which OpenAI's SDKs
// raise. It closes st.
func WriteResponsesStream(rw http.ResponseWriter, st *ResponseStream, o *ResponseObject) error {
	defer st.Close()
	w := &responsesWriter{sse: NewSSEWriter(rw), o: o, callByUp: map[int]int{}}
	o.Model = st.Provider() + "/" + st.Model()
	snapshot := *o
	if err := w.emit(responsesEvent{Type: "response.created", Response: &snapshot}); err != nil {
		return err
	}
	if err := w.emit(responsesEvent{Type: "response.in_progress", Response: &snapshot}); err != nil {
		return err
	}
	if err := w.sse.Flush(); err != nil {
		return err
	}
	for {
		c, err := st.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			msg := err.Error()
			_ = w.emit(responsesEvent{Type: "error", Code: "stream_failed", Message: msg})
			o.Status, o.Error = "failed", &ResponseError{Code: "server_error", Message: msg}
			failed := *o
			_ = w.emit(responsesEvent{Type: "response.failed", Response: &failed})
			_ = w.sse.Flush()
			return err
		}
		switch c.Type {
		case EventToolCall:
			d := c.ToolCall
			idx, known := w.callByUp[d.Index]
			if !known {
				if err := w.closeItem(); err != nil {
					return err
				}
				empty := ""
				idx = len(o.Output)
				w.callByUp[d.Index] = idx
				o.Output = append(o.Output, ResponseOutputItem{ID: "fc_" + d.ID, Type: "function_call", Status: "in_progress",
					CallID: d.ID, Name: d.Name, Arguments: &empty})
				w.open, w.index, w.text = true, idx, w.text[:0]
				added := o.Output[idx]
				if err := w.emit(responsesEvent{Type: "response.output_item.added", OutputIndex: idxp(idx), Item: &added}); err != nil {
					return err
				}
			}
			if d.Arguments != "" && w.open && w.index == idx {
				w.text = append(w.text, d.Arguments...)
				delta := d.Arguments
				if err := w.emit(responsesEvent{Type: "response.function_call_arguments.delta", ItemID: o.Output[idx].ID, OutputIndex: idxp(idx), Delta: &delta}); err != nil {
					return err
				}
			}
		default:
			if c.Text == "" {
				continue
			}
			if !w.open || o.Output[w.index].Type != "message" {
				if err := w.closeItem(); err != nil {
					return err
				}
				idx := len(o.Output)
				o.Output = append(o.Output, ResponseOutputItem{ID: "msg_" + st.ResponseMessageID(), Type: "message", Status: "in_progress",
					Role: "assistant", Content: []ResponseOutputPart{}})
				w.open, w.index, w.text = true, idx, w.text[:0]
				added := o.Output[idx]
				if err := w.emit(responsesEvent{Type: "response.output_item.added", OutputIndex: idxp(idx), Item: &added}); err != nil {
					return err
				}
				part := ResponseOutputPart{Type: "output_text", Annotations: []any{}}
				if err := w.emit(responsesEvent{Type: "response.content_part.added", ItemID: added.ID, OutputIndex: idxp(idx), ContentIndex: idxp(0), Part: &part}); err != nil {
					return err
				}
			}
			w.text = append(w.text, c.Text...)
			delta := c.Text
			if err := w.emit(responsesEvent{Type: "response.output_text.delta", ItemID: o.Output[w.index].ID, OutputIndex: idxp(w.index), ContentIndex: idxp(0), Delta: &delta}); err != nil {
				return err
			}
		}
		if err := w.sse.Flush(); err != nil {
			return err
		}
	}
	if err := w.closeItem(); err != nil {
		return err
	}
	if resp := st.Response(); resp != nil {
		streamed := o.Output
		o.Complete(resp)
		if len(streamed) > 0 {
			// Keep the ids the events used.
			o.Output = streamed
		}
	}
	final := "response.completed"
	if o.Status == "incomplete" {
		final = "response.incomplete"
	}
	done := *o
	if err := w.emit(responsesEvent{Type: final, Response: &done}); err != nil {
		return err
	}
	return w.sse.Flush()
}

// NewResponseID returns the id of the response for the gateway message id msgID.
func NewResponseID(msgID string) string { return "resp_" + msgID }

// WriteResponsesEvents sends a response decided before anything was streamed (a content
// filter's refusal) as the events of a stream: response.created, response.in_progress, the
// output items' added/done events and the final event (response.completed, or
// response.incomplete for an incomplete response).
func WriteResponsesEvents(rw http.ResponseWriter, o *ResponseObject) error {
	w := &responsesWriter{sse: NewSSEWriter(rw), o: o}
	start := *o
	start.Status, start.Output, start.Usage = "in_progress", []ResponseOutputItem{}, nil
	for _, t := range []string{"response.created", "response.in_progress"} {
		s := start
		if err := w.emit(responsesEvent{Type: t, Response: &s}); err != nil {
			return err
		}
	}
	for i := range o.Output {
		item := o.Output[i]
		if err := w.emit(responsesEvent{Type: "response.output_item.added", OutputIndex: idxp(i), Item: &item}); err != nil {
			return err
		}
		if err := w.emit(responsesEvent{Type: "response.output_item.done", OutputIndex: idxp(i), Item: &item}); err != nil {
			return err
		}
	}
	final := "response.completed"
	if o.Status == "incomplete" {
		final = "response.incomplete"
	}
	done := *o
	if err := w.emit(responsesEvent{Type: final, Response: &done}); err != nil {
		return err
	}
	return w.sse.Flush()
}
