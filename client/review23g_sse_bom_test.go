package client

import (
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// The SSE specification has a stream's one leading byte order mark (U+FEFF) ignored: a
// stream that begins with one reads as the stream without it. Taken as part of the first
// line, it made that line's field "\ufeffdata", an unknown field, and the first event was
// lost. Only the stream's first BOM goes: one later is part of its line.
func TestReview23gSSEReaderIgnoresLeadingBOM(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       []sseEvent
	}{
		{"data first", "\ufeffdata: a\n\ndata: b\n\n", []sseEvent{{"", "a"}, {"", "b"}}},
		{"event first, CR", "\ufeffevent: delta\rdata: a\r\r", []sseEvent{{"delta", "a"}}},
		{"comment first", "\ufeff: hi\r\n\r\ndata: a\r\n\r\n", []sseEvent{{"", "a"}}},
		{"a second BOM is kept", "\ufeff\ufeffdata: a\n\ndata: b\n\n", []sseEvent{{"", "b"}}},
		{"a BOM later is kept", "data: a\n\n\ufeffdata: b\n\ndata: c\n\n", []sseEvent{{"", "a"}, {"", "c"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, r := range []io.Reader{strings.NewReader(tc.body), iotest.OneByteReader(strings.NewReader(tc.body))} {
				got := readAllEvents(t, r)
				if len(got) != len(tc.want) {
					t.Fatalf("events %q, want %q", got, tc.want)
				}
				for i := range got {
					if got[i] != tc.want[i] {
						t.Fatalf("event %d: %q, want %q", i, got[i], tc.want[i])
					}
				}
			}
		})
	}
}
