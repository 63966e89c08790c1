package providers

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
)

// Bedrock's ConverseStream answers in the AWS event stream encoding
// (application/vnd.amazon.eventstream): a sequence of binary messages, each a 12-byte
// prelude (total length, headers length, CRC32 of those 8 bytes), typed headers (":event-type",
// ":message-type", ":exception-type", …), a payload (here JSON) and a CRC32 of everything
// before it. The AWS SDK's eventstream package checks the checksums and parses the headers;
// eventStreamReader frames the body for it and bounds each message, which that package does
// not.

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
	// errEventMalformed: a message failed its checksums or declared impossible lengths.
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
	r       *bufio.Reader
	src     *readErrRecorder
	dec     *eventstream.Decoder
	payload []byte // reused payload buffer
	first   bool   // no message was read yet
}

// readErrRecorder remembers the last error its reader returned other than io.EOF, so that a
// failed read (a reset connection, the idle timeout) is told apart from a malformed message.
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

// eventReadBuffer is the read buffer of one stream: most messages are a few hundred bytes.
const eventReadBuffer = 4 << 10

func newEventStreamReader(r io.Reader) *eventStreamReader {
	src := &readErrRecorder{r: r}
	return &eventStreamReader{r: bufio.NewReaderSize(src, eventReadBuffer), src: src, dec: eventstream.NewDecoder(),
		payload: make([]byte, 0, eventReadBuffer), first: true}
}

// next returns the next message. It returns io.EOF at the end of the body between two
// messages; errEventTruncated (wrapped) when the body ends inside one; errEventMalformed
// (wrapped) for a message whose checksums or lengths are wrong; an *errEventJSON when the
// body is a JSON document; and a failed read's own error.
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
	headers := binary.BigEndian.Uint32(prelude[4:8])
	if crc32.ChecksumIEEE(prelude[:8]) != binary.BigEndian.Uint32(prelude[8:12]) {
		return eventMessage{}, fmt.Errorf("%w: prelude checksum mismatch", errEventMalformed)
	}
	if total < eventMinMessage || total > maxEventMessage || headers > maxEventHeaders || headers > total-eventMinMessage {
		return eventMessage{}, fmt.Errorf("%w: message of %d bytes with %d bytes of headers", errEventMalformed, total, headers)
	}
	m, err := s.dec.Decode(s.r, s.payload)
	if err != nil {
		var checksum eventstream.ChecksumError
		switch {
		case s.src.err != nil:
			return eventMessage{}, s.src.err
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			return eventMessage{}, fmt.Errorf("%w: %d-byte message", errEventTruncated, total)
		case errors.As(err, &checksum):
			return eventMessage{}, fmt.Errorf("%w: message checksum mismatch", errEventMalformed)
		}
		return eventMessage{}, fmt.Errorf("%w: %w", errEventMalformed, err)
	}
	if cap(m.Payload) > cap(s.payload) {
		s.payload = m.Payload[:0] // keep the grown buffer for the next message
	}
	out := eventMessage{payload: m.Payload}
	for _, h := range m.Headers {
		sv, ok := h.Value.(eventstream.StringValue)
		if !ok {
			continue
		}
		switch h.Name {
		case ":message-type":
			out.messageType = string(sv)
		case ":event-type":
			out.eventType = string(sv)
		case ":exception-type":
			out.exceptionType = string(sv)
		case ":error-code":
			out.errorCode = string(sv)
		case ":error-message":
			out.errorMessage = string(sv)
		}
	}
	return out, nil
}
