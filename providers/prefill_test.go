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
// Every adapter that streams behaves the same.
func TestUndecodableEventsSkipped(t *testing.T) {
	type junkCase struct {
		name, sse string
		skipped   int
		broken    bool
	}
	oai := func(middle string) string {
		return "data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}\n\n" + middle +
			"data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"
	}
	anthropic := func(middle string) string {
		return "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m\",\"content\":[],\"usage\":{\"input_tokens\":1,\"output_tokens\":0}}}\n\n" +
			"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\n" +
			middle +
			"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
			"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":1}}\n\n" +
			"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
	}
	gemini := func(middle string) string {
		return "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"Hi\"}],\"role\":\"model\"}}]}\n\n" + middle +
			"data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"\"}],\"role\":\"model\"},\"finishReason\":\"STOP\"}],\"usageMetadata\":{\"promptTokenCount\":1,\"candidatesTokenCount\":1,\"totalTokenCount\":2}}\n\n"
	}
	adapters := []struct {
		name  string
		open  func(url string) Provider
		cases []junkCase
	}{
		{"openai", func(u string) Provider { return NewOpenAI(Config{BaseURL: u, APIKey: "k"}) }, []junkCase{
			{"one junk event", oai("data: {\"id\":\"x\",\"object\n\n"), 1, false},
			{"junk that may have held text", oai("data: {\"choices\":[{\"delta\":{\"content\":\"lo\n\n"), 0, true},
			{"four junk events", oai(strings.Repeat("data: {oops\n\n", 4)), 3, true},
		}},
		{"anthropic", func(u string) Provider { return NewAnthropic(Config{BaseURL: u, APIKey: "k"}) }, []junkCase{
			{"one junk ping", anthropic("event: ping\ndata: {\"type\":\"pi\n\n"), 1, false},
			{"a junk delta event", anthropic("event: content_block_delta\ndata: {\"type\":\"content_block_del\n\n"), 0, true},
			{"junk that may have held text", anthropic("event: ping\ndata: {\"delta\":{\"text\":\"lo\n\n"), 0, true},
			{"four junk events", anthropic(strings.Repeat("event: ping\ndata: {oops\n\n", 4)), 3, true},
		}},
		{"gemini", func(u string) Provider { return NewGemini(Config{BaseURL: u, APIKey: "k"}) }, []junkCase{
			{"one junk event", gemini("data: {\"modelVersion\":\"x\",\"respon\n\n"), 1, false},
			{"junk that may have held text", gemini("data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"lo\n\n"), 0, true},
			{"four junk events", gemini(strings.Repeat("data: {oops\n\n", 4)), 3, true},
		}},
	}
	for _, a := range adapters {
		for _, c := range a.cases {
			var body map[string]any
			srv := captureBody(t, c.sse, &body)
			st, err := a.open(srv.URL).Stream(context.Background(), &Request{Model: "m", Messages: []Message{{Role: "user", Content: "hi"}}})
			if err != nil {
				t.Fatal(err)
			}
			broken, text := false, ""
			for {
				ck, err := st.Recv()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					broken = KindOf(err) == KindStreamBroken
					break
				}
				text += ck.Text
			}
			if broken != c.broken || st.(EventSkipper).SkippedEvents() != c.skipped || (!broken && text != "Hi") {
				t.Errorf("%s, %s: broken %v skipped %d text %q, want %v %d", a.name, c.name, broken, st.(EventSkipper).SkippedEvents(), text, c.broken, c.skipped)
			}
		}
	}
}

// Anthropic's stop reasons in OpenAI's vocabulary; a context window that filled before
// max_tokens is a length stop too.
func TestAnthropicFinish(t *testing.T) {
	for in, want := range map[string]string{"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length",
		"model_context_window_exceeded": "length", "tool_use": "tool_calls"} {
		if got := anthropicFinish(in); got != want {
			t.Errorf("anthropicFinish(%q) = %q, want %q", in, got, want)
		}
	}
}
