package client_test

import (
	"context"
	"errors"
	"testing"

	"github.com/switchyard-ai/switchyard/client"
)

// An "event: error" on the OpenAI-compatible stream is a *ChatStreamError carrying what it
// says, whatever its shape: text that is not JSON (a proxy's "upstream timed out") was
// reported as a "malformed chat stream event", and a JSON string too; the text is now the
// message. The shapes read before keep their reading.
func TestReview22lChatStreamErrorEventText(t *testing.T) {
	const first = "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\n"
	for _, tc := range []struct {
		name, events, typ, code, message string
	}{
		{"plain text", "event: error\ndata: upstream timed out after 30s\n\n", "error", "", "upstream timed out after 30s"},
		{"text over lines", "event: error\ndata: bad gateway\ndata: try again\n\n", "error", "", "bad gateway\ntry again"},
		{"text like JSON", "event: error\ndata: {not json\n\n", "error", "", "{not json"},
		{"JSON string", "event: error\ndata: \"overloaded\"\n\n", "error", "", "overloaded"},
		{"Switchyard's shape", "event: error\ndata: {\"error\":\"Upstream Error\",\"message\":\"cut\"}\n\n", "Upstream Error", "", "cut"},
		{"OpenAI envelope", "event: error\ndata: {\"error\":{\"message\":\"cut\",\"type\":\"upstream_error\",\"code\":\"stream_failed\"}}\n\n", "upstream_error", "stream_failed", "cut"},
		{"bare error object", "event: error\ndata: {\"message\":\"cut\",\"type\":\"server_error\",\"code\":502}\n\n", "server_error", "502", "cut"},
	} {
		c := fakeServer(t, fakeSSE(first+tc.events))
		st, err := c.ChatCompletionStream(context.Background(), chatRequest("openai/gpt-4o"))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for st.Next() {
			n++
		}
		var se *client.ChatStreamError
		if n != 1 || !errors.As(st.Err(), &se) || se.Type != tc.typ || se.Code != tc.code || se.Message != tc.message {
			t.Errorf("%s: %d chunks, Err() = %T %v; want 1 chunk and a *ChatStreamError type %q code %q message %q",
				tc.name, n, st.Err(), st.Err(), tc.typ, tc.code, tc.message)
		}
		st.Close()
	}
}
