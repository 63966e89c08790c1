package completions

import (
	"context"
	"encoding/json"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// s8Prefill makes a fake provider continue a partial answer (providers.Prefiller).
type s8Prefill struct{ *fakeProvider }

func (s8Prefill) SupportsPrefill() bool { return true }

// s8SlowFail is a provider whose calls fail with a server error after delay.
type s8SlowFail struct {
	delay time.Duration
}

func (s8SlowFail) Name() string { return "c" }

func (p s8SlowFail) Complete(ctx context.Context, req *providers.Request) (*providers.Response, error) {
	select {
	case <-time.After(p.delay):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return nil, &providers.Error{Provider: "c", Model: req.Model, Kind: providers.KindOverloaded, StatusCode: 503, Message: "scripted 503"}
}

func (p s8SlowFail) Stream(ctx context.Context, req *providers.Request) (providers.Stream, error) {
	_, err := p.Complete(ctx, req)
	return nil, err
}

// s8ThinkThenBreak streams a reasoning fragment, then breaks before any text.
type s8ThinkThenBreak struct{}

func (s8ThinkThenBreak) Name() string { return "c" }

func (s8ThinkThenBreak) Complete(context.Context, *providers.Request) (*providers.Response, error) {
	return nil, &providers.Error{Provider: "c", Kind: providers.KindStreamBroken, Message: "scripted"}
}

func (s8ThinkThenBreak) Stream(context.Context, *providers.Request) (providers.Stream, error) {
	return &s8BreakStream{}, nil
}

type s8BreakStream struct{ n int }

func (s *s8BreakStream) Recv() (providers.Chunk, error) {
	s.n++
	if s.n == 1 {
		return providers.Chunk{Reasoning: &providers.ReasoningDelta{Text: "Let me think about that."}}, nil
	}
	return providers.Chunk{}, &providers.Error{Provider: "c", Kind: providers.KindStreamBroken, Message: "connection reset mid-stream"}
}

func (s *s8BreakStream) Close() error { return nil }

// TestS8LatencyDeadlineCutIsNotAModelTimeout: when the request's own deadline runs out
// while a fallback model has had only a few milliseconds (the first model spent the rest),
// the fallback is recorded for latency routing as if it had stalled for the whole
// first-token timeout (2 s here): one impatient request makes a fast model look slow for
// everyone (the README keeps such timeouts out of the circuit breaker for that reason).
func TestS8LatencyDeadlineCutIsNotAModelTimeout(t *testing.T) {
	h := newHarness(t, func(o *Options) {
		reg := o.Providers.(fakeRegistry)
		reg["c"] = s8SlowFail{delay: 200 * time.Millisecond}
	})
	// b/second has answered quickly so far: 10 ms per output token.
	h.g.latency.answered("b/second", 0, 100*time.Millisecond, 10)
	h.b.on("second", step{text: "hello", delay: time.Second, usage: providers.Usage{PromptTokens: 3, CompletionTokens: 10}})
	req := userReq("hi", "c/first")
	req.FallbackModels = []string{"b/second"}
	req.MaxRetries = intp(0)
	timeout := 0.35
	req.FaultPolicy.Timeout = &timeout
	_, err := h.g.Complete(context.Background(), Scope{Owner: "o"}, req)
	if err == nil {
		t.Fatal("want the request to run out of time")
	}
	f, ok := h.g.latency.figure("b/second", false)
	if !ok {
		t.Fatal("b/second not measured")
	}
	if f > 0.1 {
		t.Errorf("b/second, cut by the request's deadline after ~150 ms, now counts %.3f s per token (was 0.010): "+
			"recorded as a %v first-token timeout it never had", f, h.g.opts.FirstTokenTimeout)
	}
}

// TestS8ContinuationBillsBrokenReasoning: a stream that broke after a long reasoning and a
// little text, continued by another model, bills the broken attempt's estimated output by
// the text it streamed only: the hundreds of reasoning tokens it streamed (and the upstream
// bills) are lost from the attempt's usage, the request's usage and the budget.
func TestS8ContinuationBillsBrokenReasoning(t *testing.T) {
	h := newHarness(t, func(o *Options) {
		reg := o.Providers.(fakeRegistry)
		reg["b"] = s8Prefill{h0(o)}
	})
	thought := strings.TrimSpace(strings.Repeat("considering the options carefully ", 100)) // ~300 words
	h.a.on("m", step{text: "Hello there friend", reasoning: []providers.ReasoningBlock{{Text: thought}},
		breakAt: 1, breakErr: upstreamErr(providers.KindStreamBroken, 0, 0)})
	h.b.on("m", step{text: "there friend", usage: providers.Usage{PromptTokens: 10, CompletionTokens: 3}})
	req := userReq("Say hello", "a/m")
	req.Thinking = &providers.Thinking{} // a stream that shows reasoning
	req.FallbackModels = []string{"b/m"}
	st, err := h.g.Stream(context.Background(), Scope{Owner: "o"}, req)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var reasoning strings.Builder
	for {
		c, err := st.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if c.Type == EventReasoning {
			reasoning.WriteString(c.Reasoning.Text)
		}
	}
	resp := st.Response()
	if resp.Continued == nil {
		t.Fatalf("not continued: %+v", resp.Attempts)
	}
	if reasoning.String() != thought {
		t.Fatalf("reasoning streamed %q", reasoning.String())
	}
	broken := resp.Attempts[0].Usage
	if broken == nil {
		t.Fatalf("broken attempt has no usage: %+v", resp.Attempts)
	}
	minTokens := estimateTokens(len(thought)) / 2
	if broken.CompletionTokens < minTokens {
		t.Errorf("the broken attempt streamed %d characters of reasoning but is billed %d output tokens (want at least %d)",
			len(thought), broken.CompletionTokens, minTokens)
	}
	if resp.Usage.CompletionTokens < minTokens {
		t.Errorf("request usage %d output tokens, want at least %d", resp.Usage.CompletionTokens, minTokens)
	}
}

// h0 is the harness's b fake while the options are built (newHarness creates the fakes
// before calling tweak).
func h0(o *Options) *fakeProvider { return o.Providers.(fakeRegistry)["b"].(*fakeProvider) }

// TestS8NativeStreamReasoningThenBreakFallsOver: on the native stream, which never shows
// reasoning, a model that breaks while it is still reasoning has sent the client nothing;
// the README promises that a failure before the first fragment falls over to the next
// model silently. The gateway counts the hidden reasoning as the first fragment and ends
// the native stream with "event: error" and no text, although a fallback was ready.
func TestS8NativeStreamReasoningThenBreakFallsOver(t *testing.T) {
	h := newHarness(t, func(o *Options) {
		o.Providers.(fakeRegistry)["c"] = s8ThinkThenBreak{}
	})
	req := userReq("hi", "c/thinker")
	req.FallbackModels = []string{"b/m"}
	req.Stream = true
	st, err := h.g.Stream(context.Background(), Scope{Owner: "o"}, req)
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	werr := WriteStream(rec, st)
	body := rec.Body.String()
	if werr != nil || strings.Contains(body, "event: error") || !strings.Contains(body, "default answer from m") {
		t.Errorf("native client, shown nothing before the failure, got error %v and body:\n%s", werr, body)
	}
}

// s8Scripted streams chunks, then ends.
type s8Scripted struct{ chunks []providers.Chunk }

func (s8Scripted) Name() string { return "c" }

func (p s8Scripted) Complete(context.Context, *providers.Request) (*providers.Response, error) {
	return nil, &providers.Error{Provider: "c", Kind: providers.KindBadRequest, Message: "stream only"}
}

func (p s8Scripted) Stream(context.Context, *providers.Request) (providers.Stream, error) {
	return &s8ScriptedStream{chunks: p.chunks}, nil
}

type s8ScriptedStream struct{ chunks []providers.Chunk }

func (s *s8ScriptedStream) Recv() (providers.Chunk, error) {
	if len(s.chunks) == 0 {
		return providers.Chunk{}, io.EOF
	}
	c := s.chunks[0]
	s.chunks = s.chunks[1:]
	return c, nil
}

func (s *s8ScriptedStream) Close() error { return nil }

// TestS8ResponsesStreamRefusalAfterReasoning: a streamed /v1/responses answer that is a
// refusal gets its message (a refusal part) in response.completed from Response.Complete.
// Once reasoning was streamed first, the streamed items replace Complete's output and the
// refusal disappears: the client receives reasoning and a "completed" response with no
// message at all.
func TestS8ResponsesStreamRefusalAfterReasoning(t *testing.T) {
	h := newHarness(t, func(o *Options) {
		o.Providers.(fakeRegistry)["c"] = s8Scripted{chunks: []providers.Chunk{
			{Reasoning: &providers.ReasoningDelta{Text: "This asks for something I must decline."}},
			{Refusal: "I can't help with that."},
			{FinishReason: "stop", Usage: &providers.Usage{PromptTokens: 5, CompletionTokens: 12}},
		}}
	})
	evs := streamResponses(t, h.g, `{"model":"c/m","stream":true,"input":"Do the bad thing"}`)
	final, _ := json.Marshal(evs[len(evs)-1]["response"].(map[string]any)["output"])
	if !strings.Contains(string(final), `"refusal":"I can't help with that."`) {
		t.Errorf("response.completed output lacks the refusal: %s", final)
	}
	// Without the reasoning the same answer keeps its refusal.
	h2 := newHarness(t, func(o *Options) {
		o.Providers.(fakeRegistry)["c"] = s8Scripted{chunks: []providers.Chunk{
			{Refusal: "I can't help with that."},
			{FinishReason: "stop", Usage: &providers.Usage{PromptTokens: 5, CompletionTokens: 12}},
		}}
	})
	evs = streamResponses(t, h2.g, `{"model":"c/m","stream":true,"input":"Do the bad thing"}`)
	final, _ = json.Marshal(evs[len(evs)-1]["response"].(map[string]any)["output"])
	if !strings.Contains(string(final), `"refusal":"I can't help with that."`) {
		t.Errorf("control: response.completed output lacks the refusal: %s", final)
	}
}
