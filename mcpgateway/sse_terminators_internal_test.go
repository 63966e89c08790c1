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
// under the limit, together far over it, are read whole with each of the three, and passed
// on with "\n" line ends.
func TestSSEEachLineTerminatorEndsAnEvent(t *testing.T) {
	for name, eol := range map[string]string{"LF": "\n", "CR": "\r", "CRLF": "\r\n"} {
		t.Run(name, func(t *testing.T) {
			event := "event: message" + eol + "data: " + strings.Repeat("x", 40) + eol + eol
			stream := strings.Repeat(event, 100) // 100 events of about 60 bytes under a 100-byte limit
			got, err := readEvents(stream, 100)
			if want := strings.ReplaceAll(stream, eol, "\n"); err != nil || got != want {
				t.Fatalf("read %q... (%d bytes), err %v; want %d bytes with \"\\n\" line ends", got[:min(len(got), 80)], len(got), err, len(want))
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

// A message over the limit that is a response is replaced by an error answering its id;
// one that is not (a request of the server's, naming a method) fails the stream.
func TestMessageCapAnswersOnlyResponses(t *testing.T) {
	big := strings.Repeat("x", 200)
	lines := `{"jsonrpc":"2.0","id":7,"result":{"text":"` + big + `"}}` + "\n" + `{"jsonrpc":"2.0","id":8,"result":{}}` + "\n"
	got, err := io.ReadAll(newMessageCap(strings.NewReader(lines), nil, 100, framingLines))
	want := `{"error":{"code":-32099,"message":"switchyard: the upstream's response was cut off at 100 bytes"},"id":7,"jsonrpc":"2.0"}` + "\n" + `{"jsonrpc":"2.0","id":8,"result":{}}` + "\n"
	if err != nil || string(got) != want {
		t.Fatalf("a cut response: %q, %v; want %q", got, err, want)
	}
	request := `{"jsonrpc":"2.0","id":3,"method":"sampling/createMessage","params":{"x":"` + big + `"}}` + "\n"
	if _, err := io.ReadAll(newMessageCap(strings.NewReader(request), nil, 100, framingLines)); !errors.Is(err, ErrResultTooLarge) {
		t.Fatalf("a cut request: %v, want the stream failed", err)
	}
}

// A bare "\r" is passed on as "\n" at once, whatever the next read brings, and a "\r\n"
// split across reads as one "\n".
func TestSSELineEndsArePassedOnAsLF(t *testing.T) {
	b := newMessageCap(io.MultiReader(strings.NewReader("data: a\r"), strings.NewReader("\ndata: b\r"), strings.NewReader("data: c\r"), strings.NewReader("\r")), nil, 64, framingEvents)
	got, err := io.ReadAll(b)
	if want := "data: a\ndata: b\ndata: c\n\n"; err != nil || string(got) != want {
		t.Fatalf("read %q, %v; want %q", got, err, want)
	}
}

// An event's data is its data fields' values joined by "\n", other fields and comments
// left out; the id of a response spanning several data lines is found past the first.
func TestEventDataJoinsDataLines(t *testing.T) {
	event := "event: message\ndata: {\"jsonrpc\":\"2.0\",\n: a comment\ndata:\"id\":7,\ndata\nid: 3\ndata: \"result\":{\"text\":\"xx"
	got, err := io.ReadAll(&eventData{rest: []byte(event)})
	if want := "{\"jsonrpc\":\"2.0\",\n\"id\":7,\n\n\"result\":{\"text\":\"xx"; err != nil || string(got) != want {
		t.Fatalf("event data %q, %v; want %q", got, err, want)
	}
	if id := responseID(&eventData{rest: []byte(event)}); string(id) != "7" {
		t.Fatalf("response id %s, want 7", id)
	}
}
