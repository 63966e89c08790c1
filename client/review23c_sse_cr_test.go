package client_test

import (
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/client"
)

// A stream whose lines end with a CR alone (allowed by the SSE specification, as CRLF
// and LF are) is read as one with LF endings: every chunk, the final event and the end
// marker are seen (with CR not taken as a line ending, the whole stream was one line and
// no event was read).
func TestReview23cStreamWithCRLineEndings(t *testing.T) {
	body := ": keep-alive\r\rdata: " + chunkA + "\r\rdata: " + chunkB + "\r\n\rdata: " + finalEv + "\r\rdata: [DONE]\r\r"
	c := fakeServer(t, fakeSSE(body))
	st, err := c.CompleteStream(t.Context(), &client.CompletionRequest{Models: []string{"openai/gpt-4o"}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var text strings.Builder
	for ch, err := range st.Chunks() {
		if err != nil {
			t.Fatal(err)
		}
		text.WriteString(ch.Text)
	}
	f := st.Final()
	if text.String() != "Hello" || f == nil || f.Text() != "Hello" || f.Usage.TotalTokens != 5 || st.Err() != nil {
		t.Fatalf("text %q final %+v err %v", text.String(), f, st.Err())
	}
}
