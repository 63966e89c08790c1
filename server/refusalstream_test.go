package server

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/switchyard-ai/switchyard/completions"
)

// TestRefusalRecordsStreamAsked: a gateway request the server refuses once its body is
// read is recorded with the stream flag its body asked ("stream": true), whether the body
// decoded (a model the key may not call) or not (a field of the wrong type, before or
// after stream); one that did not ask for a stream is recorded stream=false.
func TestRefusalRecordsStreamAsked(t *testing.T) {
	hs, s := keysServerWith(t, nil, &fakeOpenAIUpstream{}, Config{APIKeys: []string{testKey, completionsOtherKey}})
	a := litellmGenerate(t, s, `{"models":["openai/ok"],"user_id":"u-stream"}`)
	msgs := `"messages":[{"role":"user","content":"hi"}]`
	cases := []struct {
		rid, path, body string
		status          int
		stream          bool
	}{
		{"s-chat-not-allowed", "/v1/chat/completions", `{"model":"openai/ok2","stream":true,` + msgs + `}`, 401, true},
		{"s-chat-type-after", "/v1/chat/completions", `{"model":"openai/ok","stream":true,` + msgs + `,"temperature":"hot"}`, 400, true},
		{"s-chat-type-before", "/v1/chat/completions", `{"temperature":"hot","model":"openai/ok","stream":true,` + msgs + `}`, 400, true},
		{"s-chat-plain", "/v1/chat/completions", `{"model":"openai/ok2",` + msgs + `}`, 401, false},
		{"s-responses", "/v1/responses", `{"model":"openai/ok2","stream":true,"input":"hi"}`, 401, true},
		{"s-messages", "/v1/messages", `{"model":"openai/ok2","stream":true,"max_tokens":10,` + msgs + `}`, 401, true},
		{"s-native", "/api/v1/completions", `{"models":["openai/ok2"],"stream":true,` + msgs + `}`, 403, true},
	}
	for _, c := range cases {
		if st, _, body := postWithID(t, hs.URL+c.path, a.Key, c.rid, c.body); st != c.status {
			t.Errorf("%s: %d %s, want %d", c.rid, st, body, c.status)
		}
	}
	hist := usageRequestsByID(t, s, testKey)
	for _, c := range cases {
		h := hist[c.rid]
		if h == nil {
			t.Errorf("%s: not in the usage history", c.rid)
			continue
		}
		if got, _ := h["stream"].(bool); got != c.stream {
			t.Errorf("%s: recorded stream=%v, want %v (%v)", c.rid, got, c.stream, h)
		}
	}
}

// TestNoteDecodedStreamAllocatesNothing: noting the model and stream a decoded body asked
// (every gateway request's hot path) allocates nothing, and notes both.
func TestNoteDecodedStreamAllocatesNothing(t *testing.T) {
	info := &requestInfo{}
	r := httptest.NewRequest("POST", "/v1/chat/completions", nil)
	r = r.WithContext(context.WithValue(r.Context(), requestInfoKey{}, info))
	req := &completions.OpenAIChatRequest{Model: "openai/ok", Stream: true}
	if n := testing.AllocsPerRun(100, func() { noteDecodedModel(r, req, nil, nil) }); n != 0 {
		t.Errorf("noteDecodedModel: %v allocations, want 0", n)
	}
	if info.askedModel != "openai/ok" || !info.askedStream {
		t.Errorf("noted model %q stream %v, want openai/ok true", info.askedModel, info.askedStream)
	}
}
