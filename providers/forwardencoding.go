package providers

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// ErrForwardEncoding is matched (errors.Is) by the failure of reading a forwarded answer
// whose body is not in the Content-Encoding it was labelled with (a body sent with
// Content-Encoding: gzip that is not gzip, one labelled deflate that is neither zlib nor
// raw deflate, a stream cut or corrupt).
var ErrForwardEncoding = errors.New("the answer's body is not in its Content-Encoding")

// encodedBodyHeaders are the response headers that describe the encoded bytes of an
// answer, dropped when the answer is handed on decoded: its length, its digests (RFC
// 9530's Content-Digest and Repr-Digest, the older Digest and Content-MD5) and
// Accept-Ranges (a range of the decoded body is not one the provider serves). A strong
// ETag is weakened instead (see decodeForwarded).
var encodedBodyHeaders = []string{"Content-Length", "Content-Md5", "Content-Digest", "Repr-Digest", "Digest", "Accept-Ranges"}

// forwardAcceptEncoding is the Accept-Encoding a forwarded request is sent with, whatever
// the caller asked: the answer is decoded to be metered (see decodeForwarded).
const forwardAcceptEncoding = "gzip"

// decodeForwarded makes resp, a forwarded request's answer, read decoded when its
// Content-Encoding is one the gateway decodes — gzip (x-gzip) or deflate, zlib-wrapped as
// HTTP's "deflate" is or raw as some servers send it — and then drops its
// Content-Encoding and the headers that describe the encoded bytes (encodedBodyHeaders)
// and makes a strong ETag weak (W/"…": the decoded body is the same resource, not the
// same bytes, as nginx's gunzip marks it), resp.Uncompressed set. An answer in another
// encoding (br, zstd, several), and a partial one (206, or any with a Content-Range: a
// byte range of the encoded body, which cannot be decoded alone), is left as it came, its
// Content-Encoding kept: its bytes go to the client as they are and its usage cannot be
// read. Reading a decoded body that is not in its encoding fails with ErrForwardEncoding.
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
	if resp.StatusCode == http.StatusPartialContent || resp.Header.Get("Content-Range") != "" {
		return
	}
	resp.Body = &decodedBody{raw: resp.Body, encoding: enc}
	resp.Header.Del("Content-Encoding")
	for _, k := range encodedBodyHeaders {
		resp.Header.Del(k)
	}
	if tags := resp.Header.Values("Etag"); len(tags) > 0 {
		weak := make([]string, len(tags))
		for i, tag := range tags {
			if tag = strings.TrimSpace(tag); tag != "" && !strings.HasPrefix(tag, "W/") {
				tag = "W/" + tag
			}
			weak[i] = tag
		}
		resp.Header["Etag"] = weak
	}
	resp.ContentLength = -1
	resp.Uncompressed = true
}

// OpenForwardedEncoding reads, when resp (a Forwarder's answer) is read decoded, the start
// of its body that its encoding begins with (gzip's or zlib's header; a raw deflate
// body's first block, decoded, as raw deflate has no header), so that a body not in its
// Content-Encoding is found before anything of it is handed on: it returns the failure,
// matching ErrForwardEncoding, or the transport's. It returns nil for an answer read as
// it came, an empty body and one whose start is its encoding's; it waits for no more of
// the body than that start.
func OpenForwardedEncoding(resp *http.Response) error {
	d, ok := resp.Body.(*decodedBody)
	if !ok {
		return nil
	}
	if d.r == nil && d.err == nil {
		d.r, d.err = d.open()
	}
	if d.err == io.EOF {
		return nil
	}
	return d.err
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
		err = d.fault(err, false)
	}
	return n, err
}

// fault is err, a failure of decoding d's body: matching ErrForwardEncoding when the body
// is not in the encoding (a transport failure is wrapped as it is). At the start (head), a
// body ending before its encoding's header is one too (a short text labelled gzip);
// later, an unexpected end may be the transport's cut.
func (d *decodedBody) fault(err error, head bool) error {
	var ce flate.CorruptInputError
	if errors.Is(err, gzip.ErrHeader) || errors.Is(err, gzip.ErrChecksum) || errors.Is(err, zlib.ErrHeader) ||
		errors.Is(err, zlib.ErrChecksum) || errors.Is(err, zlib.ErrDictionary) || errors.As(err, &ce) ||
		errors.Is(err, errDeflateTrailingData) ||
		head && errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w (labelled %s): %w", ErrForwardEncoding, d.encoding, err)
	}
	return fmt.Errorf("decoding the answer's %s: %w", d.encoding, err)
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
			return nil, d.fault(err, true)
		}
		return zr, nil
	}
	head, err := br.Peek(2)
	if len(head) == 0 && err != nil {
		if err == io.EOF {
			return nil, io.EOF
		}
		return nil, d.fault(err, true)
	}
	if zlibHeader(head) {
		zr, err := zlib.NewReader(br)
		if err != nil {
			return nil, d.fault(err, true)
		}
		return zr, nil
	}
	return d.openRawDeflate(br)
}

// zlibHeader reports whether head, a body's first two bytes, is a zlib header (RFC 1950)
// that zlib.NewReader takes: deflate's method, a window of at most 32 KiB, its check bits
// right, no preset dictionary. HTTP's "deflate" is zlib-wrapped (RFC 9110 §8.4.1.2); a
// body that does not start so is read as raw deflate, as some servers send it (and as
// curl and browsers read it after zlib fails at its header).
func zlibHeader(head []byte) bool {
	return len(head) == 2 && head[0]&0x0f == 8 && head[0]>>4 <= 7 &&
		(uint16(head[0])<<8|uint16(head[1]))%31 == 0 && head[1]&0x20 == 0
}

// rawDeflateFirstRead is how much of a raw deflate body's decoded start openRawDeflate
// reads before the body is handed on.
const rawDeflateFirstRead = 4 << 10

// openRawDeflate makes the decoder of a raw deflate body (no zlib header) and decodes its
// first block before anything is handed on: raw deflate has no header to check, so a body
// that is not deflate at all (plain JSON labelled deflate) is found only by decoding it —
// text fails within its first bytes (a corrupt code, a back-reference before the start, a
// final block cut short) or ends its one final block with bytes left over. A failure
// there matches ErrForwardEncoding, as a gzip body's bad header does; the decoded start
// is kept and read first.
func (d *decodedBody) openRawDeflate(br *bufio.Reader) (io.Reader, error) {
	raw := &rawDeflateReader{inflate: flate.NewReader(br), src: br}
	first := make([]byte, rawDeflateFirstRead)
	var n int
	var err error
	for n == 0 && err == nil {
		n, err = raw.Read(first)
	}
	if err != nil && err != io.EOF {
		return nil, d.fault(err, true)
	}
	return io.MultiReader(bytes.NewReader(first[:n]), raw), nil
}

// errDeflateTrailingData is the failure of a raw deflate body with bytes after the end of
// its final block: not a deflate stream (deflate's own framing ends it, nothing follows).
var errDeflateTrailingData = errors.New("bytes follow the end of its deflate stream")

// rawDeflateReader reads a raw deflate stream from src through inflate, failing with
// errDeflateTrailingData when bytes follow its final block (zlib's and gzip's trailers
// check the end of theirs; raw deflate has none).
type rawDeflateReader struct {
	inflate io.Reader
	src     *bufio.Reader
}

// Read reads the decoded stream.
func (r *rawDeflateReader) Read(p []byte) (int, error) {
	n, err := r.inflate.Read(p)
	if err == io.EOF {
		if _, perr := r.src.Peek(1); perr == nil {
			err = errDeflateTrailingData
		} else if perr != io.EOF {
			err = perr
		}
	}
	return n, err
}

// Close closes the raw body.
func (d *decodedBody) Close() error { return d.raw.Close() }
