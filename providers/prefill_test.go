package providers

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// captureBody serves one canned SSE answer and hands the request body to got.
func captureBody(t *testing.T, sse string, got *map[string]any) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(b, got); err != nil {
			t.Errorf("request body: %v", err)
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, sse)
	}))
	t.Cleanup(srv.Close)
	return srv
}

const openAIContinuation = "data: {\"choices\":[{\"delta\":{\"content\":\" world\"}}]}\n\n" +
	"data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":2}}\n\ndata: [DONE]\n\n"

func prefillRequest() *Request {
	return &Request{Model: "m", Messages: []Message{{Role: "user", Content: "Say hello world"}}, AssistantPrefix: "Hello \n"}
}

func readAll(t *testing.T, st Stream) string {
	t.Helper()
	var sb strings.Builder
	for {
		c, err := st.Recv()
		if errors.Is(err, io.EOF) {
			return sb.String()
		}
		if err != nil {
			t.Fatal(err)
		}
		sb.WriteString(c.Text)
	}
}

// TestOpenAIPrefillModes checks the body each PrefillMode sends: the partial answer as a
// trailing assistant message (trailing whitespace dropped), with "prefix": true or vLLM's
// continue_final_message where the mode asks for them.
func TestOpenAIPrefillModes(t *testing.T) {
	for _, mode := range []PrefillMode{PrefillTrailing, PrefillPrefix, PrefillContinueFinal} {
		var body map[string]any
		srv := captureBody(t, openAIContinuation, &body)
		o := NewOpenAI(Config{Name: "x", BaseURL: srv.URL, APIKey: "k", Prefill: mode})
		if !o.SupportsPrefill() {
			t.Fatalf("%s: SupportsPrefill false", mode)
		}
		st, err := o.Stream(context.Background(), prefillRequest())
		if err != nil {
			t.Fatal(err)
		}
		if got := readAll(t, st); got != " world" {
			t.Fatalf("%s: continuation %q", mode, got)
		}
		msgs := body["messages"].([]any)
		last := msgs[len(msgs)-1].(map[string]any)
		if last["role"] != "assistant" || last["content"] != "Hello" {
			t.Fatalf("%s: last message %v", mode, last)
		}
		if (last["prefix"] == true) != (mode == PrefillPrefix) {
			t.Errorf("%s: prefix member %v", mode, last["prefix"])
		}
		if (body["continue_final_message"] == true) != (mode == PrefillContinueFinal) || (mode == PrefillContinueFinal && body["add_generation_prompt"] != false) {
			t.Errorf("%s: continue_final_message %v add_generation_prompt %v", mode, body["continue_final_message"], body["add_generation_prompt"])
		}
	}
}

// TestPrefillRefusedWithoutSupport: OpenAI's own API and Gemini cannot continue a partial
// answer; asking them fails with KindBadRequest before anything is sent.
func TestPrefillRefusedWithoutSupport(t *testing.T) {
	called := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { called = true }))
	defer srv.Close()
	for _, p := range []Provider{NewOpenAI(Config{Name: "openai", BaseURL: srv.URL, APIKey: "k"}), NewGemini(Config{BaseURL: srv.URL, APIKey: "k"})} {
		if pf, ok := p.(Prefiller); ok && pf.SupportsPrefill() {
			t.Fatalf("%s claims prefill support", p.Name())
		}
		_, err := p.Stream(context.Background(), prefillRequest())
		if KindOf(err) != KindBadRequest || !strings.Contains(err.Error(), "partial answer") {
			t.Fatalf("%s: err %v", p.Name(), err)
		}
	}
	if called {
		t.Fatal("a request was sent")
	}
}

// TestAnthropicPrefill: the partial answer is a trailing assistant turn without trailing
// whitespace.
func TestAnthropicPrefill(t *testing.T) {
	var body map[string]any
	sse := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":9}}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\" world\"}}\n\n" +
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":2}}\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
	srv := captureBody(t, sse, &body)
	a := NewAnthropic(Config{BaseURL: srv.URL, APIKey: "k"})
	st, err := a.Stream(context.Background(), prefillRequest())
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, st); got != " world" {
		t.Fatalf("continuation %q", got)
	}
	msgs := body["messages"].([]any)
	last := msgs[len(msgs)-1].(map[string]any)
	if len(msgs) != 2 || last["role"] != "assistant" || last["content"] != "Hello" {
		t.Fatalf("messages %v", msgs)
	}
}

// TestLenientStreamEnds: a body that ends cleanly after the finish reason (and usage)
// without the end marker completes the answer; one that ends before it is broken.
func TestLenientStreamEnds(t *testing.T) {
	cases := []struct {
		name, sse string
		newP      func(url string) Provider
		wantErr   bool
	}{
		{"openai, finish and usage, no [DONE]", "data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}\n\n" +
			"data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":1}}\n\n",
			func(u string) Provider { return NewOpenAI(Config{BaseURL: u, APIKey: "k"}) }, false},
		{"openai, no finish, no [DONE]", "data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}\n\n",
			func(u string) Provider { return NewOpenAI(Config{BaseURL: u, APIKey: "k"}) }, true},
		{"anthropic, stop reason, no message_stop", "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":3}}}\n\n" +
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\n" +
			"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":1}}\n\n",
			func(u string) Provider { return NewAnthropic(Config{BaseURL: u, APIKey: "k"}) }, false},
		{"anthropic, no stop reason", "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":3}}}\n\n" +
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\n",
			func(u string) Provider { return NewAnthropic(Config{BaseURL: u, APIKey: "k"}) }, true},
	}
	for _, c := range cases {
		var body map[string]any
		srv := captureBody(t, c.sse, &body)
		st, err := c.newP(srv.URL).Stream(context.Background(), &Request{Model: "m", Messages: []Message{{Role: "user", Content: "hi"}}})
		if err != nil {
			t.Fatal(err)
		}
		var text string
		var usage *Usage
		for {
			ck, err := st.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				if !c.wantErr || KindOf(err) != KindStreamBroken {
					t.Fatalf("%s: %v", c.name, err)
				}
				text = "(broken)"
				break
			}
			text += ck.Text
			if ck.Usage != nil {
				usage = ck.Usage
			}
		}
		if c.wantErr != (text == "(broken)") {
			t.Fatalf("%s: got %q, want error %v", c.name, text, c.wantErr)
		}
		if !c.wantErr && (text != "Hi" || usage == nil || usage.CompletionTokens != 1) {
			t.Fatalf("%s: text %q usage %+v", c.name, text, usage)
		}
	}
}

// TestUndecodableEventsSkipped: an undecodable event that cannot have held any of the
// answer is skipped and counted; one that could have, or a fourth one, fails the stream.
func TestUndecodableEventsSkipped(t *testing.T) {
	ok := "data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}\n\n"
	end := "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"
	cases := []struct {
		name, sse string
		skipped   int
		broken    bool
	}{
		{"one junk event", ok + "data: {\"id\":\"x\",\"object\n\n" + end, 1, false},
		{"junk that may have held text", ok + "data: {\"choices\":[{\"delta\":{\"content\":\"lo\n\n" + end, 0, true},
		{"four junk events", ok + strings.Repeat("data: {oops\n\n", 4) + end, 3, true},
	}
	for _, c := range cases {
		var body map[string]any
		srv := captureBody(t, c.sse, &body)
		st, err := NewOpenAI(Config{BaseURL: srv.URL, APIKey: "k"}).Stream(context.Background(), &Request{Model: "m", Messages: []Message{{Role: "user", Content: "hi"}}})
		if err != nil {
			t.Fatal(err)
		}
		broken := false
		for {
			_, err := st.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				broken = KindOf(err) == KindStreamBroken
				break
			}
		}
		if broken != c.broken || st.(EventSkipper).SkippedEvents() != c.skipped {
			t.Fatalf("%s: broken %v skipped %d, want %v %d", c.name, broken, st.(EventSkipper).SkippedEvents(), c.broken, c.skipped)
		}
	}
}
