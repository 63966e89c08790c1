package client_test

import (
	"context"
	"errors"
	"testing"

	"github.com/switchyard-ai/switchyard/client"
)

// A stream that ends with an error event is a *StreamError carrying what the event says,
// whatever its payload's shape: the server's {"error": kind, "message"}, an OpenAI-style
// {"error": {"type", "message"}} (a proxy's, or with no event name), a JSON string, or text
// that is not JSON. None of them is reported as a malformed event.
func TestReview22iStreamErrorPayloads(t *testing.T) {
	for _, tc := range []struct {
		name, events, kind, message string
	}{
		{"native", "event: error\ndata: {\"type\":\"text\",\"text\":\"\",\"error\":\"Stream Error\",\"message\":\"upstream cut\"}\n\n", "Stream Error", "upstream cut"},
		{"object", "event: error\ndata: {\"error\":{\"message\":\"boom\",\"type\":\"server_error\"}}\n\n", "server_error", "boom"},
		{"object without event name", "data: {\"error\":{\"message\":\"boom\",\"type\":\"server_error\",\"code\":\"x\"}}\n\n", "server_error", "boom"},
		{"JSON string", "event: error\ndata: \"boom\"\n\n", "Stream Error", "boom"},
		{"text", "event: error\ndata: upstream died\ndata: at byte 12\n\n", "Stream Error", "upstream died\nat byte 12"},
	} {
		n, err := streamAfterOneChunk(t, tc.events)
		var se *client.StreamError
		if !errors.As(err, &se) || n != 1 {
			t.Fatalf("%s: %d chunks, Err() = %T %v; want 1 chunk and a *StreamError", tc.name, n, err, err)
		}
		if se.Kind != tc.kind || se.Message != tc.message {
			t.Fatalf("%s: StreamError kind %q message %q; want %q, %q", tc.name, se.Kind, se.Message, tc.kind, tc.message)
		}
	}
}

// streamAfterOneChunk streams a completion whose server sends one chunk, then events; it
// returns how many chunks the stream gave and the error it ended with.
func streamAfterOneChunk(t *testing.T, events string) (int, error) {
	t.Helper()
	c := fakeServer(t, fakeSSE("data: "+chunkA+"\n\n"+events))
	st, err := c.CompleteStream(context.Background(), &client.CompletionRequest{Models: []string{"openai/gpt-4o"}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	n := 0
	for st.Next() {
		n++
	}
	return n, st.Err()
}
