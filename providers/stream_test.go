package providers_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// streamOf serves body as an event stream and returns the opened stream's drained text
// and terminal error, plus the result of one more Recv after the end (it must repeat).
func streamOf(t *testing.T, f providers.Format, body string) (string, error, error) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, body)
	}))
	defer srv.Close()
	s, err := newProvider(t, f, srv.URL, nil).Stream(context.Background(), hello("m-1"))
	if err != nil {
		t.Fatal(err)
	}
	text, err := drain(s)
	_, again := s.Recv()
	return text, err, again
}

func TestStreamTerminalResultsAreSticky(t *testing.T) {
	for _, f := range faultFormats {
		t.Run(string(f), func(t *testing.T) {
			text, err, again := streamOf(t, f, partialStream(f)+streamEnd(f))
			if err != io.EOF || again != io.EOF || text != "Hello" {
				t.Fatalf("clean stream: text %q, err %v, then %v", text, err, again)
			}
			_, err, again = streamOf(t, f, partialStream(f))
			if providers.KindOf(err) != providers.KindStreamBroken || again != err {
				t.Fatalf("cut stream: err %v, then %v", err, again)
			}
		})
	}
}

func TestStreamNonSSEData(t *testing.T) {
	for _, f := range allFormats {
		t.Run(string(f), func(t *testing.T) {
			text, err, _ := streamOf(t, f, partialStream(f)+"<html>bad gateway</html>\n")
			var pe *providers.Error
			if !errors.As(err, &pe) || pe.Kind != providers.KindStreamBroken || !strings.Contains(pe.Message, "not server-sent events") {
				t.Fatalf("err = %v, want KindStreamBroken saying the data is not server-sent events", err)
			}
			if text != "Hel" {
				t.Errorf("text = %q, want %q", text, "Hel")
			}
		})
	}
	// A bare error object in place of events carries the upstream's kind and message.
	_, err, _ := streamOf(t, providers.FormatAnthropic, partialStream(providers.FormatAnthropic)+
		"{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n")
	var pe *providers.Error
	if !errors.As(err, &pe) || pe.Kind != providers.KindOverloaded || pe.Message != "Overloaded" {
		t.Fatalf("anthropic raw error: err = %v, want KindOverloaded \"Overloaded\"", err)
	}
}

func TestStreamLineTooLong(t *testing.T) {
	long := "data: " + strings.Repeat("x", 17<<20) + "\n\n"
	for _, f := range allFormats {
		t.Run(string(f), func(t *testing.T) {
			text, err, again := streamOf(t, f, partialStream(f)+long)
			var pe *providers.Error
			if !errors.As(err, &pe) || pe.Kind != providers.KindStreamBroken || !strings.Contains(pe.Message, "too long") {
				t.Fatalf("err = %v, want KindStreamBroken for an over-long line", err)
			}
			if text != "Hel" || again != err {
				t.Errorf("text = %q, then %v", text, again)
			}
		})
	}
}

// TestStreamChunkDecodingIsLenient: upstream chunks are decoded as encoding/json would
// (invalid UTF-8 replaced, the last of repeated names kept, names matched without regard
// to case) rather than failing the stream.
func TestStreamChunkDecodingIsLenient(t *testing.T) {
	body := "data: {\"choices\":[{\"delta\":{\"content\":\"caf\xe9 \"}}]}\n\n" +
		"data: {\"choices\":[{\"delta\":{\"content\":\"dropped\",\"content\":\"kept \"}}]}\n\n" +
		"data: {\"Choices\":[{\"Delta\":{\"Content\":\"cased\"}}]}\n\n" +
		"data: [DONE]\n\n"
	text, err, _ := streamOf(t, providers.FormatOpenAI, body)
	if err != io.EOF {
		t.Fatalf("err = %v", err)
	}
	if want := "caf\ufffd kept cased"; text != want {
		t.Fatalf("text = %q, want %q", text, want)
	}
}

// TestStreamLongEventAcrossReads: an event far longer than the read buffer (a large
// fragment, or Gemini's inline data) arrives whole.
func TestStreamLongEventAcrossReads(t *testing.T) {
	long := strings.Repeat("0123456789abcdef", 8<<10) // 128 KiB
	body := "data: {\"choices\":[{\"delta\":{\"content\":\"" + long + "\"}}]}\n\n" +
		"data: {\"choices\":[{\"delta\":{\"content\":\" end\"}}]}\n\ndata: [DONE]\n\n"
	text, err, _ := streamOf(t, providers.FormatOpenAI, body)
	if err != io.EOF || text != long+" end" {
		t.Fatalf("err = %v, text length %d, want %d", err, len(text), len(long)+4)
	}
}
