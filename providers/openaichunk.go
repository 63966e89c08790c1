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
// relayed fragment: the gateway's hottest loop. jsontext checks that the event is one valid
// JSON value (its fast scanner, without building tokens); then a walk over the checked bytes
// keeps only what a Chunk needs — choices[].delta.content, .refusal, .tool_calls and
// .audio, choices[].finish_reason and .logprobs (when not null), usage, and whether an error member is present — skipping the
// rest without reflection or allocation, and reusing its buffers from one event to the next.
// The reasoning of compatible servers (delta.reasoning_content, else delta.reasoning) is
// kept beside the Chunk, in reasoning, for the stream to relay as a chunk of its own; an
// event with reasoning is never a template, so text and arguments events keep their path.
// It accepts and rejects what decodeUpstream into the equivalent struct does (names matched
// the same way, duplicate names allowed with the last one winning, invalid UTF-8 replaced,
// a value of the wrong type an error); a test checks it against that decoding on every
// recorded event and a fuzz test on any valid JSON.
type openAIChunkDecoder struct {
	b       []byte // the checked event
	i       int    // read position in b
	scratch []byte
	deltas  []ToolCallDelta // backing array of Chunk.ToolCalls

	tmpl      chunkTemplate // the last plain event's layout, for the next one (openaichunk_template.go)
	shape     eventShape    // what the event being walked held, to decide whether it is plain
	templated int           // events read through the template, for tests
	lastStr   span          // where in b the contents of the last string str read are; zero after a null
	// Tool-call deltas without an "index" (some OpenAI-compatible servers leave it out): a
	// delta with a new id starts the next call, one without an id continues the current.
	noIndexID   string
	noIndexCall int
	// reasoning is the reasoning text of the last event decoded, "" when it had none: each
	// choice's delta.reasoning_content, else its delta.reasoning (a non-string value of
	// either is ignored). It is not in decode's Chunk, which holds the answer only.
	reasoning string
	// sources are the pages the last event's annotations cited that no earlier event of
	// the stream did (sourced holds those), as Chunk.Sources.
	sources []Source
	sourced sourceSet
	// fingerprint and tier are the last system_fingerprint and service_tier strings read:
	// an event that repeats one (OpenAI's every event does) reuses the string instead of
	// allocating its copy.
	fingerprint, tier string
}

// errChunkShape reports JSON that does not have the chunk's shape.
var errChunkShape = errors.New("unexpected JSON shape for a chat.completion.chunk")

// errNotJSON reports an event that is not one valid JSON value.
var errNotJSON = errors.New("not a valid JSON value")

// decode decodes one event. errorBody reports an "error" member that is not null (the
// caller then parses the event as an error body). out.ToolCalls is valid until the next call.
func (d *openAIChunkDecoder) decode(data []byte) (out Chunk, errorBody bool, err error) {
	d.reasoning, d.sources = "", nil
	if out, ok := d.fromTemplate(data); ok {
		return out, false, nil
	}
	if !jsontext.Value(data).IsValid(upstreamJSON) {
		return Chunk{}, false, errNotJSON
	}
	d.b, d.i = data, 0
	d.deltas = d.deltas[:0]
	d.shape = eventShape{}
	if null, _ := d.null(); null {
		return Chunk{}, false, nil // null decodes to nothing
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
			if v := d.value(); v[0] != 'n' {
				var u openAIUsage
				if err = decodeUpstream(v, &u); err == nil {
					uu := u.usage()
					out.Usage = &uu
				}
			} else {
				out.Usage = nil // a later null wins, as in a struct decode
			}
		case nameIs(name, "error"):
			errorBody = d.value()[0] != 'n'
		case nameIs(name, "system_fingerprint"):
			out.SystemFingerprint = d.upstreamString(&d.fingerprint)
		case nameIs(name, "service_tier"):
			out.ServiceTier = d.upstreamString(&d.tier)
		default:
			start := d.i
			if v := d.value(); string(name) == "obfuscation" && v[0] == '"' {
				d.shape.ignored = span{start + 1, d.i - 1}
			}
		}
		if err != nil {
			return Chunk{}, false, err
		}
	}
	if len(d.deltas) > 0 {
		out.ToolCalls = d.deltas
	}
	if !errorBody {
		d.remember(out)
	}
	return out, errorBody, nil
}

// choice is what one element of choices contributes; a repeated or null member replaces
// the earlier value, as it does in a struct decode.
type choice struct {
	content, refusal, finish string
	calls                    int // d.deltas[calls:] are this choice's tool calls
	// reasoningContent and reasoning are delta.reasoning_content and delta.reasoning.
	reasoningContent, reasoning string
	// logprobs is the choice's logprobs when not null (Request.Logprobs).
	logprobs *Logprobs
	// audio is delta.audio, a piece of a spoken answer, when not null nor empty.
	audio *AudioDelta
}

func (d *openAIChunkDecoder) choices(out *Chunk) error {
	// A repeated "choices" replaces the earlier one.
	out.Text, out.Refusal, out.FinishReason, out.Logprobs, out.Audio = "", "", "", nil, nil
	d.reasoning = ""
	d.deltas = d.deltas[:0]
	d.shape.choices++
	if null, err := d.null(); null || err != nil {
		d.shape.odd = true
		return err
	}
	if err := d.open('['); err != nil {
		return err
	}
	for more, err := d.more(']'); more || err != nil; more, err = d.more(']') {
		if err != nil {
			return err
		}
		d.shape.elements++
		if null, err := d.null(); err != nil {
			return err
		} else if null {
			d.shape.odd = true
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
				d.shape.deltas++
				err = d.delta(&ch)
			case nameIs(name, "finish_reason"):
				ch.finish, _, err = d.str()
			case nameIs(name, "logprobs"):
				// null in every event of a stream that did not ask for them: skipped as
				// cheaply as any other member, and the event may still be a template.
				if v := d.value(); v[0] != 'n' {
					ch.logprobs, err = decodeOpenAILogprobs(v)
					d.shape.odd = true // the template has no slot for them
				} else {
					ch.logprobs = nil
				}
			default:
				d.value()
			}
			if err != nil {
				return err
			}
		}
		out.Text += ch.content
		out.Refusal += ch.refusal
		if ch.logprobs != nil {
			if out.Logprobs == nil {
				out.Logprobs = ch.logprobs
			} else {
				out.Logprobs.Append(ch.logprobs)
			}
		}
		if ch.audio != nil {
			out.Audio = ch.audio // one choice answers aloud (n is 1): the last one's wins
		}
		out.Sources = d.sources
		if ch.reasoningContent != "" {
			d.reasoning += ch.reasoningContent
		} else {
			d.reasoning += ch.reasoning
		}
		if ch.finish != "" {
			out.FinishReason = ch.finish
		}
	}
	return nil
}

func (d *openAIChunkDecoder) delta(ch *choice) error {
	if null, err := d.null(); null || err != nil {
		ch.content, ch.refusal, ch.reasoningContent, ch.reasoning, ch.audio = "", "", "", "", nil
		d.deltas = d.deltas[:ch.calls]
		d.shape.odd = true
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
			d.shape.payload(payloadContent, d.lastStr)
		case nameIs(name, "refusal"):
			ch.refusal, _, err = d.str()
		case nameIs(name, "tool_calls"):
			d.deltas = d.deltas[:ch.calls]
			d.shape.toolCallLists++
			err = d.toolCalls()
		case nameIs(name, "reasoning_content"):
			ch.reasoningContent, err = d.reasoningText()
		case nameIs(name, "reasoning"):
			ch.reasoning, err = d.reasoningText()
		case nameIs(name, "audio"):
			// A piece of a spoken answer: decoded whole, never a template.
			ch.audio, err = decodeAudioDelta(d.value(), ch.audio)
			d.shape.odd = true
		case nameIs(name, "annotations"):
			// A search model's citations: rare, decoded whole, never a template.
			if d.sourced == nil {
				d.sourced = sourceSet{}
			}
			d.sources = append(d.sources, openAIChatSources(d.value(), d.sourced)...)
			d.shape.odd = true
		default:
			d.value()
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// decodeAudioDelta decodes delta.audio over was (the same member earlier in the delta,
// merged into as a struct decoding merges a repeated member): nil for null, or for an
// object that leaves nothing to relay.
func decodeAudioDelta(v []byte, was *AudioDelta) (*AudioDelta, error) {
	if v[0] == 'n' {
		return nil, nil
	}
	var a AudioDelta
	if was != nil {
		a = *was
	}
	if err := decodeUpstream(v, &a); err != nil {
		return nil, err
	}
	if a == (AudioDelta{}) {
		return nil, nil
	}
	return &a, nil
}

// reasoningText reads a reasoning member: its string, or "" for null or a value of another
// type (a server's own structure, ignored rather than failing the event). A non-empty
// string keeps the event from becoming a template: its text must come from a full walk.
// Null and "" — what the text events of reasoning servers carry — are skipped without str,
// which costs an allocation per call, so those events cost what they did before.
func (d *openAIChunkDecoder) reasoningText() (string, error) {
	if c := d.peek(); c != '"' || d.i+1 < len(d.b) && d.b[d.i+1] == '"' {
		d.value() // null, "", or not a string
		return "", nil
	}
	s, _, err := d.str()
	if s != "" {
		d.shape.reasoning = true
	}
	return s, err
}

func (d *openAIChunkDecoder) toolCalls() error {
	if null, err := d.null(); null || err != nil {
		d.shape.odd = true
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
		d.shape.calls++
		if null, err := d.null(); err != nil {
			return err
		} else if null {
			d.shape.odd = true
		} else {
			indexed, err := d.toolCall(&c)
			if err != nil {
				return err
			}
			if !indexed {
				if c.ID != "" && c.ID != d.noIndexID {
					if d.noIndexID != "" {
						d.noIndexCall++
					}
					d.noIndexID = c.ID
				}
				c.Index = d.noIndexCall
			}
		}
		d.deltas = append(d.deltas, c)
	}
	return nil
}

// toolCall reads one tool-call delta into c; indexed reports whether it had an "index".
func (d *openAIChunkDecoder) toolCall(c *ToolCallDelta) (indexed bool, err error) {
	if err := d.open('{'); err != nil {
		return false, err
	}
	for more, err := d.more('}'); more || err != nil; more, err = d.more('}') {
		if err != nil {
			return indexed, err
		}
		name, err := d.name()
		if err != nil {
			return indexed, err
		}
		switch {
		case nameIs(name, "index"):
			c.Index, err = d.int()
			indexed = true
		case nameIs(name, "id"):
			c.ID, _, err = d.str()
		case nameIs(name, "function"):
			d.shape.funcs++
			err = d.function(c)
		default:
			d.value()
		}
		if err != nil {
			return indexed, err
		}
	}
	return indexed, nil
}

func (d *openAIChunkDecoder) function(c *ToolCallDelta) error {
	if null, err := d.null(); null || err != nil {
		c.Name, c.Arguments = "", ""
		d.shape.odd = true
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
			d.shape.payload(payloadArguments, d.lastStr)
		default:
			d.value()
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// The walk below reads bytes that jsontext has checked to be one valid JSON value, so it
// only has to find where things start and end.

// ws skips whitespace.
func (d *openAIChunkDecoder) ws() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// peek returns the first byte of the next value or delimiter.
func (d *openAIChunkDecoder) peek() byte {
	if d.i < len(d.b) && d.b[d.i] > ' ' { // upstreams send compact JSON
		return d.b[d.i]
	}
	d.ws()
	if d.i >= len(d.b) {
		return 0
	}
	return d.b[d.i]
}

// open reads the delimiter that starts an object or array; another value there is the
// wrong type.
func (d *openAIChunkDecoder) open(delim byte) error {
	if d.peek() != delim {
		return errChunkShape
	}
	d.i++
	return nil
}

// more reports whether the object or array goes on, reading the comma before the next
// member; at its end it reads the closing delimiter.
func (d *openAIChunkDecoder) more(end byte) (bool, error) {
	switch d.peek() {
	case end:
		d.i++
		return false, nil
	case ',':
		d.i++
		d.ws()
	case 0:
		return false, io.ErrUnexpectedEOF
	}
	return true, nil
}

// null reads a null and reports whether there was one.
func (d *openAIChunkDecoder) null() (bool, error) {
	if d.peek() != 'n' {
		return false, nil
	}
	d.i += len("null")
	return true, nil
}

// stringEnd returns the index just after the string that starts at i.
func (d *openAIChunkDecoder) stringEnd(i int) int {
	rest := d.b[i+1:]
	if q := bytes.IndexByte(rest, '"'); q >= 0 && bytes.IndexByte(rest[:q], '\\') < 0 {
		return i + 1 + q + 1 // no escapes before the first quote: it ends the string
	}
	for i++; i < len(d.b); i++ {
		switch d.b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(d.b)
}

// value reads the next value and returns its bytes.
func (d *openAIChunkDecoder) value() []byte {
	d.peek()
	start := d.i
	switch c := d.b[d.i]; c {
	case '"':
		d.i = d.stringEnd(d.i)
	case '{', '[':
		depth := 0
		for d.i < len(d.b) {
			switch d.b[d.i] {
			case '"':
				d.i = d.stringEnd(d.i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
			}
			d.i++
			if depth == 0 {
				break
			}
		}
	default: // number or literal
		for d.i < len(d.b) {
			switch d.b[d.i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return d.b[start:d.i]
			}
			d.i++
		}
	}
	return d.b[start:d.i]
}

// name reads an object member's name, unquoted, and the colon after it; the name is valid
// until the next call.
func (d *openAIChunkDecoder) name() ([]byte, error) {
	v := d.value()
	if d.peek() != ':' {
		return nil, errChunkShape
	}
	d.i++
	if bytes.IndexByte(v, '\\') < 0 {
		return v[1 : len(v)-1], nil
	}
	var err error
	d.scratch, err = jsontext.AppendUnquote(d.scratch[:0], v)
	return d.scratch, err
}

// str reads a string or null (ok false); anything else is an error.
func (d *openAIChunkDecoder) str() (s string, ok bool, err error) {
	switch d.peek() {
	case 'n':
		d.i += len("null")
		d.lastStr = span{}
		return "", false, nil
	case '"':
	default:
		return "", false, errChunkShape
	}
	start := d.i
	v := d.value()
	d.lastStr = span{start + 1, d.i - 1}
	body := v[1 : len(v)-1]
	if bytes.IndexByte(body, '\\') < 0 && utf8.Valid(body) {
		return string(body), true, nil
	}
	// Tool-call arguments are JSON text, so their quotes come escaped.
	if u, err := jsontext.AppendUnquote(d.scratch[:0], v); err == nil && utf8.Valid(u) {
		d.scratch = u
		return string(u), true, nil
	}
	// Invalid UTF-8: exactly what the struct decoding makes of it.
	err = jsonv2.Unmarshal(v, &s, upstreamJSON)
	return s, err == nil, err
}

// upstreamString reads a value that counts only as a string (system_fingerprint,
// service_tier): its string, or "" for null or a value of another type, as upstreamString
// makes of it. last holds the string the member had before; when the value is the same it
// is returned without a copy, and otherwise last becomes the new string.
func (d *openAIChunkDecoder) upstreamString(last *string) string {
	v := d.value()
	if v[0] != '"' {
		return ""
	}
	body := v[1 : len(v)-1]
	if string(body) == *last {
		return *last // no escapes in last's bytes, so body has none either
	}
	var s string
	if bytes.IndexByte(body, '\\') < 0 && utf8.Valid(body) {
		s = string(body)
	} else {
		return upstreamString(v) // rare: not kept, so last stays free of escapes
	}
	*last = s
	return s
}

// int reads an integer or null (0).
func (d *openAIChunkDecoder) int() (int, error) {
	switch c := d.peek(); {
	case c == 'n':
		d.i += len("null")
		return 0, nil
	case c == '-' || '0' <= c && c <= '9':
	default:
		return 0, errChunkShape
	}
	v := d.value()
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
