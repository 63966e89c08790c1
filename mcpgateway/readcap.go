package mcpgateway

import (
	"fmt"
	"io"
	"mime"
	"net/http"
	"sync/atomic"
)

// wireLimit is how many bytes of one upstream message (a JSON body, or one event of an
// event stream) the http and sse transports read before they give up on it: four times the
// result cap, as JSON escapes may differ between the wire and the content as re-encoded
// (which the cap measures) and structured content repeats the text, plus 1 MiB for the
// JSON-RPC envelope. A message past it cannot hold a result under the cap, so the read
// stops there instead of buffering the rest: the call fails with ErrResultTooLarge.
func wireLimit(maxResultBytes int) int64 { return 4*int64(maxResultBytes) + 1<<20 }

// capTransport bounds what is read of each upstream message (wireLimit) and counts the
// messages cut, which the call that was waiting for one reports as ErrResultTooLarge.
type capTransport struct {
	base  http.RoundTripper
	limit int64
	cut   *atomic.Int64
}

func (t *capTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	resp.Body = &cappedBody{rc: resp.Body, limit: t.limit, events: mt == "text/event-stream", atLineStart: true, cut: t.cut}
	if resp.ContentLength > t.limit && !resp.Uncompressed && mt != "text/event-stream" {
		resp.ContentLength = -1 // what is read will be less
	}
	return resp, nil
}

// errMessageTooLarge is a cappedBody's read error once a message is over its limit.
type errMessageTooLarge struct{ limit int64 }

func (e errMessageTooLarge) Error() string {
	return fmt.Sprintf("an upstream message over %d bytes was cut off", e.limit)
}

func (e errMessageTooLarge) Is(target error) bool { return target == ErrResultTooLarge }

// cappedBody reads a response body and fails once one message is over limit bytes: the
// whole body, or with events (an event stream) each event, which ends at a blank line.
type cappedBody struct {
	rc          io.ReadCloser
	limit       int64
	events      bool
	cut         *atomic.Int64
	n           int64 // bytes of the current message so far
	atLineStart bool  // events: the last byte ended a line (a line end now is a blank line)
	afterCR     bool  // events: the last byte was a "\r" (a "\n" now completes "\r\n")
	err         error
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	n, err := b.rc.Read(p)
	if !b.events {
		b.n += int64(n)
	}
	for _, c := range p[:n] {
		if !b.events {
			break
		}
		b.n++
		// SSE ends a line at "\r\n", "\n" or "\r"; a blank line ends the event.
		switch {
		case c == '\n' && b.afterCR:
			b.afterCR = false // the "\n" of "\r\n": that line already ended
		case c == '\n' || c == '\r':
			if b.atLineStart {
				b.n = 0 // a blank line: the event ended
			}
			b.atLineStart, b.afterCR = true, c == '\r'
		default:
			b.atLineStart, b.afterCR = false, false
		}
		if b.n > b.limit {
			break
		}
	}
	if b.n > b.limit {
		b.err = errMessageTooLarge{limit: b.limit}
		b.cut.Add(1)
		_ = b.rc.Close()
		return 0, b.err
	}
	return n, err
}

func (b *cappedBody) Close() error { return b.rc.Close() }
