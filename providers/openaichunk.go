package providers

import (
	"bytes"
	"errors"
	"io"
	"unicode"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// openAIChunkDecoder decodes the chat.completion.chunk events of an OpenAI stream, once per
// relayed fragment: the gateway's hottest loop. It reads the JSON tokens with jsontext and
// keeps only what a Chunk needs — choices[].delta.content, .refusal and .tool_calls,
// choices[].finish_reason, usage, and whether an error member is present — skipping the rest
// without reflection or allocation, and reusing its buffers from one event to the next. It
// accepts and rejects what decodeUpstream into the equivalent struct does (names matched
// without regard to case, duplicate names allowed, invalid UTF-8 replaced; a value of the
// wrong type is an error); a test checks it against that decoding.
type openAIChunkDecoder struct {
	buf     bytes.Buffer
	dec     jsontext.Decoder
	scratch []byte
	deltas  []ToolCallDelta // backing array of Chunk.ToolCalls
}

// errChunkShape reports JSON that does not have the chunk's shape.
var errChunkShape = errors.New("unexpected JSON shape for a chat.completion.chunk")

// decode decodes one event. errorBody reports an "error" member that is not null (the
// caller then parses the event as an error body). out.ToolCalls is valid until the next call.
func (d *openAIChunkDecoder) decode(data []byte) (out Chunk, errorBody bool, err error) {
	d.buf.Reset()
	d.buf.Write(data)
	d.dec.Reset(&d.buf, upstreamJSON)
	d.deltas = d.deltas[:0]
	if null, err := d.null(); err != nil || null {
		if _, eof := d.dec.ReadToken(); err == nil && eof != io.EOF {
			err = errChunkShape
		}
		return Chunk{}, false, err // null decodes to nothing
	}
	if err := d.open('{'); err != nil {
		return Chunk{}, false, err
	}
	for more, err := d.more('}'); more || err != nil; more, err = d.more('}') {
		if err != nil {
			return Chunk{}, false, err
		}
		name, err := d.name()
		if err != nil {
			return Chunk{}, false, err
		}
		switch {
		case nameIs(name, "choices"):
			err = d.choices(&out)
		case nameIs(name, "usage"):
			var v jsontext.Value
			if v, err = d.dec.ReadValue(); err == nil && v.Kind() != 'n' {
				var u openAIUsage
				if err = decodeUpstream(v, &u); err == nil {
					uu := u.usage()
					out.Usage = &uu
				}
			} else if err == nil {
				out.Usage = nil // a later null wins, as in a struct decode
			}
		case nameIs(name, "error"):
			var v jsontext.Value
			if v, err = d.dec.ReadValue(); err == nil {
				errorBody = v.Kind() != 'n'
			}
		default:
			err = d.dec.SkipValue()
		}
		if err != nil {
			return Chunk{}, false, err
		}
	}
	if _, err := d.dec.ReadToken(); err != io.EOF {
		return Chunk{}, false, errChunkShape // data after the object
	}
	if len(d.deltas) > 0 {
		out.ToolCalls = d.deltas
	}
	return out, errorBody, nil
}

// choice is what one element of choices contributes; a repeated or null member replaces
// the earlier value, as it does in a struct decode.
type choice struct {
	content, refusal, finish string
	calls                    int // d.deltas[calls:] are this choice's tool calls
}

func (d *openAIChunkDecoder) choices(out *Chunk) error {
	// A repeated "choices" replaces the earlier one.
	out.Text, out.Refusal, out.FinishReason = "", "", ""
	d.deltas = d.deltas[:0]
	if null, err := d.null(); null || err != nil {
		return err
	}
	if err := d.open('['); err != nil {
		return err
	}
	for more, err := d.more(']'); more || err != nil; more, err = d.more(']') {
		if err != nil {
			return err
		}
		if null, err := d.null(); err != nil {
			return err
		} else if null {
			continue
		}
		if err := d.open('{'); err != nil {
			return err
		}
		ch := choice{calls: len(d.deltas)}
		for more, err := d.more('}'); more || err != nil; more, err = d.more('}') {
			if err != nil {
				return err
			}
			name, err := d.name()
			if err != nil {
				return err
			}
			switch {
			case nameIs(name, "delta"):
				err = d.delta(&ch)
			case nameIs(name, "finish_reason"):
				ch.finish, _, err = d.str()
			default:
				err = d.dec.SkipValue()
			}
			if err != nil {
				return err
			}
		}
		out.Text += ch.content
		out.Refusal += ch.refusal
		if ch.finish != "" {
			out.FinishReason = ch.finish
		}
	}
	return nil
}

func (d *openAIChunkDecoder) delta(ch *choice) error {
	if null, err := d.null(); null || err != nil {
		ch.content, ch.refusal = "", ""
		d.deltas = d.deltas[:ch.calls]
		return err
	}
	if err := d.open('{'); err != nil {
		return err
	}
	for more, err := d.more('}'); more || err != nil; more, err = d.more('}') {
		if err != nil {
			return err
		}
		name, err := d.name()
		if err != nil {
			return err
		}
		switch {
		case nameIs(name, "content"):
			ch.content, _, err = d.str()
		case nameIs(name, "refusal"):
			ch.refusal, _, err = d.str()
		case nameIs(name, "tool_calls"):
			d.deltas = d.deltas[:ch.calls]
			err = d.toolCalls()
		default:
			err = d.dec.SkipValue()
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (d *openAIChunkDecoder) toolCalls() error {
	if null, err := d.null(); null || err != nil {
		return err
	}
	if err := d.open('['); err != nil {
		return err
	}
	for more, err := d.more(']'); more || err != nil; more, err = d.more(']') {
		if err != nil {
			return err
		}
		var c ToolCallDelta
		if null, err := d.null(); err != nil {
			return err
		} else if !null {
			if err := d.toolCall(&c); err != nil {
				return err
			}
		}
		d.deltas = append(d.deltas, c)
	}
	return nil
}

func (d *openAIChunkDecoder) toolCall(c *ToolCallDelta) error {
	if err := d.open('{'); err != nil {
		return err
	}
	for more, err := d.more('}'); more || err != nil; more, err = d.more('}') {
		if err != nil {
			return err
		}
		name, err := d.name()
		if err != nil {
			return err
		}
		switch {
		case nameIs(name, "index"):
			c.Index, err = d.int()
		case nameIs(name, "id"):
			c.ID, _, err = d.str()
		case nameIs(name, "function"):
			err = d.function(c)
		default:
			err = d.dec.SkipValue()
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (d *openAIChunkDecoder) function(c *ToolCallDelta) error {
	if null, err := d.null(); null || err != nil {
		c.Name, c.Arguments = "", ""
		return err
	}
	if err := d.open('{'); err != nil {
		return err
	}
	for more, err := d.more('}'); more || err != nil; more, err = d.more('}') {
		if err != nil {
			return err
		}
		name, err := d.name()
		if err != nil {
			return err
		}
		switch {
		case nameIs(name, "name"):
			c.Name, _, err = d.str()
		case nameIs(name, "arguments"):
			c.Arguments, _, err = d.str()
		default:
			err = d.dec.SkipValue()
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// open reads the delimiter that starts an object or array.
func (d *openAIChunkDecoder) open(delim jsontext.Kind) error {
	if k := d.dec.PeekKind(); k != delim {
		if k == jsontext.KindInvalid {
			_, err := d.dec.ReadToken()
			return err
		}
		return errChunkShape
	}
	_, err := d.dec.ReadToken()
	return err
}

// more reports whether the object or array goes on; at its end it reads the closing delimiter.
func (d *openAIChunkDecoder) more(end jsontext.Kind) (bool, error) {
	switch d.dec.PeekKind() {
	case end:
		_, err := d.dec.ReadToken()
		return false, err
	case jsontext.KindInvalid:
		_, err := d.dec.ReadToken()
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return false, err
	}
	return true, nil
}

// null reads a null and reports whether there was one.
func (d *openAIChunkDecoder) null() (bool, error) {
	if d.dec.PeekKind() != 'n' {
		return false, nil
	}
	_, err := d.dec.ReadToken()
	return true, err
}

// name reads an object member's name, unquoted; it is valid until the next read.
func (d *openAIChunkDecoder) name() ([]byte, error) {
	v, err := d.dec.ReadValue()
	if err != nil {
		return nil, err
	}
	if bytes.IndexByte(v, '\\') < 0 {
		return v[1 : len(v)-1], nil
	}
	d.scratch, err = jsontext.AppendUnquote(d.scratch[:0], v)
	return d.scratch, err
}

// str reads a string or null (ok false); anything else is an error.
func (d *openAIChunkDecoder) str() (s string, ok bool, err error) {
	switch d.dec.PeekKind() {
	case 'n':
		_, err = d.dec.ReadToken()
		return "", false, err
	case '"':
	case jsontext.KindInvalid:
		_, err = d.dec.ReadToken()
		return "", false, err
	default:
		return "", false, errChunkShape
	}
	v, err := d.dec.ReadValue()
	if err != nil {
		return "", false, err
	}
	body := v[1 : len(v)-1]
	if bytes.IndexByte(body, '\\') < 0 && utf8.Valid(body) {
		return string(body), true, nil
	}
	// Tool-call arguments are JSON text, so their quotes come escaped.
	if u, err := jsontext.AppendUnquote(d.scratch[:0], v); err == nil && utf8.Valid(u) {
		d.scratch = u
		return string(u), true, nil
	}
	// Escapes or invalid UTF-8: exactly what the struct decoding makes of it.
	err = jsonv2.Unmarshal(v, &s, upstreamJSON)
	return s, err == nil, err
}

// int reads a non-negative integer or null (0).
func (d *openAIChunkDecoder) int() (int, error) {
	switch d.dec.PeekKind() {
	case 'n':
		_, err := d.dec.ReadToken()
		return 0, err
	case '0':
	case jsontext.KindInvalid:
		_, err := d.dec.ReadToken()
		return 0, err
	default:
		return 0, errChunkShape
	}
	v, err := d.dec.ReadValue()
	if err != nil {
		return 0, err
	}
	n := 0
	for _, c := range v {
		if c < '0' || c > '9' || n > 1<<30 {
			var i int
			err := jsonv2.Unmarshal(v, &i, upstreamJSON)
			return i, err
		}
		n = n*10 + int(c-'0')
	}
	return n, nil
}

// nameIs reports whether a member name matches the field name want (lower-case ASCII)
// the way the struct decoding's case-insensitive matching does: without regard to case,
// underscores or dashes.
func nameIs(name []byte, want string) bool {
	if string(name) == want {
		return true
	}
	if len(name) == 0 || name[0]|0x20 != want[0] && name[0] < utf8.RuneSelf {
		return false // no folding makes the first letter match
	}
	j := 0
	for i := 0; i < len(name); {
		c := name[i]
		var r rune
		if c < utf8.RuneSelf {
			i++
			if c == '_' || c == '-' {
				continue
			}
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			r = rune(c)
		} else {
			var n int
			r, n = utf8.DecodeRune(name[i:])
			i += n
			r = unicode.ToLower(foldRune(r))
		}
		for j < len(want) && want[j] == '_' {
			j++
		}
		if j >= len(want) || rune(want[j]) != r {
			return false
		}
		j++
	}
	for j < len(want) && want[j] == '_' {
		j++
	}
	return j == len(want)
}

// foldRune returns the smallest rune of r's case-folding orbit (so the Kelvin sign folds
// to 'K'), as the struct decoding's name folding does.
func foldRune(r rune) rune {
	for {
		r2 := unicode.SimpleFold(r)
		if r2 <= r {
			return r2
		}
		r = r2
	}
}
