package client

import (
	"bufio"
	"io"
	"strings"
)

// sseReader splits a text/event-stream body into events: it joins an event's data lines,
// keeps its event name, and skips comments (keep-alives) and events without data.
type sseReader struct {
	sc *bufio.Scanner
}

// newSSEReader reads events from r; an event may be up to 16 MiB.
func newSSEReader(r io.Reader) *sseReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	return &sseReader{sc: sc}
}

// next returns the next event. At the end of the body it returns io.EOF, or the read
// error that ended it. An event cut by the end of the body (no blank line after it) is
// still returned.
func (r *sseReader) next() (event, data string, err error) {
	var lines []string
	for r.sc.Scan() {
		line := r.sc.Text()
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
