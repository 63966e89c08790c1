package client

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

type fuzzSSEEvent struct{ event, data string }

func fuzzClientEvents(r io.Reader) ([]fuzzSSEEvent, error) {
	s := newSSEReader(r)
	var out []fuzzSSEEvent
	for {
		e, d, err := s.next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, fuzzSSEEvent{e, d})
	}
}

// referenceSSE parses body as the SSE specification's algorithm does ("Interpreting an
// event stream"), except that an event the body's end cuts is still dispatched, as the
// client chooses.
func referenceSSE(body string) []fuzzSSEEvent {
	body = strings.TrimPrefix(body, "\ufeff")
	var lines []string
	for len(body) > 0 {
		i := strings.IndexAny(body, "\r\n")
		if i < 0 {
			lines = append(lines, body)
			break
		}
		lines = append(lines, body[:i])
		if body[i] == '\r' && i+1 < len(body) && body[i+1] == '\n' {
			i++
		}
		body = body[i+1:]
	}
	var out []fuzzSSEEvent
	var event string
	var data []string
	dispatch := func() {
		if len(data) > 0 {
			out = append(out, fuzzSSEEvent{event, strings.Join(data, "\n")})
		}
		event, data = "", nil
	}
	for _, line := range lines {
		switch {
		case line == "":
			dispatch()
		case line[0] == ':':
		default:
			field, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			switch field {
			case "event":
				event = value
			case "data":
				data = append(data, value)
			}
		}
	}
	dispatch()
	return out
}

// FuzzClientSSEReader: the client reads the server's event streams as the SSE
// specification does, whatever the pieces the bytes arrive in.
func FuzzClientSSEReader(f *testing.F) {
	for _, dir := range []string{"openai", "anthropic", "gemini", "azure"} {
		filepath.WalkDir(filepath.Join("..", "providers", "testdata", dir), func(path string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && (filepath.Ext(path) == ".sse" || filepath.Ext(path) == ".txt") {
				if raw, err := os.ReadFile(path); err == nil {
					f.Add(raw, []byte{3, 17, 1})
				}
			}
			return nil
		})
	}
	f.Add([]byte("\ufeffevent: e\r\rdata: a\r\ndata:b\r\r: c\n\ndata"), []byte{0, 1})
	f.Fuzz(func(t *testing.T, body, cut []byte) {
		want := referenceSSE(string(body))
		for _, r := range []io.Reader{bytes.NewReader(body), iotest.OneByteReader(bytes.NewReader(body)), &fuzzChunks{b: body, cut: cut}} {
			got, err := fuzzClientEvents(r)
			if err != nil {
				t.Fatalf("reading: %v", err)
			}
			if len(got) == 0 && len(want) == 0 {
				continue
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%T: events %q\nwant %q", r, got, want)
			}
		}
	})
}

// fuzzChunks returns the body in reads of the sizes cut gives, in turn.
type fuzzChunks struct {
	b   []byte
	cut []byte
	i   int
}

func (c *fuzzChunks) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	n := 1
	if len(c.cut) > 0 {
		n = int(c.cut[c.i%len(c.cut)])%64 + 1
		c.i++
	}
	n = min(n, len(p), len(c.b))
	copy(p, c.b[:n])
	c.b = c.b[n:]
	return n, nil
}
