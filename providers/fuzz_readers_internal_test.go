package providers

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"testing/iotest"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
)

// fuzzSSEEvents reads every event of body through r, copying each (data is valid only
// until the next read).
func fuzzSSEEvents(r io.Reader) (out []sseEvent, err error) {
	s := newSSEReader(r)
	for i := 0; ; i++ {
		ev, err := s.next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		ev.data = append([]byte(nil), ev.data...)
		out = append(out, ev)
		if ev.raw {
			return out, nil // the rest of the body went into it
		}
	}
}

// chunkReader returns the body in reads of the sizes cut gives, in turn.
type chunkReader struct {
	b   []byte
	cut []byte
	i   int
}

func (c *chunkReader) Read(p []byte) (int, error) {
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

// FuzzSSEReader: the events an upstream stream is split into do not depend on how its
// bytes arrive (whole, a byte at a time, in fuzzed pieces), every event has data, and
// the reader ends (io.EOF) after at most one event per line.
func FuzzSSEReader(f *testing.F) {
	for _, dir := range []string{"openai", "anthropic", "gemini", "azure"} {
		filepath.WalkDir(filepath.Join("testdata", dir), func(path string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && (filepath.Ext(path) == ".sse" || filepath.Ext(path) == ".txt") {
				if raw, err := os.ReadFile(path); err == nil {
					f.Add(raw, []byte{3, 17, 1})
				}
			}
			return nil
		})
	}
	f.Add([]byte("event: ping\n\n: keep\r\ndata: a\r\ndata:b\n\ndata: cut"), []byte{0})
	f.Add([]byte("data: {}\n\n{\"error\":{\"message\":\"x\"}}"), []byte{5})
	f.Fuzz(func(t *testing.T, body, cut []byte) {
		whole, errWhole := fuzzSSEEvents(bytes.NewReader(body))
		if errWhole != nil {
			t.Fatalf("reading a %d-byte body: %v", len(body), errWhole)
		}
		if lines := bytes.Count(body, []byte("\n")) + 1; len(whole) > lines {
			t.Fatalf("%d events from %d lines", len(whole), lines)
		}
		for _, ev := range whole {
			if !ev.raw && ev.data == nil {
				t.Fatalf("event %q without data", ev.event)
			}
		}
		for _, r := range []io.Reader{iotest.OneByteReader(bytes.NewReader(body)), &chunkReader{b: body, cut: cut}} {
			got, err := fuzzSSEEvents(r)
			if err != nil {
				t.Fatalf("reading in pieces: %v", err)
			}
			if !reflect.DeepEqual(got, whole) {
				t.Fatalf("read in pieces: %+v\nwhole: %+v", got, whole)
			}
		}
	})
}

// fuzzFrame encodes one event stream message of raw header bytes and a payload, with
// correct lengths and checksums.
func fuzzFrame(headers, payload []byte) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.BigEndian, uint32(12+len(headers)+len(payload)+4))
	binary.Write(&b, binary.BigEndian, uint32(len(headers)))
	binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(b.Bytes()))
	b.Write(headers)
	b.Write(payload)
	binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(b.Bytes()))
	return b.Bytes()
}

// sdkDecodeAll decodes body with the AWS SDK's decoder; ok is false when it refuses any of
// it.
// canonical says whether the SDK's encoder writes the messages it read back as body
// exactly: the SDK's decoder also takes a header section cut short (read as its end),
// which the reader refuses.
func sdkDecodeAll(body []byte) (out []eventMessage, ok, canonical bool) {
	r := bytes.NewReader(body)
	dec := eventstream.NewDecoder()
	enc := eventstream.NewEncoder()
	var again bytes.Buffer
	for r.Len() > 0 {
		m, err := dec.Decode(r, nil)
		if err != nil {
			return out, false, false
		}
		if enc.Encode(&again, m) != nil {
			return out, false, false
		}
		out = append(out, fromSDKMessage(m))
	}
	return out, true, bytes.Equal(again.Bytes(), body)
}

// FuzzEventStreamReader reads Bedrock event streams: raw bytes, and messages framed with
// correct checksums around fuzzed headers and payloads (the parts split at 0xff 0xff).
// The reader must read the same messages as the AWS SDK's decoder wherever it reads the
// whole body, and read every body the SDK reads and would write back the same (messages
// naming each header once), end with io.EOF or one of its typed
// errors, and never read ahead more than the body holds.
func FuzzEventStreamReader(f *testing.F) {
	ev := func(typ, payload string) []byte {
		h := func(name, value string) []byte {
			b := append([]byte{byte(len(name))}, name...)
			b = append(b, 7, byte(len(value)>>8), byte(len(value)))
			return append(b, value...)
		}
		hdr := append(append(h(":event-type", typ), h(":content-type", "application/json")...), h(":message-type", "event")...)
		return append(append(hdr, 0xff, 0xff), payload...)
	}
	sep := []byte{0xff, 0xff}
	f.Add(false, bytes.Join([][]byte{ev("messageStart", `{"role":"assistant"}`), ev("contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":"Hi"}}`)}, sep))
	f.Add(true, fuzzFrame([]byte("\x0d:message-type\x07\x00\x05event"), []byte(`{}`)))
	f.Add(true, []byte(`{"message":"bad"}`))
	f.Fuzz(func(t *testing.T, raw bool, data []byte) {
		body := data
		if !raw {
			parts := bytes.Split(data, sep)
			body = nil
			for i := 0; i+1 < len(parts); i += 2 {
				body = append(body, fuzzFrame(parts[i], parts[i+1])...)
			}
		}
		own, err := ownMessages(body)
		var je *errEventJSON
		switch {
		case err == nil, errors.Is(err, errEventMalformed), errors.Is(err, errEventTruncated), errors.As(err, &je):
		default:
			t.Fatalf("untyped failure: %v", err)
		}
		sdk, ok, canonical := sdkDecodeAll(body)
		if !ok || (len(body) > 0 && body[0] == '{') {
			return
		}
		if err != nil && canonical && !hasRepeatedHeader(body) {
			t.Fatalf("the SDK reads %d messages the reader refuses: %v", len(sdk), err)
		}
		if err == nil && !reflect.DeepEqual(own, sdk) && !hasRepeatedHeader(body) {
			t.Fatalf("messages differ from the SDK's:\n own %+v\n sdk %+v", own, sdk)
		}
	})
}

// hasRepeatedHeader reports a message naming a header twice, whose value the SDK and the
// reader may take from different occurrences, or a header with an empty name, which the
// format does not allow (names are 1 to 255 bytes) and the reader refuses while the SDK
// reads it; it reads well-formed messages only.
func hasRepeatedHeader(body []byte) bool {
	for len(body) >= 16 {
		total := int(binary.BigEndian.Uint32(body[0:4]))
		hl := int(binary.BigEndian.Uint32(body[4:8]))
		if total > len(body) || 12+hl > total {
			return false
		}
		h := body[12 : 12+hl]
		seen := map[string]bool{}
		for len(h) > 0 {
			n := int(h[0])
			if len(h) < 2+n {
				break
			}
			name, typ := string(h[1:1+n]), h[1+n]
			if seen[name] || n == 0 {
				return true
			}
			seen[name] = true
			h = h[2+n:]
			if int(typ) >= len(eventHeaderSizes) {
				break
			}
			size := eventHeaderSizes[typ]
			if size < 0 {
				if len(h) < 2 {
					break
				}
				size = int(binary.BigEndian.Uint16(h))
				h = h[2:]
			}
			if len(h) < size {
				break
			}
			h = h[size:]
		}
		body = body[total:]
	}
	return false
}
