package completions

import (
	"bytes"
	"encoding/json"

	"github.com/switchyard-ai/switchyard/providers"
)

// streamedCallSet is the state of a Responses stream's function calls. OpenAI sends
// parallel calls one after the other: a call's output_item.added, its argument deltas and
// its done events, then the next call's output_item.added. A chat-completions upstream
// sends its calls' fragments by index, and may interleave them (both headers first, then
// the arguments of one and the other in turn); so:
//
//   - the first call opens with its first fragment, and every fragment of the open
//     ("active") call is sent at once: its deltas are never held back;
//   - a fragment of another call, while one is open, is buffered: the call is queued;
//   - the open call is closed (its done events) once a queued call waits and the open
//     call's arguments so far are a whole JSON value (more fragments could not extend
//     them); the next queued call then opens, its buffered arguments sent as one delta,
//     and becomes the active call, and so on;
//   - when the stream ends (or text or reasoning follows the calls) the open call closes
//     and the queued ones are opened and closed in turn.
//
// An upstream that does not interleave (OpenAI's) has nothing buffered: a call is whole
// when the next one starts. Interleaving forces the buffering of the later calls until the
// earlier ones are complete, since an item cannot be reopened once done.
type streamedCallSet struct {
	byIndex map[int]*streamingCall // upstream tool-call index → its call
	seen    int                    // calls seen so far (each call's number k)
	active  *streamingCall         // the call whose item is open, or nil
	queued  []*streamingCall       // calls seen but not opened yet, first seen first
	msgID   string                 // the answer's message id (the calls' item ids)
}

// streamingCall is one function call of a Responses stream.
type streamingCall struct {
	k         int    // its number among the answer's calls (its item id's suffix)
	out       int    // its output index once opened, -1 before
	closed    bool   // its done events were sent
	id, name  string // call_id and function name, from its first fragments
	signature string // a Gemini thought signature not sent yet
	buffered  []byte // arguments received before it opened
}

// toolCall writes the events of the tool-call fragment d of the answer msgID.
func (w *responsesWriter) toolCall(msgID string, d providers.ToolCallDelta) error {
	cs := &w.calls
	cs.msgID = msgID
	c := cs.byIndex[d.Index]
	if c == nil {
		if cs.byIndex == nil {
			cs.byIndex = map[int]*streamingCall{}
		}
		c = &streamingCall{k: cs.seen, out: -1}
		cs.seen++
		cs.byIndex[d.Index] = c
		cs.queued = append(cs.queued, c)
	}
	switch {
	case c.closed:
		if d.ThoughtSignature != "" { // an item of its own, naming the call
			if err := w.signatureItem(msgID, c.k, w.o.Output[c.out].CallID, d.ThoughtSignature); err != nil {
				return err
			}
		}
		// Only a broken upstream extends arguments that were a whole JSON value: the text is
		// kept in the final response, but its events were sent already.
		if d.Arguments != "" && len(bytes.TrimSpace([]byte(d.Arguments))) > 0 {
			item := &w.o.Output[c.out]
			if item.Type == "custom_tool_call" {
				return nil
			}
			args := ""
			if item.Arguments != nil {
				args = *item.Arguments
			}
			args += d.Arguments
			item.Arguments = &args
		}
		return nil
	case c.out < 0: // not opened yet
		if d.ID != "" {
			c.id = d.ID
		}
		if d.Name != "" {
			c.name = d.Name
		}
		if d.ThoughtSignature != "" {
			c.signature = d.ThoughtSignature
		}
		c.buffered = append(c.buffered, d.Arguments...)
	default: // the active call
		if d.ThoughtSignature != "" {
			// A signature after its call opened: an item of its own, naming the call.
			if err := w.signatureItem(msgID, c.k, w.o.Output[c.out].CallID, d.ThoughtSignature); err != nil {
				return err
			}
		}
		if err := w.callArguments(c, d.Arguments); err != nil {
			return err
		}
	}
	return w.advanceCalls(msgID, false)
}

// advanceCalls opens the queued calls in turn: the first when none is open; the next once
// the open one is complete (all, when flush is set: nothing more will come).
func (w *responsesWriter) advanceCalls(msgID string, flush bool) error {
	cs := &w.calls
	for len(cs.queued) > 0 {
		if a := cs.active; a != nil {
			if !flush && !json.Valid(w.items[a.out].buf) {
				return nil // the open call may have more fragments: the others wait
			}
			if err := w.closeItem(a.out); err != nil { // a.closed, cs.active = nil
				return err
			}
		}
		c := cs.queued[0]
		cs.queued = cs.queued[1:]
		if err := w.openCall(msgID, c); err != nil {
			return err
		}
	}
	if flush && cs.active != nil {
		return w.closeItem(cs.active.out)
	}
	return nil
}

// openCall adds call c's item (the message or reasoning before it closes), preceded by its
// Gemini thought signature, as a whole answer has it, and sends its buffered arguments.
func (w *responsesWriter) openCall(msgID string, c *streamingCall) error {
	if w.thought >= 0 { // the reasoning that led to the call is complete
		if err := w.closeItem(w.thought); err != nil {
			return err
		}
	}
	if w.msg >= 0 { // the text before the calls is complete
		if err := w.closeItem(w.msg); err != nil {
			return err
		}
	}
	if c.signature != "" {
		if err := w.signatureItem(msgID, c.k, c.id, c.signature); err != nil {
			return err
		}
		c.signature = ""
	}
	idx, err := w.addItem(w.o.tools.callItem(callItemID(msgID, c.k), c.id, c.name, "", "in_progress"))
	if err != nil {
		return err
	}
	c.out = idx
	w.calls.active = c
	args := string(c.buffered)
	c.buffered = nil
	return w.callArguments(c, args)
}

// callArguments sends the argument fragment args of the open call c: a
// function_call_arguments.delta (a custom tool call's input is sent whole when it closes).
func (w *responsesWriter) callArguments(c *streamingCall, args string) error {
	it := &w.items[c.out]
	if args == "" || !it.open {
		return nil
	}
	it.buf = append(it.buf, args...)
	item := &w.o.Output[c.out]
	if item.Type == "custom_tool_call" {
		return nil
	}
	return w.emit(responsesEvent{Type: "response.function_call_arguments.delta", ItemID: item.ID, OutputIndex: idxp(c.out), Delta: &args})
}

// flushCalls closes the open call and sends the queued ones, each opened and closed in turn.
func (w *responsesWriter) flushCalls() error {
	if w.calls.active == nil && len(w.calls.queued) == 0 {
		return nil
	}
	return w.advanceCalls(w.calls.msgID, true)
}
