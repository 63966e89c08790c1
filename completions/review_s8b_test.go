package completions

import (
	"context"
	"encoding/json"
	"io"
	"reflect"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// s8bSlowThinker streams reasoning fragments every gap, n of them, then its answer: a
// model such as DeepSeek's reasoner, which reasons whether asked or not.
type s8bSlowThinker struct {
	gap time.Duration
	n   int
}

func (s8bSlowThinker) Name() string { return "c" }

func (s8bSlowThinker) Complete(context.Context, *providers.Request) (*providers.Response, error) {
	return nil, &providers.Error{Provider: "c", Kind: providers.KindBadRequest, Message: "stream only"}
}

func (p s8bSlowThinker) Stream(ctx context.Context, _ *providers.Request) (providers.Stream, error) {
	return &s8bSlowThinkerStream{ctx: ctx, p: p}, nil
}

type s8bSlowThinkerStream struct {
	ctx context.Context
	p   s8bSlowThinker
	i   int
}

func (s *s8bSlowThinkerStream) Recv() (providers.Chunk, error) {
	s.i++
	switch {
	case s.i <= s.p.n:
		select {
		case <-time.After(s.p.gap):
		case <-s.ctx.Done():
			return providers.Chunk{}, &providers.Error{Provider: "c", Kind: providers.KindConnection, Err: s.ctx.Err()}
		}
		return providers.Chunk{Reasoning: &providers.ReasoningDelta{Text: "thinking… "}}, nil
	case s.i == s.p.n+1:
		return providers.Chunk{Text: "Paris."}, nil
	case s.i == s.p.n+2:
		return providers.Chunk{FinishReason: "stop", Usage: &providers.Usage{PromptTokens: 5, CompletionTokens: 9}}, nil
	}
	return providers.Chunk{}, io.EOF
}

func (s *s8bSlowThinkerStream) Close() error { return nil }

// TestS8bHiddenReasoningIsNotSilence: a /v1/messages (or /v1/responses) stream that asked
// for no reasoning now hides the reasoning a model sends unasked — but the model is
// streaming all along. openAttempt skips those chunks without stopping the first-token
// timer, so a model that reasons (visibly alive, a fragment every 100 ms) for longer than
// first_token_timeout is cut as "no first token". The same request on chat completions
// (reasoning shown) succeeds.
func TestS8bHiddenReasoningIsNotSilence(t *testing.T) {
	h := newHarness(t, func(o *Options) {
		o.Providers.(fakeRegistry)["c"] = s8bSlowThinker{gap: 100 * time.Millisecond, n: 6}
		o.FirstTokenTimeout = 350 * time.Millisecond
		o.StreamIdleTimeout = 2 * time.Second
	})
	read := func(req *Request) (string, error) {
		st, err := h.g.Stream(context.Background(), Scope{Owner: "o"}, req)
		if err != nil {
			return "", err
		}
		defer st.Close()
		for {
			if _, err := st.Recv(); err == io.EOF {
				return st.Response().Text(), nil
			} else if err != nil {
				return "", err
			}
		}
	}
	chat, err := chatBody(t, `{"model":"c/m","stream":true,"messages":[{"role":"user","content":"Capital of France?"}]}`)
	if err != nil {
		t.Fatal(err)
	}
	if text, err := read(chat); err != nil || text != "Paris." {
		t.Fatalf("chat completions (reasoning shown): %q, %v", text, err)
	}
	_, mc, err := messagesRequest(t, `{"model":"c/m","max_tokens":100,"stream":true,"messages":[{"role":"user","content":"Capital of France?"}]}`)
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := mc.ToRequest()
	if err != nil {
		t.Fatal(err)
	}
	if text, err := read(msgs); err != nil || text != "Paris." {
		t.Errorf("/v1/messages (reasoning hidden): %q, %v — a model streaming its reasoning was cut by the first-token timeout", text, err)
	}
}

// TestS8bReasoningContentWithoutBlocks: a client that sends Claude's tool-calling turn back
// with the reasoning_content it was answered with but without thinking_blocks (clients that
// keep DeepSeek's reasoning_content, not LiteLLM's blocks) is still "a client that sends the
// turn back without them" (README): the gateway kept the signed blocks. But prepare consults
// the reasoning cache only when the message has no reasoning at all, so the unsigned text
// wins and Claude gets no signed block (the loop goes on without thinking).
func TestS8bReasoningContentWithoutBlocks(t *testing.T) {
	h := newHarness(t, nil)
	call := providers.ToolCall{ID: "toolu_rc", Name: "w", Arguments: "{}"}
	h.a.on("claude", step{call: &call, argPieces: []string{"{}"}, reasoning: claudeThought}, step{text: "Sunny."})
	first, err := chatBody(t, `{"model":"a/claude","reasoning_effort":"high","messages":[{"role":"user","content":"Weather?"}],
		"tools":[{"type":"function","function":{"name":"w","parameters":{"type":"object"}}}]}`)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := h.g.Complete(context.Background(), Scope{Owner: "o"}, first)
	if err != nil {
		t.Fatal(err)
	}
	shown := reasoningText(resp.Reasoning) // the reasoning_content the client was answered with
	body, _ := json.Marshal(shown)
	next, err := chatBody(t, `{"model":"a/claude","reasoning_effort":"high","messages":[{"role":"user","content":"Weather?"},
		{"role":"assistant","content":null,"reasoning_content":`+string(body)+`,"tool_calls":[{"id":"toolu_rc","type":"function","function":{"name":"w","arguments":"{}"}}]},
		{"role":"tool","tool_call_id":"toolu_rc","content":"sunny"}],
		"tools":[{"type":"function","function":{"name":"w","parameters":{"type":"object"}}}]}`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.g.Complete(context.Background(), Scope{Owner: "o"}, next); err != nil {
		t.Fatal(err)
	}
	if got := h.a.lastRequest().Messages[1].Reasoning; !reflect.DeepEqual(got, claudeThought) {
		t.Errorf("the turn went back with reasoning %+v, want the kept signed blocks %+v", got, claudeThought)
	}
}

// TestS8bResponsesSummaryAsksForReasoning: on /v1/responses, reasoning {"summary":"auto"}
// asks for reasoning summaries (OpenAI's API returns reasoning items for it), yet without an
// effort the request counts as asking for none and the model's reasoning is dropped.
func TestS8bResponsesSummaryAsksForReasoning(t *testing.T) {
	h := newHarness(t, nil)
	h.a.on("m", step{text: "Hi there", reasoning: []providers.ReasoningBlock{{Text: "thoughts"}}})
	var rr ResponsesRequest
	if err := json.Unmarshal([]byte(`{"model":"a/m","input":"hi","reasoning":{"summary":"auto"}}`), &rr); err != nil {
		t.Fatal(err)
	}
	rc, err := rr.ToChatRequest()
	if err != nil {
		t.Fatal(err)
	}
	req, err := rc.ToRequest()
	if err != nil {
		t.Fatal(err)
	}
	resp, err := h.g.Complete(context.Background(), Scope{Owner: "o"}, req)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Reasoning) == 0 {
		t.Error(`reasoning {"summary":"auto"}: the model's reasoning was left out of the answer`)
	}
}

// TestS8bResolverKeepsUnaskedReasoning: the gateway seen as a providers.Provider (Resolver,
// for library code written against providers) used to hand back the upstream's Reasoning
// as a direct call to the provider does. Its requests are ephemeral but do not set
// unaskedReasoning, so since "reasoning of unasked models shown only on chat completions"
// the reasoning a model sends unasked (DeepSeek's) is silently dropped from
// providers.Response.Reasoning — a surface the change did not mean to touch.
func TestS8bResolverKeepsUnaskedReasoning(t *testing.T) {
	h := newHarness(t, nil)
	thought := []providers.ReasoningBlock{{Text: "unasked thoughts"}}
	h.a.on("r1", step{text: "42", reasoning: thought})
	p, model, err := Resolver{Gateway: h.g, Scope: Scope{Owner: "k1"}}.Resolve("a/r1")
	if err != nil {
		t.Fatal(err)
	}
	direct, _ := h.a.Complete(context.Background(), &providers.Request{Model: "r1", Messages: []providers.Message{{Role: "user", Content: "q"}}})
	resp, err := p.Complete(context.Background(), &providers.Request{Model: model, Messages: []providers.Message{{Role: "user", Content: "q"}}})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(resp.Reasoning, direct.Reasoning) {
		t.Errorf("through the gateway: reasoning %+v; the provider itself returns %+v", resp.Reasoning, direct.Reasoning)
	}
}
