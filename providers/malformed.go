package providers

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// malformedSnippetLen bounds the start of a malformed body quoted in its error.
const malformedSnippetLen = 120

// malformedBody is the *Error (KindStreamBroken) of a success response whose body raw could
// not be decoded (err, the decoder's error), saying what the body was rather than only that
// it was malformed: empty, a stream (an upstream ignoring "stream": false), not JSON at all
// (an HTML page: a proxy's, a login portal's, a web UI's at a base URL missing its /v1), or
// JSON cut short or broken. what names the body
// ("response body", "embeddings response").
// head is the body, or its start when only that was kept, and size its whole length.
func (c *call) malformedBody(head []byte, size int64, err error, what string) *Error {
	return c.failure(KindStreamBroken, describeMalformed(head, size, err, what, c.resp.Header.Get("Content-Type")), err)
}

// describeMalformed is malformedBody's message; contentType is the response's header.
func describeMalformed(head []byte, size int64, err error, what, contentType string) string {
	body := bytes.TrimSpace(bytes.TrimPrefix(head, []byte("\ufeff")))
	switch {
	case len(body) == 0:
		return "empty " + what + " (HTTP 200 with no JSON in it)"
	case strings.HasPrefix(contentType, "text/event-stream") || bytes.HasPrefix(body, []byte("data:")) || bytes.HasPrefix(body, []byte("event:")):
		return fmt.Sprintf("the %s is a stream (server-sent events, %s) where one JSON answer was asked for: %s; the upstream does not honour \"stream\": false",
			what, contentTypeOrNone(contentType), snippet(body))
	case body[0] != '{' && body[0] != '[':
		return fmt.Sprintf("the %s is not JSON (%s): %s; check the provider's base URL (an OpenAI-compatible server's usually ends in /v1) and any proxy in between",
			what, contentTypeOrNone(contentType), snippet(body))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Sprintf("the %s is cut short: its JSON ends after %d bytes", what, size)
	}
	msg := "malformed " + what
	if err != nil {
		msg += ": " + err.Error()
	}
	return msg
}

// contentTypeOrNone names a response's Content-Type for a message.
func contentTypeOrNone(ct string) string {
	if ct == "" {
		return "no Content-Type"
	}
	return "Content-Type " + ct
}

// snippet is the start of body, quoted, on one line: at most malformedSnippetLen bytes (cut
// on a rune's start), "…" when cut.
func snippet(body []byte) string {
	s := strings.Join(strings.Fields(string(body[:min(len(body), 4*malformedSnippetLen)])), " ")
	cut := len(s) > malformedSnippetLen || len(body) > 4*malformedSnippetLen
	if len(s) > malformedSnippetLen {
		n := malformedSnippetLen
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n]
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	if cut {
		return quote(s) + "…"
	}
	return quote(s)
}

// malformedStream is the *Error (KindStreamBroken) of a stream whose body holds data that
// is not server-sent events (data, its first such line), saying what it was: an HTML page
// (a wrong base URL, a proxy's page) or JSON (an answer or an error in a form the adapter
// does not read) rather than only that it was malformed.
func (c *call) malformedStream(data []byte) *Error {
	body := bytes.TrimSpace(data)
	ct := contentTypeOrNone(c.resp.Header.Get("Content-Type"))
	if len(body) > 0 && (body[0] == '{' || body[0] == '[') {
		return c.failure(KindStreamBroken, fmt.Sprintf("malformed stream: JSON, not server-sent events (%s): %s", ct, snippet(body)), nil)
	}
	return c.failure(KindStreamBroken, fmt.Sprintf("malformed stream: not server-sent events (%s): %s; check the provider's base URL (an OpenAI-compatible server's usually ends in /v1) and any proxy in between",
		ct, snippet(body)), nil)
}
