package mcpgateway

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// readEvents reads stream through a messageCap bounding each event at limit bytes.
func readEvents(stream string, limit int64) (string, error) {
	b := newMessageCap(strings.NewReader(stream), nil, limit, framingEvents)
	out, err := io.ReadAll(b)
	return string(out), err
}

// SSE ends a line at "\r\n", "\n" or "\r", and an event at a blank line: many events each
// under the limit, together far over it, are read whole with each of the three.
func TestSSEEachLineTerminatorEndsAnEvent(t *testing.T) {
	for name, eol := range map[string]string{"LF": "\n", "CR": "\r", "CRLF": "\r\n"} {
		t.Run(name, func(t *testing.T) {
			event := "event: message" + eol + "data: " + strings.Repeat("x", 40) + eol + eol
			stream := strings.Repeat(event, 100) // 100 events of about 60 bytes under a 100-byte limit
			got, err := readEvents(stream, 100)
			if err != nil || got != stream {
				t.Fatalf("read %d of %d bytes, err %v: an event end was missed", len(got), len(stream), err)
			}
			over := "data: " + strings.Repeat("y", 200) + eol + eol
			if _, err := readEvents(event+over, 100); !errors.Is(err, ErrResultTooLarge) {
				t.Fatalf("an event over the limit: %v, want ErrResultTooLarge", err)
			}
		})
	}
}

// A "\r\n" split across two reads is one line end, not a line end and a blank line.
func TestSSECRLFSplitAcrossReadsIsOneLineEnd(t *testing.T) {
	b := newMessageCap(io.MultiReader(strings.NewReader("data: a\r"), strings.NewReader("\ndata: "+strings.Repeat("b", 60)+"\r\n\r\n")), nil, 64, framingEvents)
	if _, err := io.ReadAll(b); !errors.Is(err, ErrResultTooLarge) {
		t.Fatalf("one event of 80 bytes under a 64-byte limit read as two: %v", err)
	}
}
