package server

import (
	"net/http"
	"testing"
)

// TestReview24bNonStreamingResponseFullSet: the spec's Completions response table lists
// provider, model, responseMessageId, type, text, message, conversationId,
// conversationTitle, usage, latency and ttft, and says "The final non-streaming response
// carries the full set of fields above". type and text were only on streaming chunks: a
// stream false answer had neither. It carries type "text" and the whole generated text
// (the one fragment of an answer that is not streamed), equal to message.content's text.
func TestReview24bNonStreamingResponseFullSet(t *testing.T) {
	hs, _, _ := completionsServer(t)
	resp, b := post(t, hs.URL+"/api/v1/completions", testKey,
		`{"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}],"models":["up/ok"]}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	r := decodeMap(t, b)
	for _, f := range []string{"provider", "model", "responseMessageId", "type", "text", "message",
		"conversationId", "conversationTitle", "usage", "latency", "ttft"} {
		if _, ok := r[f]; !ok {
			t.Errorf("the non-streaming response lacks %s: %s", f, b)
		}
	}
	if r["type"] != "text" {
		t.Errorf("type = %v, want \"text\"", r["type"])
	}
	blocks, _ := r["message"].(map[string]any)["content"].([]any)
	if len(blocks) != 1 || r["text"] != blocks[0].(map[string]any)["text"] || r["text"] != "Hello from ok" {
		t.Errorf("text = %v, want the generated text of message.content (%v)", r["text"], r["message"])
	}
}
