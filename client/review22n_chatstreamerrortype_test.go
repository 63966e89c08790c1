package client_test

import (
	"context"
	"errors"
	"testing"

	"github.com/switchyard-ai/switchyard/client"
)

// An "event: error" payload that names no type (an OpenAI envelope or a bare error object
// without "type", or JSON null) gave a *ChatStreamError with Type "" ("chat stream failed:
// : cut"), though 8578d8d's reading says Type is "error" when the payload names none, as
// it is for text and JSON strings.
func TestReview22nChatStreamErrorEventDefaultType(t *testing.T) {
	const first = "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\n"
	for _, tc := range []struct{ name, data, message string }{
		{"envelope without type", `{"error":{"message":"cut"}}`, "cut"},
		{"bare object without type", `{"message":"cut","code":"x"}`, "cut"},
		{"null", `null`, ""},
	} {
		c := fakeServer(t, fakeSSE(first+"event: error\ndata: "+tc.data+"\n\n"))
		st, err := c.ChatCompletionStream(context.Background(), chatRequest("openai/gpt-4o"))
		if err != nil {
			t.Fatal(err)
		}
		for st.Next() {
		}
		var se *client.ChatStreamError
		if !errors.As(st.Err(), &se) || se.Type != "error" || se.Message != tc.message {
			t.Errorf("%s: Err() = %T %v; want a *ChatStreamError of type \"error\", message %q", tc.name, st.Err(), st.Err(), tc.message)
		}
		st.Close()
	}
}
