package providers

import (
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// The events of one OpenAI stream are alike: id, model, created, the choice index and a
// tool call's index repeat byte for byte, and only the piece of text or of tool-call
// arguments changes (and "obfuscation", a random padding string OpenAI adds). So the
// decoder keeps the layout of the last plain event — one choice, one delta, one string
// that becomes the chunk's text or one call's arguments — and reads the next event by
// comparing its bytes with that layout around the strings that may change, checking only
// those strings. An event that matches is valid JSON of the same shape as the one before,
// so it decodes to the same Chunk with the new string; anything else takes the full walk.
// This keeps the cost of a fragment close to the bytes of its payload, the same for a
// piece of text and a piece of arguments.

// span is a range [start, end) of an event's bytes: the contents of a string, without its
// quotes. The zero span is none (a string's contents never start at 0).
type span struct{ start, end int }

// payloadKind says which field of a Chunk an event's one changing string fills.
type payloadKind uint8

const (
	payloadNone payloadKind = iota
	payloadContent
	payloadArguments
)

// eventShape counts, during the full walk of one event, what decides whether the event is
// plain enough to serve as a template: a member repeated or set to null could make the
// payload string not (or not alone) decide its field.
type eventShape struct {
	choices, elements, deltas   int // "choices" members, their elements, "delta" members
	toolCallLists, calls, funcs int // "tool_calls" members, their elements, "function" members
	payloads                    int // strings read for "content" and "arguments"
	kind                        payloadKind
	at                          span // the last payload string
	ignored                     span // a top-level "obfuscation" string
	odd                         bool // a null where an object, array or payload was
	reasoning                   bool // a reasoning string, which the template has no slot for
}

// payload records a string read for content or arguments (at is zero for null).
func (s *eventShape) payload(k payloadKind, at span) {
	s.payloads++
	s.kind, s.at = k, at
	if at == (span{}) {
		s.odd = true
	}
}

// plain reports whether the walked event can serve as a template.
func (s *eventShape) plain(out Chunk) bool {
	if s.odd || s.reasoning || s.payloads != 1 || s.choices != 1 || s.elements != 1 || s.deltas != 1 || out.Usage != nil {
		return false
	}
	switch s.kind {
	case payloadContent:
		return s.toolCallLists == 0
	case payloadArguments:
		return s.toolCallLists == 1 && s.calls == 1 && s.funcs == 1 && len(out.ToolCalls) == 1
	}
	return false
}

// chunkTemplate is the layout of the last plain event: its bytes, where its changing
// strings are, and what it decoded to apart from the payload.
type chunkTemplate struct {
	ok      bool
	buf     []byte
	slots   [2]span // in order of position; slots[1] zero when there is one
	payload int     // index in slots of the payload string
	kind    payloadKind
	chunk   Chunk         // the decoded event, Text or the call's Arguments cleared
	call    ToolCallDelta // the one tool call of an arguments template
}

// remember makes the event just walked the template when it is plain; otherwise the
// template stays (a stream's last chunks, finish reason and usage, do not replace it).
func (d *openAIChunkDecoder) remember(out Chunk) {
	if !d.shape.plain(out) {
		return
	}
	t := &d.tmpl
	t.buf = append(t.buf[:0], d.b...)
	t.kind = d.shape.kind
	t.slots, t.payload = [2]span{d.shape.at}, 0
	if ig := d.shape.ignored; ig != (span{}) {
		if ig.start < d.shape.at.start {
			t.slots, t.payload = [2]span{ig, d.shape.at}, 1
		} else {
			t.slots[1] = ig
		}
	}
	t.chunk = out
	t.chunk.ToolCalls = nil
	if t.kind == payloadContent {
		t.chunk.Text = ""
	} else {
		t.call = out.ToolCalls[0]
		t.call.Arguments = ""
	}
	t.ok = true
}

// fromTemplate decodes data when it has the template's layout; ok false sends it through
// the full walk.
func (d *openAIChunkDecoder) fromTemplate(data []byte) (out Chunk, ok bool) {
	t := &d.tmpl
	if !t.ok {
		return Chunk{}, false
	}
	pos, prev := 0, 0
	var payload span
	escaped := false
	for i, slot := range t.slots {
		if slot == (span{}) {
			break
		}
		fixed := t.buf[prev:slot.start] // ends with the string's opening quote
		if len(data)-pos < len(fixed) || string(data[pos:pos+len(fixed)]) != string(fixed) {
			return Chunk{}, false
		}
		pos += len(fixed)
		end, esc, valid := scanJSONString(data, pos)
		if !valid {
			return Chunk{}, false
		}
		if i == t.payload {
			payload, escaped = span{pos, end}, esc
		}
		pos, prev = end, slot.end
	}
	if string(data[pos:]) != string(t.buf[prev:]) {
		return Chunk{}, false
	}
	var s string
	if !escaped {
		s = string(data[payload.start:payload.end])
	} else {
		u, err := jsontext.AppendUnquote(d.scratch[:0], data[payload.start-1:payload.end+1])
		if err != nil || !utf8.Valid(u) {
			return Chunk{}, false // the full walk decides what it means
		}
		d.scratch = u
		s = string(u)
	}
	d.templated++
	out = t.chunk
	if t.kind == payloadContent {
		out.Text = s
	} else {
		c := t.call
		c.Arguments = s
		d.deltas = append(d.deltas[:0], c)
		out.ToolCalls = d.deltas
	}
	return out, true
}

// scanJSONString finds the end of the string whose contents start at data[i]: the index of
// its closing quote, whether it has escapes, and false when it has raw control characters
// or, without escapes, invalid UTF-8 (escaped strings are checked when unquoted).
func scanJSONString(data []byte, i int) (end int, escaped, ok bool) {
	ascii := true
	for j := i; j < len(data); j++ {
		switch c := data[j]; {
		case c == '"':
			if !ascii && !escaped && !utf8.Valid(data[i:j]) {
				return 0, false, false
			}
			return j, escaped, true
		case c == '\\':
			escaped = true
			j++
		case c < 0x20:
			return 0, false, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return 0, false, false
}
