package completions

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// fragmentTemplate encodes the events of one stream that differ only in the fragment text:
// the bytes around the text are encoded once, by encoding/json, and each fragment only has
// its text quoted into place. Relaying a fragment is the gateway's hottest loop, and this
// skips reflection there while producing exactly the bytes encoding/json would.
type fragmentTemplate struct {
	parts [][]byte // the text goes between consecutive parts
	buf   []byte
}

// fragmentPlaceholder stands in for the text when the template is made; encoding/json
// escapes its NUL bytes, so it cannot be confused with the stream's other fields.
const fragmentPlaceholder = "\x00switchyard-fragment\x00"

// newFragmentTemplate encodes sample(placeholder) and splits it where the text goes. The
// text must appear exactly uses times; otherwise (say another field happened to contain
// the placeholder) it returns nil and the caller encodes each event in full.
func newFragmentTemplate(sample any, uses int) *fragmentTemplate {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(sample) != nil {
		return nil
	}
	quoted := appendJSONString(nil, fragmentPlaceholder)
	parts := bytes.Split(bytes.TrimSuffix(b.Bytes(), []byte("\n")), quoted)
	if len(parts) != uses+1 {
		return nil
	}
	return &fragmentTemplate{parts: parts}
}

// event returns the encoded event for text; the slice is reused by the next call.
func (t *fragmentTemplate) event(text string) []byte {
	b := append(t.buf[:0], t.parts[0]...)
	for _, p := range t.parts[1:] {
		b = appendJSONString(b, text)
		b = append(b, p...)
	}
	t.buf = b
	return b
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string exactly as encoding/json encodes it with
// SetEscapeHTML(false): '"', '\\' and control characters escaped, invalid UTF-8 replaced
// by \ufffd, and U+2028 and U+2029 escaped.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
