package completions

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store"
)

// drain reads a stream to its end and returns the fragments and the ending error
// (nil after io.EOF).
func drain(t *testing.T, st *ResponseStream) ([]string, error) {
	t.Helper()
	defer st.Close()
	var frags []string
	for {
		c, err := st.Recv()
		if errors.Is(err, io.EOF) {
			return frags, nil
		}
		if err != nil {
			return frags, err
		}
		if c.Type != "text" || c.Message.Role != "assistant" || c.Message.Content[0].Text != c.Text || c.ResponseMessageID != st.ResponseMessageID() {
			t.Fatalf("bad chunk %+v", c)
		}
		frags = append(frags, c.Text)
	}
}

func TestStreamDeliversFragmentsThenFinal(t *testing.T) {
	h := newHarness(t, nil)
	h.a.on("priced", step{text: "The answer is 42", usage: providers.Usage{PromptTokens: 10, CompletionTokens: 5}})
	st, err := h.g.Stream(context.Background(), Scope{Owner: "o"}, userReq("Question?", "a/priced"))
	if err != nil {
		t.Fatal(err)
	}
	frags, err := drain(t, st)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(frags, "") != "The answer is 42" || len(frags) != 4 {
		t.Fatalf("fragments = %q", frags)
	}
	r := st.Response()
	if r == nil || r.Text() != "The answer is 42" || r.Usage.TotalTokens != 15 || !r.Usage.Costs.PriceKnown || r.FinishReason != "stop" {
		t.Fatalf("final = %+v", r)
	}
	if _, msgs, err := h.g.Conversation(context.Background(), "o", r.ConversationID); err != nil || len(msgs) != 2 || msgs[1].Content[0].Text != "The answer is 42" {
		t.Fatalf("stored %+v %v", msgs, err)
	}
	if len(h.ledger.all()) != 1 {
		t.Fatal("ledger not told")
	}
}

func TestStreamFailsOverSilentlyBeforeFirstToken(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.FirstTokenTimeout = 20 * time.Millisecond })
	broken := &providers.Error{Kind: providers.KindStreamBroken, Message: "cut"}
	h.a.on("m",
		step{err: upstreamErr(providers.KindOverloaded, 503, 0)}, // fails to open
		step{text: "never seen", breakAt: 0, breakErr: broken},   // breaks before its first fragment
		step{text: "never seen either", delay: time.Second},      // first token too slow
	)
	h.b.on("m", step{text: "fallback answer"})
	r := userReq("hi", "a/m")
	r.FallbackModels = []string{"b/m"}
	st, err := h.g.Stream(context.Background(), Scope{}, r)
	if err != nil {
		t.Fatal(err)
	}
	frags, err := drain(t, st)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(frags, "") != "fallback answer" {
		t.Fatalf("client saw %q", frags)
	}
	kinds := []string{}
	for _, a := range st.Response().Attempts {
		kinds = append(kinds, a.Model+":"+a.Outcome+":"+a.Kind)
	}
	want := []string{"a/m:error:overloaded", "a/m:error:stream_broken", "a/m:error:timeout", "b/m:ok:"}
	if !slices.Equal(kinds, want) {
		t.Fatalf("attempts = %v", kinds)
	}
}

func TestStreamBrokenAfterFirstTokenIsAnError(t *testing.T) {
	broken := &providers.Error{Provider: "a", Kind: providers.KindStreamBroken, Message: "stream ended without data: [DONE]"}
	cases := map[string]step{
		"cut":   {text: "one two three four", breakAt: 2, breakErr: broken},
		"stall": {text: "one two three four", stall: true, stallAt: 2},
	}
	for name, s := range cases {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, func(o *Options) { o.StreamIdleTimeout = 20 * time.Millisecond })
			h.a.on("m", s)
			r := userReq("hi", "a/m")
			r.FallbackModels = []string{"b/m"}
			st, err := h.g.Stream(context.Background(), Scope{Owner: "o"}, r)
			if err != nil {
				t.Fatal(err)
			}
			frags, err := drain(t, st)
			var se *StreamError
			if !errors.As(err, &se) || !errors.Is(err, ErrStreamFailed) {
				t.Fatalf("err = %v, want *StreamError", err)
			}
			if len(frags) != 2 || st.Response() != nil {
				t.Fatalf("frags %q, final %v", frags, st.Response())
			}
			wantKind := map[string]string{"cut": "stream_broken", "stall": "timeout"}[name]
			if se.Kind != wantKind {
				t.Fatalf("kind = %s, want %s", se.Kind, wantKind)
			}
			if h.b.callCount("m") != 0 {
				t.Fatal("fell over after the first token")
			}
			if es, _ := h.store.List(context.Background(), store.Messages, store.ListOptions{}); len(es) != 0 {
				t.Fatalf("a failed stream stored %d messages", len(es))
			}
		})
	}
}

func TestStreamAllFailedBeforeFirstToken(t *testing.T) {
	h := newHarness(t, nil)
	h.a.on("m", step{err: upstreamErr(providers.KindAuth, 401, 0)})
	_, err := h.g.Stream(context.Background(), Scope{}, userReq("hi", "a/m"))
	var af *AllFailedError
	if !errors.As(err, &af) || len(af.Attempts) != 1 {
		t.Fatalf("err = %v", err)
	}
}

func TestStreamClientCancel(t *testing.T) {
	h := newHarness(t, nil)
	h.a.on("m", step{text: "one two three", stall: true, stallAt: 1})
	ctx, cancel := context.WithCancel(context.Background())
	st, err := h.g.Stream(ctx, Scope{}, userReq("hi", "a/m"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Recv(); err != nil {
		t.Fatal(err)
	}
	go func() { time.Sleep(5 * time.Millisecond); cancel() }()
	_, err = st.Recv()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	h.a.mu.Lock()
	defer h.a.mu.Unlock()
	if h.a.canceled != 1 {
		t.Fatalf("upstream not cancelled")
	}
}

// sseEvent is one parsed server-sent event.
type sseEvent struct {
	name string
	data string
}

func parseSSE(t *testing.T, body string) []sseEvent {
	t.Helper()
	var out []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			out = append(out, cur)
			cur = sseEvent{}
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.data = strings.TrimPrefix(line, "data: ")
		default:
			t.Fatalf("unexpected line %q", line)
		}
	}
	if cur != (sseEvent{}) {
		t.Fatalf("unterminated event %+v", cur)
	}
	return out
}

func TestWriteStreamFraming(t *testing.T) {
	h := newHarness(t, nil)
	h.a.on("m", step{text: "Hi there", usage: providers.Usage{PromptTokens: 2, CompletionTokens: 2}})
	st, err := h.g.Stream(context.Background(), Scope{}, userReq("hi", "a/m"))
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	if err := WriteStream(rec, st); err != nil {
		t.Fatal(err)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	evs := parseSSE(t, rec.Body.String())
	if len(evs) != 4 || evs[3].data != "[DONE]" {
		t.Fatalf("events = %+v", evs)
	}
	var c Chunk
	if err := json.Unmarshal([]byte(evs[0].data), &c); err != nil || c.Text != "Hi" || c.Type != "text" || c.Provider != "a" {
		t.Fatalf("chunk %+v %v", c, err)
	}
	var final map[string]any
	if err := json.Unmarshal([]byte(evs[2].data), &final); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"provider", "model", "responseMessageId", "message", "conversationId", "conversationTitle", "usage", "latency", "ttft", "attempts"} {
		if _, ok := final[k]; !ok {
			t.Errorf("final event lacks %q", k)
		}
	}
	if final["type"] != "text" || final["final"] != true || final["usage"].(map[string]any)["totalTokens"] != 4.0 {
		t.Fatalf("final = %v", final)
	}
	// Every payload has a text (the final one empty), so joining them reads the answer.
	joined := ""
	for _, ev := range evs[:3] {
		var m map[string]any
		_ = json.Unmarshal([]byte(ev.data), &m)
		text, ok := m["text"].(string)
		if !ok {
			t.Fatalf("event without text: %s", ev.data)
		}
		joined += text
	}
	if joined != "Hi there" {
		t.Errorf("joined text %q", joined)
	}

	// A failure after the first fragment ends with an error event and no [DONE].
	h.a.on("m", step{text: "one two three", breakAt: 1, breakErr: &providers.Error{Kind: providers.KindStreamBroken, Message: "cut"}})
	st, err = h.g.Stream(context.Background(), Scope{}, userReq("hi", "a/m"))
	if err != nil {
		t.Fatal(err)
	}
	rec = httptest.NewRecorder()
	if err := WriteStream(rec, st); !errors.Is(err, ErrStreamFailed) {
		t.Fatalf("err = %v", err)
	}
	evs = parseSSE(t, rec.Body.String())
	last := evs[len(evs)-1]
	if len(evs) != 2 || last.name != "error" || strings.Contains(rec.Body.String(), "[DONE]") {
		t.Fatalf("events = %+v", evs)
	}
	var ev StreamErrorEvent
	if !strings.Contains(last.data, `"text":""`) {
		t.Errorf("error event without an empty text: %s", last.data)
	}
	if err := json.Unmarshal([]byte(last.data), &ev); err != nil || ev.Type != "text" || ev.Text != "" || ev.Error != "Stream Error" || !strings.Contains(ev.Message, "stream_broken") || len(ev.Attempts) != 1 {
		t.Fatalf("error event %+v %v", ev, err)
	}
}

// failingWriter is a ResponseWriter whose client goes away after the first write.
type failingWriter struct {
	*httptest.ResponseRecorder
	writes int
}

func (f *failingWriter) Write(b []byte) (int, error) {
	f.writes++
	if f.writes > 1 {
		return 0, errors.New("client went away")
	}
	return f.ResponseRecorder.Write(b)
}

func TestWriteStreamStopsUpstreamWhenClientLeaves(t *testing.T) {
	h := newHarness(t, nil)
	h.a.on("m", step{text: "one two three four five"})
	for _, openai := range []bool{false, true} {
		st, err := h.g.Stream(context.Background(), Scope{}, userReq("hi", "a/m"))
		if err != nil {
			t.Fatal(err)
		}
		w := &failingWriter{ResponseRecorder: httptest.NewRecorder()}
		if openai {
			err = WriteOpenAIStream(w, st, false)
		} else {
			err = WriteStream(w, st)
		}
		if err == nil || !strings.Contains(err.Error(), "client went away") {
			t.Fatalf("openai=%v: err = %v", openai, err)
		}
	}
	// Both upstream calls were cancelled mid-answer when the writer gave up.
	h.a.mu.Lock()
	defer h.a.mu.Unlock()
	if len(h.a.streams) != 2 {
		t.Fatalf("%d upstream streams, want 2", len(h.a.streams))
	}
	for i, fs := range h.a.streams {
		if fs.ctx.Err() == nil || fs.done {
			t.Errorf("stream %d: ctx err %v, read to the end %v; want cancelled mid-answer", i, fs.ctx.Err(), fs.done)
		}
	}
}
