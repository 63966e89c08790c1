package completions

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/switchyard-ai/switchyard/providers"
)

// responsesEvent is one typed event of a Responses stream; unused members are omitted.
type responsesEvent struct {
	Type           string              `json:"type"`
	SequenceNumber int                 `json:"sequence_number"`
	Response       *ResponseObject     `json:"response,omitempty"`
	OutputIndex    *int                `json:"output_index,omitempty"`
	ContentIndex   *int                `json:"content_index,omitempty"`
	SummaryIndex   *int                `json:"summary_index,omitempty"`
	ItemID         string              `json:"item_id,omitempty"`
	Item           *ResponseOutputItem `json:"item,omitempty"`
	// Part is a *ResponseOutputPart, or a *ResponseSummaryPart in reasoning summary events.
	Part  any     `json:"part,omitempty"`
	Delta *string `json:"delta,omitempty"`
	// Logprobs are an output_text delta's tokens' log probabilities (when asked).
	Logprobs  []providers.TokenLogprob `json:"logprobs,omitempty"`
	Text      *string                  `json:"text,omitempty"`
	Arguments *string                  `json:"arguments,omitempty"`
	Input     *string                  `json:"input,omitempty"` // a custom tool call's
	// AnnotationIndex and Annotation: response.output_text.annotation.added's.
	AnnotationIndex *int   `json:"annotation_index,omitempty"`
	Annotation      any    `json:"annotation,omitempty"`
	Code            string `json:"code,omitempty"`
	Message         string `json:"message,omitempty"`
	// Param is an error event's param: the request field the error is about, null when it
	// is about none (openai-go's ResponseErrorEvent requires the member: code, message,
	// param, sequence_number). Left out of every other event.
	Param json.RawMessage `json:"param,omitempty"`
}

// nullParam is an error event's param when the error names no field.
var nullParam = json.RawMessage("null")

// responsesErrorEvent is the Responses stream's "error" event with code and message, as
// OpenAI sends it: code, message, param (null: a failed stream names no request field) and
// the sequence number its writer gives it.
func responsesErrorEvent(code, message string) responsesEvent {
	return responsesEvent{Type: "error", Code: code, Message: message, Param: nullParam}
}

// responsesWriter emits the events of one Responses stream with increasing sequence numbers.
type responsesWriter struct {
	sse *SSEWriter
	seq int
	o   *ResponseObject
	// items[i] is the streaming state of o.Output[i]. As on OpenAI, one item is open at a
	// time: the message is closed when a call starts, and a call is closed (its done
	// events) before the next call's output_item.added; calls, see streamedCallSet.
	items     []streamedItem
	msg       int // output index of the open message item, or -1
	calls     streamedCallSet
	thought   int // output index of the open reasoning item, or -1
	thoughtOf int // the reasoning block (ReasoningDelta.Index) it holds
	messages  int // message items added so far
	// sources are the web pages the provider's search found so far (cited when a message
	// item closes).
	sources func() []providers.Source
}

// streamedItem is the state of one streamed output item: open until its done events are
// sent, and its text (message) or arguments (function call) so far.
type streamedItem struct {
	open bool
	buf  []byte
	// logprobs are a message's tokens' log probabilities so far (when asked).
	logprobs []providers.TokenLogprob
	// A reasoning item's: whether its summary part was added, and its encrypted content.
	summary   bool
	encrypted string
}

// finish calls beforeDone (when set) with the whole response o, then sends its terminal
// event (response.completed, or response.incomplete) and flushes the stream.
func (w *responsesWriter) finish(o *ResponseObject, beforeDone func(*ResponseObject)) error {
	if beforeDone != nil {
		beforeDone(o)
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

func (w *responsesWriter) emit(e responsesEvent) error {
	e.SequenceNumber = w.seq
	w.seq++
	return w.sse.Buffer(e.Type, e)
}

func idxp(i int) *int { return &i }

// addItem appends item to the output as an open item and sends its
// response.output_item.added; it returns the item's output index.
func (w *responsesWriter) addItem(item ResponseOutputItem) (int, error) {
	idx := len(w.o.Output)
	w.o.Output = append(w.o.Output, item)
	w.items = append(w.items, streamedItem{open: true})
	return idx, w.emit(responsesEvent{Type: "response.output_item.added", OutputIndex: idxp(idx), Item: &item})
}

// closeItem ends the open item at output index i with its done events, which carry its
// whole text or arguments.
func (w *responsesWriter) closeItem(i int) error {
	st := &w.items[i]
	if !st.open {
		return nil
	}
	st.open = false
	if w.msg == i {
		w.msg = -1
	}
	if w.thought == i {
		w.thought = -1
	}
	if c := w.calls.active; c != nil && c.out == i {
		c.closed, w.calls.active = true, nil
	}
	item := &w.o.Output[i]
	item.Status = "completed"
	if item.Type == "reasoning" {
		item.EncryptedContent = st.encrypted
		if st.summary {
			text := string(st.buf)
			item.Summary = []ResponseSummaryPart{{Type: "summary_text", Text: text}}
			if err := w.emit(responsesEvent{Type: "response.reasoning_summary_text.done", ItemID: item.ID, OutputIndex: idxp(i), SummaryIndex: idxp(0), Text: &text}); err != nil {
				return err
			}
			part := item.Summary[0]
			if err := w.emit(responsesEvent{Type: "response.reasoning_summary_part.done", ItemID: item.ID, OutputIndex: idxp(i), SummaryIndex: idxp(0), Part: &part}); err != nil {
				return err
			}
		}
	} else if item.Type == "message" {
		text := string(st.buf)
		item.Content = []ResponseOutputPart{{Type: "output_text", Text: text, Annotations: []any{}, Logprobs: st.logprobs}}
		if w.sources != nil && text != "" {
			item.Content[0].Annotations = urlCitations(text, w.sources())
			for k, a := range item.Content[0].Annotations {
				if err := w.emit(responsesEvent{Type: "response.output_text.annotation.added", ItemID: item.ID, OutputIndex: idxp(i), ContentIndex: idxp(0),
					AnnotationIndex: idxp(k), Annotation: a}); err != nil {
					return err
				}
			}
		}
		if err := w.emit(responsesEvent{Type: "response.output_text.done", ItemID: item.ID, OutputIndex: idxp(i), ContentIndex: idxp(0), Text: &text}); err != nil {
			return err
		}
		if err := w.emit(responsesEvent{Type: "response.content_part.done", ItemID: item.ID, OutputIndex: idxp(i), ContentIndex: idxp(0), Part: &item.Content[0]}); err != nil {
			return err
		}
	} else if item.Type == "custom_tool_call" {
		// Its input is a string inside the arguments the model wrote, whole only now.
		input := customToolInput(string(st.buf))
		item.Input = &input
		if err := w.emit(responsesEvent{Type: "response.custom_tool_call_input.delta", ItemID: item.ID, OutputIndex: idxp(i), Delta: &input}); err != nil {
			return err
		}
		if err := w.emit(responsesEvent{Type: "response.custom_tool_call_input.done", ItemID: item.ID, OutputIndex: idxp(i), Input: &input}); err != nil {
			return err
		}
	} else {
		args := string(st.buf)
		item.Arguments = &args
		if err := w.emit(responsesEvent{Type: "response.function_call_arguments.done", ItemID: item.ID, OutputIndex: idxp(i), Arguments: &args}); err != nil {
			return err
		}
	}
	st.buf = nil
	done := *item
	return w.emit(responsesEvent{Type: "response.output_item.done", OutputIndex: idxp(i), Item: &done})
}

// closeAll ends the open items in output order, and then sends the calls still held back
// (streamedCallSet), each opened and closed in turn.
func (w *responsesWriter) closeAll() error {
	if err := w.flushCalls(); err != nil {
		return err
	}
	for i := range w.items {
		if err := w.closeItem(i); err != nil {
			return err
		}
	}
	return nil
}

// text writes the events of a fragment of the answer msgID's text: the reasoning before it
// closes, a message item opens (with its output_text part) when none is open, and the
// fragment is an output_text delta.
func (w *responsesWriter) text(msgID, text string, lp *providers.Logprobs) error {
	if err := w.flushCalls(); err != nil { // the calls before the text are complete
		return err
	}
	if w.thought >= 0 { // the reasoning before the text is complete
		if err := w.closeItem(w.thought); err != nil {
			return err
		}
	}
	if w.msg < 0 {
		id := "msg_" + msgID
		if w.messages > 0 { // the model thought again after some text: a message of its own
			id += "_" + strconv.Itoa(w.messages)
		}
		w.messages++
		idx, err := w.addItem(ResponseOutputItem{ID: id, Type: "message", Status: "in_progress",
			Role: "assistant", Content: []ResponseOutputPart{}})
		if err != nil {
			return err
		}
		w.msg = idx
		part := ResponseOutputPart{Type: "output_text", Annotations: []any{}}
		if err := w.emit(responsesEvent{Type: "response.content_part.added", ItemID: w.o.Output[idx].ID, OutputIndex: idxp(idx), ContentIndex: idxp(0), Part: &part}); err != nil {
			return err
		}
	}
	it := &w.items[w.msg]
	it.buf = append(it.buf, text...)
	delta := text
	ev := responsesEvent{Type: "response.output_text.delta", ItemID: w.o.Output[w.msg].ID, OutputIndex: idxp(w.msg), ContentIndex: idxp(0), Delta: &delta}
	if lp != nil {
		ev.Logprobs = lp.Content
		it.logprobs = append(it.logprobs, lp.Content...)
	}
	return w.emit(ev)
}

// reasoning writes the events of the reasoning fragment d: its reasoning item opens (the
// message before it, and another reasoning item, close: the model thinks again) with a
// summary part when it has text; the text comes as reasoning_summary_text deltas; a
// signature or redacted data is kept for the item's encrypted_content.
func (w *responsesWriter) reasoning(msgID string, d providers.ReasoningDelta) error {
	if err := w.flushCalls(); err != nil { // the calls before the thought are complete
		return err
	}
	if w.thought >= 0 && w.thoughtOf != d.Index {
		if err := w.closeItem(w.thought); err != nil {
			return err
		}
	}
	if w.msg >= 0 {
		if err := w.closeItem(w.msg); err != nil {
			return err
		}
	}
	if w.thought < 0 {
		item := reasoningItem(msgID, d.Index, providers.ReasoningBlock{})
		item.Status = "in_progress"
		idx, err := w.addItem(item)
		if err != nil {
			return err
		}
		w.thought, w.thoughtOf = idx, d.Index
	}
	i := w.thought
	st := &w.items[i]
	if enc := encryptedContent(d.Signature, d.Redacted, d.Encrypted, d.EncryptedBy); enc != "" {
		st.encrypted = enc
	}
	if d.Text == "" {
		return nil
	}
	id := w.o.Output[i].ID
	if !st.summary {
		st.summary = true
		part := ResponseSummaryPart{Type: "summary_text"}
		if err := w.emit(responsesEvent{Type: "response.reasoning_summary_part.added", ItemID: id, OutputIndex: idxp(i), SummaryIndex: idxp(0), Part: &part}); err != nil {
			return err
		}
	}
	st.buf = append(st.buf, d.Text...)
	delta := d.Text
	return w.emit(responsesEvent{Type: "response.reasoning_summary_text.delta", ItemID: id, OutputIndex: idxp(i), SummaryIndex: idxp(0), Delta: &delta})
}

// WriteResponsesStream sends st to w as the Responses API's typed server-sent events:
// response.created and response.in_progress; for text, response.output_item.added (a
// message with "content": []), response.content_part.added, response.output_text.delta per
// fragment, then the .done events; for each function call in turn, as OpenAI sends parallel
// calls, response.output_item.added, response.function_call_arguments.delta per argument
// fragment, response.function_call_arguments.done and response.output_item.done with the
// whole arguments, before the next call's response.output_item.added (when the upstream
// interleaves the fragments of several calls, those of a later call are held back until the
// calls before it are complete: see streamedCallSet); for the model's
// reasoning, a reasoning item per block (response.reasoning_summary_part.added,
// response.reasoning_summary_text.delta per fragment, the .done events, its
// encrypted_content on output_item.done); and
// response.completed with the whole response (its usage included). A failure after the
// stream started ends it with an "error" event and response.failed, which OpenAI's SDKs
// raise. It closes st.
func WriteResponsesStream(rw http.ResponseWriter, st *ResponseStream, o *ResponseObject) error {
	return WriteResponsesStreamWith(rw, st, o, ResponsesStreamOptions{})
}

// ResponsesStreamOptions are the hooks of WriteResponsesStreamWith.
type ResponsesStreamOptions struct {
	// BeforeDone, when set, is called with the whole response before its final event
	// (response.completed or response.incomplete) is sent, so that what it records (the
	// stored answer: Gateway.StoreResponse) is in place when the client sees the end.
	BeforeDone func(o *ResponseObject)
}

// WriteResponsesStreamWith is WriteResponsesStream with the hooks of opts.
func WriteResponsesStreamWith(rw http.ResponseWriter, st *ResponseStream, o *ResponseObject, opts ResponsesStreamOptions) error {
	defer st.Close()
	w := &responsesWriter{sse: NewSSEWriter(rw), o: o, msg: -1, thought: -1, sources: st.searchSources}
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
			msg, code, ocode := err.Error(), "stream_failed", "server_error"
			if errors.Is(err, ErrGuardrailBlocked) {
				code, ocode = "guardrail_violation", "guardrail_violation" // a post_call guardrail refused the answer
			}
			_ = w.emit(responsesErrorEvent(code, msg))
			o.Status, o.Error = "failed", &ResponseError{Code: ocode, Message: msg}
			o.Store = false // a failed answer is not kept
			failed := *o
			_ = w.emit(responsesEvent{Type: "response.failed", Response: &failed})
			_ = w.sse.Flush()
			return err
		}
		switch c.Type {
		case EventReasoning:
			if err := w.reasoning(st.ResponseMessageID(), *c.Reasoning); err != nil {
				return err
			}
		case EventToolCall:
			if err := w.toolCall(st.ResponseMessageID(), c.ToolCall); err != nil {
				return err
			}
		default:
			if c.Text == "" {
				continue
			}
			if err := w.text(st.ResponseMessageID(), c.Text, c.Logprobs); err != nil {
				return err
			}
		}
		if err := w.sse.Flush(); err != nil {
			return err
		}
	}
	if err := w.closeAll(); err != nil {
		return err
	}
	if resp := st.Response(); resp != nil && resp.Refusal != "" && w.messages == 0 {
		// A refusal is whole only at the end (it is not streamed); after streamed reasoning
		// it is the answer's message item, which must not be lost to the streamed items.
		item := ResponseOutputItem{ID: "msg_" + st.ResponseMessageID(), Type: "message", Status: "completed", Role: "assistant",
			Content: []ResponseOutputPart{{Type: "refusal", Refusal: resp.Refusal, Annotations: []any{}}}}
		if _, err := w.addItem(item); err != nil {
			return err
		}
		w.items[len(w.items)-1].open = false
		if err := w.emit(responsesEvent{Type: "response.output_item.done", OutputIndex: idxp(len(o.Output) - 1), Item: &item}); err != nil {
			return err
		}
	}
	if resp := st.Response(); resp != nil {
		// Complete builds its output afresh (nil, so it shares no array with the streamed
		// items); the streamed items, whole since closeAll, are kept: they have the ids and
		// the order the events used.
		streamed := o.Output
		o.Output = nil
		o.Complete(resp)
		if len(streamed) > 0 {
			o.Output = streamed
		}
	}
	return w.finish(o, opts.BeforeDone)
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
	return w.finish(o, nil)
}

// signatureItem writes a completed reasoning item carrying Gemini's thought signature sig of
// call callID, call k of answer msgID (see thoughtSignatureToken).
func (w *responsesWriter) signatureItem(msgID string, k int, callID, sig string) error {
	item := thoughtSignatureItem(msgID, k, providers.ToolCall{ID: callID, ThoughtSignature: sig})
	idx, err := w.addItem(item)
	if err != nil {
		return err
	}
	w.items[idx].encrypted = item.EncryptedContent
	return w.closeItem(idx)
}
