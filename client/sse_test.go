package client

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestSSEReaderSplitsEvents(t *testing.T) {
	body := ": keep-alive\r\n\r\nevent: error\r\ndata: {\"a\":\r\ndata: 1}\r\n\r\n\n\ndata:x\n\ndata: cut"
	r := newSSEReader(strings.NewReader(body))
	type ev struct{ event, data string }
	var got []ev
	for {
		e, d, err := r.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ev{e, d})
	}
	want := []ev{{"error", "{\"a\":\n1}"}, {"", "x"}, {"", "cut"}}
	if len(got) != len(want) {
		t.Fatalf("events %q", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("event %d: %q, want %q", i, got[i], want[i])
		}
	}
}

// chunkReader returns its chunks one Read at a time, then errReadPast: a reader that must
// not be read further than a test allows.
type chunkReader struct {
	chunks []string
	reads  int
}

var errReadPast = errors.New("read past the chunks given")

func (c *chunkReader) Read(p []byte) (int, error) {
	if c.reads >= len(c.chunks) {
		return 0, errReadPast
	}
	n := copy(p, c.chunks[c.reads])
	if n < len(c.chunks[c.reads]) {
		panic("chunk larger than the read")
	}
	c.reads++
	return n, nil
}

type sseEvent struct{ event, data string }

// readAllEvents reads r's events to its end.
func readAllEvents(t *testing.T, r io.Reader) []sseEvent {
	t.Helper()
	sr := newSSEReader(r)
	var got []sseEvent
	for {
		e, d, err := sr.next()
		if errors.Is(err, io.EOF) {
			return got
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, sseEvent{e, d})
	}
}

// The SSE specification's line endings are CRLF, LF and CR alone, mixed at will: each
// ends one line, and a CRLF is one ending (not a line and an empty one), even when its CR
// and LF arrive in different reads (here: every read a single byte).
func TestSSEReaderLineEndings(t *testing.T) {
	want := []sseEvent{{"delta", "{\"a\":\n1}"}, {"", "x"}, {"", ""}, {"", "cut"}}
	for _, tc := range []struct {
		name, body string
		want       []sseEvent // nil: want
	}{
		{"LF", ": hi\n\nevent: delta\ndata: {\"a\":\ndata: 1}\n\n\n\ndata:x\n\ndata\n\ndata: cut", nil},
		{"CRLF", ": hi\r\n\r\nevent: delta\r\ndata: {\"a\":\r\ndata: 1}\r\n\r\n\r\n\r\ndata:x\r\n\r\ndata\r\n\r\ndata: cut", nil},
		{"CR", ": hi\r\revent: delta\rdata: {\"a\":\rdata: 1}\r\r\r\rdata:x\r\rdata\r\rdata: cut", nil},
		{"mixed", ": hi\r\n\revent: delta\ndata: {\"a\":\rdata: 1}\r\n\n\r\r\ndata:x\r\r\ndata\n\r\ndata: cut", nil},
		// CR then CRLF is two line endings: a blank line between the data lines.
		{"CR before CRLF", "event: delta\r\ndata: {\"a\":\r\r\ndata: 1}\r\n\r\n", []sseEvent{{"delta", "{\"a\":"}, {"", "1}"}}},
		// LF then CR is two line endings too: no "LFCR" pair.
		{"LF before CR", "data: a\n\rdata: b\r\n", []sseEvent{{"", "a"}, {"", "b"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := tc.want
			if w == nil {
				w = want
			}
			for _, r := range []io.Reader{strings.NewReader(tc.body), iotest.OneByteReader(strings.NewReader(tc.body))} {
				got := readAllEvents(t, r)
				if len(got) != len(w) {
					t.Fatalf("events %q, want %q", got, w)
				}
				for i := range w {
					if got[i] != w[i] {
						t.Fatalf("event %d: %q, want %q", i, got[i], w[i])
					}
				}
			}
		})
	}
}

// A CRLF whose CR ends one read and whose LF begins the next is one line ending: the
// event's two data lines stay one event. An event ended by a CR alone is returned from
// the bytes read so far, without waiting for more (a stream pausing after an event).
func TestSSEReaderCRLFAcrossReads(t *testing.T) {
	r := newSSEReader(&chunkReader{chunks: []string{"data: a\r", "\ndata: b\r", "\n\r", "\nevent: e\rdata: c\r\r"}})
	e, d, err := r.next()
	if err != nil || e != "" || d != "a\nb" {
		t.Fatalf("first event: %q %q %v, want \"a\\nb\"", e, d, err)
	}
	e, d, err = r.next()
	if err != nil || e != "e" || d != "c" {
		t.Fatalf("second event: %q %q %v, want e \"c\" from the bytes read (no read past them)", e, d, err)
	}
	if _, _, err := r.next(); !errors.Is(err, errReadPast) {
		t.Fatalf("after the last chunk: %v, want the reader's error", err)
	}
}
