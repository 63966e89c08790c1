package mcpgateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// wireLimit is how many bytes of one upstream message (a JSON body, one event of an event
// stream, or one line of a stdio server's output) the gateway reads before it gives up on
// it: four times the result cap, as JSON escapes may differ between the wire and the
// content as re-encoded (which the cap measures) and structured content repeats the text,
// plus 1 MiB for the JSON-RPC envelope. A message past it cannot hold a result under the
// cap, so the read stops there instead of buffering the rest (messageCap).
func wireLimit(maxResultBytes int) int64 { return 4*int64(maxResultBytes) + 1<<20 }

// capTransport bounds what is read of each upstream message at limit bytes (messageCap).
type capTransport struct {
	base  http.RoundTripper
	limit int64
}

func (t *capTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	framing := framingBody
	if mt == "text/event-stream" {
		framing = framingEvents
	}
	mc := newMessageCap(resp.Body, resp.Body.Close, t.limit, framing)
	// A GET's event stream (the older SSE transport's, or streamable HTTP's standalone one)
	// carries every call's answers: a cut answer is skipped there, not the stream ended.
	mc.shared = r.Method == http.MethodGet
	resp.Body = mc
	if framing == framingBody {
		resp.ContentLength = -1 // a cut answer is replaced by a shorter one
	}
	return resp, nil
}

// framing is how an upstream's stream is cut into messages.
type framing int

const (
	// framingBody: the whole stream is one message (an application/json body).
	framingBody framing = iota
	// framingEvents: an event stream; an event ends at a blank line, a line at "\r\n",
	// "\n" or "\r" (each passed on as "\n").
	framingEvents
	// framingLines: newline-delimited JSON (a stdio server's output).
	framingLines
)

// errMessageTooLarge is a messageCap's read error once a message it cannot answer for
// (no JSON-RPC response id in what was read of it) is over its limit.
type errMessageTooLarge struct{ limit int64 }

func (e errMessageTooLarge) Error() string {
	return fmt.Sprintf("an upstream message over %d bytes was cut off", e.limit)
}

func (e errMessageTooLarge) Is(target error) bool { return target == ErrResultTooLarge }

// cutCode is the JSON-RPC error code of the answer messageCap puts in place of a response
// over its limit (in JSON-RPC's range for implementation-defined server errors).
const cutCode = -32099

// cutMessage starts that answer's message.
const cutMessage = "switchyard: the upstream's response was cut off at "

// isCut reports whether err is the answer messageCap put in place of a response over its
// limit: that call's own result was too large.
func isCut(err error) bool {
	var we *jsonrpc.Error
	return errors.As(err, &we) && we.Code == cutCode && strings.HasPrefix(we.Message, cutMessage)
}

// messageCap reads an upstream's stream and holds each message back until it ends (or the
// stream does). A message over limit bytes is not passed on: when what was read of it
// names the JSON-RPC response it is, a JSON-RPC error answering that request id is passed
// on instead, so that only the call it answers fails (with ErrResultTooLarge), and any
// other call on the session goes on. Then a body, or the event stream answering one POST,
// ends there (the rest is not read); a stream shared by every call (stdio's output, a GET's
// event stream) has the rest of the message read and dropped, never held, and goes on. A
// message naming no response fails the stream with errMessageTooLarge. An event stream's
// line ends are all passed on as "\n", the only one the MCP SDK's event reader knows.
type messageCap struct {
	r       io.Reader
	close   func() error // closes the source; nil: nothing to close
	limit   int64
	framing framing

	buf         []byte // scratch for reads
	msg         []byte // the current message, held until it ends
	out         []byte // ready to be read
	atLineStart bool   // events: the last byte ended a line (a line end now is a blank line)
	afterCR     bool   // events: the last byte read was a "\r" (a "\n" now completes "\r\n")
	shared      bool   // events: the stream carries other calls' answers (skip a cut event)
	skipping    bool   // the rest of a cut line or event is being discarded
	done        error  // returned once out is drained
}

func newMessageCap(r io.Reader, close func() error, limit int64, f framing) *messageCap {
	return &messageCap{r: r, close: close, limit: limit, framing: f, atLineStart: true}
}

func (c *messageCap) Read(p []byte) (int, error) {
	for len(c.out) == 0 {
		if c.done != nil {
			return 0, c.done
		}
		if c.buf == nil {
			c.buf = make([]byte, 32<<10)
		}
		n, err := c.r.Read(c.buf)
		c.scan(c.buf[:n])
		if err != nil && c.done == nil {
			c.out = append(c.out, c.msg...) // a last message without its end
			c.msg = nil
			c.done = err
		}
	}
	n := copy(p, c.out)
	c.out = c.out[n:]
	if len(c.out) == 0 {
		c.out = nil
	}
	return n, nil
}

// scan takes in bytes read from the source.
func (c *messageCap) scan(chunk []byte) {
	for c.framing != framingEvents && !c.skipping && c.done == nil && len(chunk) > 0 {
		// A body or a line: whole runs of bytes at once, up to a line's end.
		run := chunk
		end := -1
		if c.framing == framingLines {
			if end = bytes.IndexByte(chunk, '\n'); end >= 0 {
				run = chunk[:end+1]
			}
		}
		if int64(len(c.msg)+len(run)) > c.limit {
			break // byte by byte below, to the cut
		}
		c.msg = append(c.msg, run...)
		chunk = chunk[len(run):]
		if end >= 0 {
			c.release()
		}
	}
	for _, b := range chunk {
		if c.done != nil {
			return
		}
		if c.framing == framingEvents {
			// Every line end is passed on as "\n" (the MCP SDK's event reader ends a line
			// only there): a "\r" at once, as it ends its line whatever comes next, and the
			// "\n" of a "\r\n" (which may come in a later read) is then dropped.
			if b == '\n' && c.afterCR {
				c.afterCR = false
				continue
			}
			if c.afterCR = b == '\r'; c.afterCR {
				b = '\n'
			}
		}
		if c.skipping {
			if c.framing == framingEvents {
				c.skipping = !c.ends(b)
			} else {
				c.skipping = b != '\n'
			}
			continue
		}
		c.msg = append(c.msg, b)
		if c.ends(b) {
			c.release()
			continue
		}
		if int64(len(c.msg)) > c.limit {
			c.cut()
		}
	}
}

// release passes the current message on, now that it ended.
func (c *messageCap) release() {
	c.out = append(c.out, c.msg...)
	c.msg = c.msg[:0]
	if cap(c.msg) > 64<<10 {
		c.msg = nil // a long-lived stream does not keep its largest message's buffer
	}
}

// ends reports whether b ends the current message.
func (c *messageCap) ends(b byte) bool {
	switch c.framing {
	case framingLines:
		return b == '\n'
	case framingEvents:
		// b is past scan's line-end normalisation: every line ends at a "\n".
		blank := b == '\n' && c.atLineStart
		c.atLineStart = b == '\n'
		return blank
	}
	return false
}

// cut handles a message over the limit.
func (c *messageCap) cut() {
	var payload io.Reader = bytes.NewReader(c.msg)
	if c.framing == framingEvents {
		payload = &eventData{rest: c.msg}
	}
	id := responseID(payload)
	c.msg = nil
	if id == nil {
		c.done = errMessageTooLarge{limit: c.limit}
		c.stop()
		return
	}
	answer, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id,
		"error": map[string]any{"code": cutCode, "message": fmt.Sprintf("%s%d bytes", cutMessage, c.limit)}})
	switch c.framing {
	case framingLines:
		c.out = append(append(c.out, answer...), '\n')
		c.skipping = true
		c.msg = make([]byte, 0, 4<<10)
	case framingEvents:
		c.out = append(append(append(c.out, "event: message\ndata: "...), answer...), "\n\n"...)
		if c.shared {
			c.skipping = true
			c.msg = make([]byte, 0, 4<<10)
			break
		}
		c.done = io.EOF
		c.stop()
	default:
		c.out = append(c.out, answer...)
		c.done = io.EOF
		c.stop()
	}
}

// stop closes the source (the rest of it is not read).
func (c *messageCap) stop() {
	if c.close != nil {
		_ = c.close()
	}
}

// Close closes the source (an http.Response body, which may be closed more than once and
// while it is read).
func (c *messageCap) Close() error {
	if c.close == nil {
		return nil
	}
	return c.close()
}

// eventData reads an event's data as far as the event was read: the values of its data
// fields joined by "\n", as SSE specifies (a JSON-RPC message may span several data
// lines). It reads them in place, so a decoder reading only the start of the data costs
// nothing more. The event's line ends are "\n" (messageCap normalised them).
type eventData struct {
	rest    []byte // the event's lines not yet looked at
	value   []byte // what is left of the current data field's value
	newline bool   // a "\n" joining two data values is due
	started bool   // a data field was found
}

func (d *eventData) Read(p []byte) (int, error) {
	for !d.newline && len(d.value) == 0 {
		if len(d.rest) == 0 {
			return 0, io.EOF
		}
		line := d.rest
		if end := bytes.IndexByte(line, '\n'); end >= 0 {
			line, d.rest = line[:end], line[end+1:]
		} else {
			d.rest = nil
		}
		v, ok := bytes.CutPrefix(line, []byte("data:"))
		if !ok {
			if string(line) != "data" {
				continue // another field, or a comment
			}
			v = nil // a data field with no value
		}
		d.newline, d.started = d.started, true
		d.value = bytes.TrimPrefix(v, []byte(" "))
	}
	if len(p) == 0 {
		return 0, nil
	}
	if d.newline {
		p[0], d.newline = '\n', false
		return 1, nil
	}
	n := copy(p, d.value)
	d.value = d.value[n:]
	return n, nil
}

// responseID is the id of the JSON-RPC response msg begins (its start is enough, and only
// so much of msg is read: the id must come before the result or error); nil when msg is
// not one, or its id comes after.
func responseID(msg io.Reader) json.RawMessage {
	dec := json.NewDecoder(msg)
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	var id json.RawMessage
	for dec.More() {
		tok, err := dec.Token()
		key, ok := tok.(string)
		if err != nil || !ok {
			return nil
		}
		switch key {
		case "method":
			return nil // a request or notification
		case "result", "error":
			if string(id) == "null" {
				return nil
			}
			return id
		case "id":
			if dec.Decode(&id) != nil {
				return nil
			}
		default:
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return nil
			}
		}
	}
	return nil
}
