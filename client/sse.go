package client

import (
	"bufio"
	"bytes"
	"io"
	"strings"
)

// sseReader splits a text/event-stream body into events: it joins an event's data lines,
// keeps its event name, and skips comments (keep-alives) and events without data. Lines
// may end with CRLF, LF or CR alone (sseLines). A byte order mark beginning the stream is
// ignored, as the SSE specification says.
type sseReader struct {
	sc      *bufio.Scanner
	started bool // a line was read: a BOM now is part of its line
}

// newSSEReader reads events from r; an event may be up to 16 MiB.
func newSSEReader(r io.Reader) *sseReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	sc.Split(sseLines())
	return &sseReader{sc: sc}
}

// sseLines returns a bufio.SplitFunc splitting an event stream into lines at any of the
// line endings the SSE specification allows: CRLF, LF, or CR alone. A line ended by a CR
// is returned at once, without waiting to see whether an LF follows (the stream may pause
// there, a blank line having just ended an event); an LF met first thing after it is
// then skipped as the rest of that CRLF, so that a CRLF split across two reads is one
// line ending, not two (which would end an event early with an empty line).
func sseLines() bufio.SplitFunc {
	afterCR := false // the last line ended with a CR: a leading LF belongs to it
	return func(data []byte, atEOF bool) (advance int, token []byte, err error) {
		if len(data) == 0 {
			return 0, nil, nil // more data, or the end
		}
		if afterCR {
			afterCR = false
			if data[0] == '\n' {
				return 1, nil, nil
			}
		}
		if i := bytes.IndexAny(data, "\r\n"); i >= 0 {
			if data[i] == '\n' {
				return i + 1, data[:i], nil
			}
			if i+1 < len(data) {
				if data[i+1] == '\n' {
					return i + 2, data[:i], nil
				}
				return i + 1, data[:i], nil
			}
			afterCR = true // the CR ends the data read so far: an LF may come next
			return i + 1, data[:i], nil
		}
		if atEOF {
			return len(data), data, nil // a last line with no line ending
		}
		return 0, nil, nil
	}
}

// next returns the next event. At the end of the body it returns io.EOF, or the read
// error that ended it. An event cut by the end of the body (no blank line after it) is
// still returned.
func (r *sseReader) next() (event, data string, err error) {
	var lines []string
	for r.sc.Scan() {
		line := r.sc.Text()
		if !r.started {
			r.started = true
			line = strings.TrimPrefix(line, "\ufeff")
		}
		if line == "" {
			if len(lines) == 0 {
				event = ""
				continue
			}
			return event, strings.Join(lines, "\n"), nil
		}
		if strings.HasPrefix(line, ":") {
			continue // comment / keep-alive
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			event = value
		case "data":
			lines = append(lines, value)
		}
	}
	if len(lines) > 0 {
		return event, strings.Join(lines, "\n"), nil
	}
	if err := r.sc.Err(); err != nil {
		return "", "", err
	}
	return "", "", io.EOF
}
