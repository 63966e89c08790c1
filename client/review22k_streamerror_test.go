package client_test

import (
	"errors"
	"testing"

	"github.com/switchyard-ai/switchyard/client"
)

// An error event whose error object carries a numeric code (OpenRouter's and other
// proxies' {"error": {"code": 502, "message": …}}) is a *StreamError with that message and
// the code as its kind, as the Python client reads it; the envelope failed to decode on the
// number, and the stream ended with kind "Stream Error" and an empty message, losing the
// server's words.
func TestReview22kStreamErrorNumericCode(t *testing.T) {
	for _, tc := range []struct {
		name, events, kind, message string
	}{
		{"numeric code", "event: error\ndata: {\"error\":{\"code\":502,\"message\":\"Provider returned error\"}}\n\n", "502", "Provider returned error"},
		{"numeric code without event name", "data: {\"error\":{\"code\":429,\"message\":\"slow down\",\"metadata\":{\"raw\":1}}}\n\n", "429", "slow down"},
		{"type beside a numeric code", "event: error\ndata: {\"error\":{\"type\":\"server_error\",\"code\":500,\"message\":\"boom\"}}\n\n", "server_error", "boom"},
		{"null code", "event: error\ndata: {\"error\":{\"type\":\"server_error\",\"code\":null,\"param\":null,\"message\":\"boom\"}}\n\n", "server_error", "boom"},
	} {
		_, err := streamAfterOneChunk(t, tc.events)
		var se *client.StreamError
		if !errors.As(err, &se) || se.Kind != tc.kind || se.Message != tc.message {
			t.Errorf("%s: Err() = %T %v; want a *StreamError of kind %q, message %q", tc.name, err, err, tc.kind, tc.message)
		}
	}
}
