package providers

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

// Bedrock's ConverseStream answers in the AWS event stream encoding
// (application/vnd.amazon.eventstream): a sequence of binary messages, each a 12-byte
// prelude (total length, headers length, CRC32 of those 8 bytes), typed headers (":event-type",
// ":message-type", ":exception-type", …), a payload (here JSON) and a CRC32 of everything
// before it. eventStreamReader reads them into one reused buffer, checks both checksums and
// the lengths (a message is at most 16 MiB, its headers 128 KiB; the buffer grows as a
// message arrives, not to its declared length ahead), and reads the headers in
// place: about one allocation per message, where the AWS SDK's decoder
// (aws/protocol/eventstream) makes some forty, which made a streamed fragment cost three
// times the Anthropic adapter's (BENCHMARKS.md, "Amazon Bedrock adapter"). The tests check
// it against that decoder, message for message.

// maxEventMessage bounds one event stream message (the format's own limit, 16 MiB), and
// maxEventHeaders its headers (128 KiB): a prelude that declares more is malformed rather
// than read.
const (
	maxEventMessage = 16 << 20
	maxEventHeaders = 128 << 10
	eventPreludeLen = 12
	eventMinMessage = eventPreludeLen + 4 // a prelude and the message CRC, nothing else
)

// Errors of eventStreamReader.next; a failed read of the body itself is returned as it is.
var (
	// errEventTruncated: the body ended inside a message.
	errEventTruncated = errors.New("event stream cut inside a message")
	// errEventMalformed: a message failed its checksums, declared impossible lengths or had
	// malformed headers.
	errEventMalformed = errors.New("malformed event stream message")
)

// errEventJSON is next's error when the body is a JSON document instead of an event stream
// (a proxy's or the service's error answered with status 200); Body is the document.
type errEventJSON struct{ Body []byte }

func (e *errEventJSON) Error() string { return "event stream body is a JSON document" }

// eventMessage is one decoded message: its type headers and its payload (valid until the
// next call of next).
type eventMessage struct {
	messageType   string // "event", "exception" or "error"
	eventType     string // an event's name (":event-type")
	exceptionType string // an exception's name (":exception-type")
	errorCode     string // an "error" message's ":error-code"
	errorMessage  string // and its ":error-message"
	payload       []byte
}

// eventStreamReader reads the messages of an AWS event stream.
type eventStreamReader struct {
	r     *bufio.Reader
	src   *readErrRecorder
	buf   []byte // the current message, reused
	first bool   // no message was read yet
}

// readErrRecorder remembers the last error its reader returned other than io.EOF, so that a
// failed read (a reset connection, the idle timeout) is told apart from a cut body.
type readErrRecorder struct {
	r   io.Reader
	err error
}

func (e *readErrRecorder) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF {
		e.err = err
	}
	return n, err
}

// eventReadBuffer is the read buffer of one stream, and the first size of its message
// buffer: most messages are a few hundred bytes.
const eventReadBuffer = 4 << 10

func newEventStreamReader(r io.Reader) *eventStreamReader {
	src := &readErrRecorder{r: r}
	return &eventStreamReader{r: bufio.NewReaderSize(src, eventReadBuffer), src: src, buf: make([]byte, 0, eventReadBuffer), first: true}
}

// next returns the next message. It returns io.EOF at the end of the body between two
// messages; errEventTruncated (wrapped) when the body ends inside one; errEventMalformed
// (wrapped) for a message whose checksums, lengths or headers are wrong; an *errEventJSON
// when the body is a JSON document; and a failed read's own error.
func (s *eventStreamReader) next() (eventMessage, error) {
	first := s.first
	s.first = false
	prelude, err := s.r.Peek(eventPreludeLen)
	switch {
	case first && len(prelude) > 0 && prelude[0] == '{':
		// Not an event stream: an error document (every message starts with its length,
		// whose first byte is 0 below 16 MiB).
		return eventMessage{}, &errEventJSON{Body: readErrorBody(s.r)}
	case err == io.EOF && len(prelude) == 0:
		return eventMessage{}, io.EOF
	case err == io.EOF:
		return eventMessage{}, fmt.Errorf("%w: %d bytes of a 12-byte prelude", errEventTruncated, len(prelude))
	case err != nil:
		return eventMessage{}, err
	}
	total := binary.BigEndian.Uint32(prelude[0:4])
	headersLen := binary.BigEndian.Uint32(prelude[4:8])
	if crc32.ChecksumIEEE(prelude[:8]) != binary.BigEndian.Uint32(prelude[8:12]) {
		return eventMessage{}, fmt.Errorf("%w: prelude checksum mismatch", errEventMalformed)
	}
	if total < eventMinMessage || total > maxEventMessage || headersLen > maxEventHeaders || headersLen > total-eventMinMessage {
		return eventMessage{}, fmt.Errorf("%w: message of %d bytes with %d bytes of headers", errEventMalformed, total, headersLen)
	}
	// The buffer grows as the message arrives (doubling, up to its declared length), not to
	// the declared length ahead: a prelude declaring 16 MiB before a short or cut body costs
	// what came.
	msg := s.buf[:0]
	for len(msg) < int(total) {
		if len(msg) == cap(msg) {
			grown := make([]byte, len(msg), min(max(2*cap(msg), eventReadBuffer), int(total)))
			copy(grown, msg)
			msg = grown
			s.buf = grown
		}
		end := min(cap(msg), int(total))
		n, err := io.ReadFull(s.r, msg[len(msg):end])
		msg = msg[:len(msg)+n]
		if err != nil {
			if s.src.err != nil {
				return eventMessage{}, s.src.err
			}
			return eventMessage{}, fmt.Errorf("%w: %d-byte message", errEventTruncated, total)
		}
	}
	if crc32.ChecksumIEEE(msg[:total-4]) != binary.BigEndian.Uint32(msg[total-4:]) {
		return eventMessage{}, fmt.Errorf("%w: message checksum mismatch", errEventMalformed)
	}
	out := eventMessage{payload: msg[eventPreludeLen+headersLen : total-4]}
	if err := readEventHeaders(msg[eventPreludeLen:eventPreludeLen+headersLen], &out); err != nil {
		return eventMessage{}, err
	}
	return out, nil
}

// eventHeaderSizes are the value sizes of the fixed-size header types: 0 true, 1 false,
// 2 byte, 3 int16, 4 int32, 5 int64, 8 timestamp, 9 uuid; 6 (bytes) and 7 (string) carry a
// 2-byte length instead (-1).
var eventHeaderSizes = [10]int{0, 0, 1, 2, 4, 8, -1, -1, 8, 16}

// readEventHeaders reads the headers h of a message into out: the string headers it uses;
// the others are skipped.
func readEventHeaders(h []byte, out *eventMessage) error {
	for len(h) > 0 {
		n := int(h[0])
		if n == 0 || len(h) < 1+n+1 {
			return fmt.Errorf("%w: header name", errEventMalformed)
		}
		name, typ := h[1:1+n], h[1+n]
		h = h[2+n:]
		if int(typ) >= len(eventHeaderSizes) {
			return fmt.Errorf("%w: header %q of unknown type %d", errEventMalformed, name, typ)
		}
		size := eventHeaderSizes[typ]
		if size < 0 {
			if len(h) < 2 {
				return fmt.Errorf("%w: header %q", errEventMalformed, name)
			}
			size = int(binary.BigEndian.Uint16(h))
			h = h[2:]
		}
		if len(h) < size {
			return fmt.Errorf("%w: header %q", errEventMalformed, name)
		}
		value := h[:size]
		h = h[size:]
		if typ != 7 {
			continue
		}
		switch string(name) {
		case ":message-type":
			out.messageType = eventName(value)
		case ":event-type":
			out.eventType = eventName(value)
		case ":exception-type":
			out.exceptionType = string(value)
		case ":error-code":
			out.errorCode = string(value)
		case ":error-message":
			out.errorMessage = string(value)
		}
	}
	return nil
}

// eventName is a message or event type, without an allocation for the ones
// ConverseStream sends.
func eventName(v []byte) string {
	switch string(v) {
	case "event":
		return "event"
	case "exception":
		return "exception"
	case "contentBlockDelta":
		return "contentBlockDelta"
	case "contentBlockStart":
		return "contentBlockStart"
	case "contentBlockStop":
		return "contentBlockStop"
	case "messageStart":
		return "messageStart"
	case "messageStop":
		return "messageStop"
	case "metadata":
		return "metadata"
	}
	return string(v)
}
