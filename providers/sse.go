package providers

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// maxSSELine bounds one server-sent-events line (Gemini may inline base64 images).
const maxSSELine = 16 << 20

// errLineTooLong reports an SSE line over maxSSELine.
var errLineTooLong = errors.New("providers: server-sent event line too long")

// sseEvent is one server-sent event. When raw is set the upstream stopped speaking SSE
// (for example it wrote a bare JSON error object) and data holds the rest of the body.
type sseEvent struct {
	event string
	data  []byte
	raw   bool
}

// sseReader splits a text/event-stream body into events.
type sseReader struct {
	r *bufio.Reader
}

// sseReadBuffer is the read buffer per stream: events are small, and a longer line is
// assembled across reads (readLine), so a bigger buffer would only cost an allocation and
// its zeroing per stream.
const sseReadBuffer = 4 << 10

func newSSEReader(r io.Reader) *sseReader {
	return &sseReader{r: bufio.NewReaderSize(r, sseReadBuffer)}
}

// readLine returns one line without its line ending. A line that fits in the read buffer
// is returned without copying: it is valid until the next read.
func (s *sseReader) readLine() ([]byte, error) {
	frag, err := s.r.ReadSlice('\n')
	if err == nil {
		frag = frag[:len(frag)-1]
		return bytes.TrimSuffix(frag, []byte("\r")), nil
	}
	if len(frag) > maxSSELine {
		return nil, errLineTooLong
	}
	line := append([]byte(nil), frag...)
	if err != bufio.ErrBufferFull {
		return line, err
	}
	for {
		frag, err := s.r.ReadSlice('\n')
		line = append(line, frag...)
		if len(line) > maxSSELine {
			return nil, errLineTooLong
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			return line, err
		}
		break
	}
	line = bytes.TrimSuffix(line, []byte("\n"))
	line = bytes.TrimSuffix(line, []byte("\r"))
	return line, nil
}

// next returns the next event with data, or io.EOF at the end of the body. Other read
// errors are returned as they are.
func (s *sseReader) next() (sseEvent, error) {
	var ev sseEvent
	var data [][]byte
	have := false
	// join is the event's data: its one line as it was copied, or the lines joined.
	join := func() []byte {
		if len(data) == 1 {
			return data[0]
		}
		return bytes.Join(data, []byte("\n"))
	}
	for {
		line, err := s.readLine()
		if err != nil && (err != io.EOF || len(line) == 0) {
			if err == io.EOF && have {
				ev.data = join()
				return ev, nil
			}
			return sseEvent{}, err
		}
		switch {
		case len(line) == 0:
			if have {
				ev.data = join()
				return ev, nil
			}
			ev = sseEvent{}
		case line[0] == ':':
			// comment / keep-alive
		default:
			field, value, found := bytes.Cut(line, []byte(":"))
			value = bytes.TrimPrefix(value, []byte(" "))
			switch string(field) {
			case "data":
				data = append(data, append([]byte(nil), value...))
				have = true
			case "event":
				ev.event = string(value)
			case "id", "retry":
			default:
				if !found || len(bytes.TrimSpace(line)) > 0 {
					raw := append(append([]byte(nil), line...), '\n') // line is only valid until the next read
					raw = append(raw, readErrorBody(s.r)...)
					return sseEvent{raw: true, data: raw}, nil
				}
			}
		}
		if err == io.EOF {
			if have {
				ev.data = join()
				return ev, nil
			}
			return sseEvent{}, io.EOF
		}
	}
}
