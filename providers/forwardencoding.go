package providers

import (
	"bufio"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// forwardAcceptEncoding is the Accept-Encoding a forwarded request is sent with, whatever
// the caller asked: the answer is decoded to be metered (see decodeForwarded).
const forwardAcceptEncoding = "gzip"

// decodeForwarded makes resp, a forwarded request's answer, read decoded when its
// Content-Encoding is one the gateway decodes — gzip (x-gzip) or deflate, zlib-wrapped as
// HTTP's "deflate" is or raw as some servers send it — and drops its Content-Encoding and
// Content-Length then (resp.Uncompressed is set). An answer in another encoding (br, zstd,
// several) is left as it came, its Content-Encoding kept: its bytes go to the client as
// they are and its usage cannot be read.
func decodeForwarded(resp *http.Response) {
	enc := strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Encoding")))
	if len(resp.Header.Values("Content-Encoding")) != 1 {
		return
	}
	switch enc {
	case "gzip", "x-gzip", "deflate":
	default:
		return
	}
	resp.Body = &decodedBody{raw: resp.Body, encoding: enc}
	resp.Header.Del("Content-Encoding")
	resp.Header.Del("Content-Length")
	resp.ContentLength = -1
	resp.Uncompressed = true
}

// decodedBody reads raw decoded of encoding ("gzip", "x-gzip", "deflate"); the decoder is
// made at the first Read, so that a stream's header is not waited for before the answer's
// status and headers are handed on.
type decodedBody struct {
	raw      io.ReadCloser
	encoding string
	r        io.Reader
	err      error
}

// Read reads the decoded answer.
func (d *decodedBody) Read(p []byte) (int, error) {
	if d.r == nil && d.err == nil {
		d.r, d.err = d.open()
	}
	if d.err != nil {
		return 0, d.err
	}
	n, err := d.r.Read(p)
	if err != nil && err != io.EOF {
		err = fmt.Errorf("decoding the answer's %s: %w", d.encoding, err)
	}
	return n, err
}

// open makes the decoder of d's encoding over its raw body.
func (d *decodedBody) open() (io.Reader, error) {
	br := bufio.NewReader(d.raw)
	if d.encoding != "deflate" {
		zr, err := gzip.NewReader(br)
		if err == io.EOF {
			return nil, io.EOF // an empty body
		}
		if err != nil {
			return nil, fmt.Errorf("decoding the answer's gzip: %w", err)
		}
		return zr, nil
	}
	head, err := br.Peek(2)
	if len(head) == 0 && err != nil {
		if err == io.EOF {
			return nil, io.EOF
		}
		return nil, fmt.Errorf("decoding the answer's deflate: %w", err)
	}
	if len(head) == 2 && head[0]&0x0f == 8 && (uint16(head[0])<<8|uint16(head[1]))%31 == 0 {
		zr, err := zlib.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("decoding the answer's deflate: %w", err)
		}
		return zr, nil
	}
	return flate.NewReader(br), nil // raw deflate, without zlib's header
}

// Close closes the raw body.
func (d *decodedBody) Close() error { return d.raw.Close() }
