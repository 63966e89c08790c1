package providers

import (
	"bytes"
	"compress/flate"
	"compress/zlib"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
)

// deflatedAnswer is the forwarded answer resp with body labelled Content-Encoding: deflate,
// made read decoded as Forward makes it.
func deflatedAnswer(body io.Reader) *http.Response {
	resp := &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Encoding": {"deflate"}, "Content-Type": {"application/json"}},
		Body: io.NopCloser(body)}
	decodeForwarded(resp)
	return resp
}

// TestForwardedDeflateStrict: a body labelled Content-Encoding: deflate is read as zlib
// (HTTP's deflate) when it starts with a zlib header and as raw deflate otherwise, and one
// that is neither — plain JSON, text, an event stream, a raw deflate stream with bytes
// after its end — is found by OpenForwardedEncoding (ErrForwardEncoding) before anything
// of it is read, as a body labelled gzip that is not gzip is, rather than decoded into
// bytes that are not the answer or failing once the answer is being relayed.
func TestForwardedDeflateStrict(t *testing.T) {
	const answer = `{"id":"c1","object":"chat.completion","choices":[],"usage":{"prompt_tokens":7,"completion_tokens":3,"total_tokens":10}}`
	zlibbed := func(s string) []byte {
		var b bytes.Buffer
		w := zlib.NewWriter(&b)
		io.WriteString(w, s)
		w.Close()
		return b.Bytes()
	}
	raw := func(s string, level int) []byte {
		var b bytes.Buffer
		w, _ := flate.NewWriter(&b, level)
		io.WriteString(w, s)
		w.Close()
		return b.Bytes()
	}
	good := map[string][]byte{
		"zlib":                   zlibbed(answer),
		"raw deflate":            raw(answer, flate.DefaultCompression),
		"raw deflate, stored":    raw(answer, flate.NoCompression),
		"raw deflate, huffman":   raw(answer, flate.HuffmanOnly),
		"raw deflate, long":      raw(strings.Repeat(answer, 500), flate.BestSpeed),
		"raw deflate, long, raw": raw(strings.Repeat(answer, 500), flate.NoCompression),
	}
	for name, body := range good {
		resp := deflatedAnswer(bytes.NewReader(body))
		if err := OpenForwardedEncoding(resp); err != nil {
			t.Errorf("%s: OpenForwardedEncoding: %v, want nil", name, err)
			continue
		}
		got, err := io.ReadAll(resp.Body)
		want := answer
		if strings.HasSuffix(name, "long") || strings.HasSuffix(name, "long, raw") {
			want = strings.Repeat(answer, 500)
		}
		if err != nil || string(got) != want {
			t.Errorf("%s: read %d bytes (%v), want the %d of the answer", name, len(got), err, len(want))
		}
	}

	bad := []string{
		answer, `{}`, `[]`, `{"a":1}`, `{"error":{"message":"bad key","type":"invalid_request_error"}}`,
		"data: {\"x\":1}\n\ndata: [DONE]\n\n", "event: message_start\ndata: {}\n\n", "hello world", "<html><body>502 Bad Gateway</body></html>",
		" {\"id\":\"c2\"}", "\n", "x",
	}
	for i := range 200 { // answers differing in their ids and numbers
		bad = append(bad, `{"id":"chatcmpl-`+strings.Repeat("ab", i%7)+string(rune('A'+i%26))+`","object":"chat.completion","created":`+
			strings.Repeat("9", 1+i%10)+`,"choices":[{"index":0,"message":{"role":"assistant","content":"`+strings.Repeat("x", i)+`"}}]}`)
	}
	for _, body := range bad {
		resp := deflatedAnswer(strings.NewReader(body))
		err := OpenForwardedEncoding(resp)
		if !errors.Is(err, ErrForwardEncoding) || !strings.Contains(err.Error(), "deflate") {
			got, _ := io.ReadAll(resp.Body)
			t.Errorf("%.40q labelled deflate: OpenForwardedEncoding: %v (then read %q), want ErrForwardEncoding naming deflate", body, err, got)
		}
	}

	trailing := append(raw(answer, flate.DefaultCompression), []byte(`{"more":true}`)...)
	if err := OpenForwardedEncoding(deflatedAnswer(bytes.NewReader(trailing))); !errors.Is(err, ErrForwardEncoding) {
		t.Errorf("raw deflate with bytes after its end: %v, want ErrForwardEncoding", err)
	}
	longTrailing := append(raw(strings.Repeat(answer, 500), flate.BestSpeed), 'x')
	resp := deflatedAnswer(bytes.NewReader(longTrailing))
	if err := OpenForwardedEncoding(resp); err != nil {
		t.Fatalf("a long raw deflate body's start: %v, want nil", err)
	}
	if _, err := io.ReadAll(resp.Body); !errors.Is(err, ErrForwardEncoding) {
		t.Errorf("a long raw deflate body with bytes after its end: read %v, want ErrForwardEncoding", err)
	}

	empty := deflatedAnswer(strings.NewReader(""))
	if err := OpenForwardedEncoding(empty); err != nil {
		t.Errorf("an empty body: %v, want nil", err)
	}
}

// TestForwardedRawDeflateStreamOpensAtItsFirstBlock: OpenForwardedEncoding of a raw
// deflate stream whose encoder flushes each event waits for its first block only, not for
// the rest of the stream (which is still being written when it returns: were it waited
// for, the test would hang).
func TestForwardedRawDeflateStreamOpensAtItsFirstBlock(t *testing.T) {
	pr, pw := io.Pipe()
	opened := make(chan struct{})
	go func() {
		fw, _ := flate.NewWriter(pw, flate.BestSpeed)
		io.WriteString(fw, "data: {\"n\":1}\n\n")
		fw.Flush()
		<-opened
		io.WriteString(fw, "data: [DONE]\n\n")
		fw.Close()
		pw.Close()
	}()
	resp := deflatedAnswer(pr)
	err := OpenForwardedEncoding(resp)
	close(opened)
	if err != nil {
		t.Fatalf("OpenForwardedEncoding: %v", err)
	}
	got, err := io.ReadAll(resp.Body)
	if err != nil || string(got) != "data: {\"n\":1}\n\ndata: [DONE]\n\n" {
		t.Errorf("read %q (%v), want both events", got, err)
	}
}
