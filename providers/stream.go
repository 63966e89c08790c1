package providers

import (
	"errors"
	"io"
)

// streamState is what every adapter's Stream shares: the open call, its event reader and
// the sticky terminal result. Adapters embed it and keep their own end marker and
// error-body parser.
type streamState struct {
	c    *call
	sse  *sseReader
	wait *waitReader
	err  error // sticky terminal result: io.EOF after the end marker, else an *Error

	skipped int // undecodable events skipped (see skip)
}

func newStreamState(c *call) streamState {
	w := &waitReader{r: c.body}
	return streamState{c: c, sse: newSSEReader(w), wait: w}
}

// WaitNotifier is implemented by streams that can tell their caller when Recv is about to
// wait for the network. The streams of this package's adapters implement it.
type WaitNotifier interface {
	// NotifyWait makes Recv call fn, on Recv's goroutine, each time it is about to read more
	// of the upstream's body: every fragment that Recv can return without reading has been
	// returned by then. A relay flushes what it buffered in fn, so fragments that arrived
	// together leave together and none waits for the network. nil removes the hook.
	NotifyWait(fn func())
}

// NotifyWait implements WaitNotifier.
func (s *streamState) NotifyWait(fn func()) { s.wait.before = fn }

// waitReader calls before ahead of each read of the body.
type waitReader struct {
	r      io.Reader
	before func()
}

func (w *waitReader) Read(p []byte) (int, error) {
	if w.before != nil {
		w.before()
	}
	return w.r.Read(p)
}

// stop records err as the terminal result, releases the connection and returns err.
func (s *streamState) stop(err error) error {
	s.err = err
	s.c.Close()
	return err
}

// fail ends the stream with a classified *Error.
func (s *streamState) fail(kind ErrorKind, msg string, cause error) error {
	return s.stop(s.c.failure(kind, msg, cause))
}

// failBilled ends the stream with a classified *Error carrying what the upstream billed for
// it (a blocked answer is still paid for), u nil when it reported nothing.
func (s *streamState) failBilled(kind ErrorKind, msg string, u *Usage) error {
	e := s.c.failure(kind, msg, nil)
	if u != nil && (u.PromptTokens != 0 || u.CompletionTokens != 0) {
		e.Usage = u
	}
	return s.stop(e)
}

// next returns the next event. At the end of the body it returns io.EOF without recording
// it, so the adapter decides whether the end was expected; an over-long line or a read
// failure ends the stream with a classified *Error.
func (s *streamState) next() (sseEvent, error) {
	ev, err := s.sse.next()
	switch {
	case err == nil:
		return ev, nil
	case errors.Is(err, io.EOF):
		return sseEvent{}, io.EOF
	case errors.Is(err, errLineTooLong):
		return sseEvent{}, s.fail(KindStreamBroken, err.Error(), err)
	}
	return sseEvent{}, s.stop(s.c.readFailure(err, true))
}

// failRaw ends the stream on data that is not SSE: with the upstream's error when parse
// finds a message in it, else as a malformed stream.
func (s *streamState) failRaw(data []byte, parse errorParser) error {
	code, msg := parse(data)
	if msg == "" {
		return s.stop(s.c.malformedStream(data))
	}
	return s.fail(bodyErrorKind(code, msg), msg, nil)
}

// Close releases the connection.
func (s *streamState) Close() error { return s.c.Close() }
