package completions

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// silentReasoner is a scripted provider whose model reasons silently: its stream says so
// (a ReasoningDelta that Started) when marker is set, is silent for think, then answers.
type silentReasoner struct {
	marker bool
	think  time.Duration
}

func (silentReasoner) Name() string { return "r" }

func (s silentReasoner) Complete(ctx context.Context, req *providers.Request) (*providers.Response, error) {
	return &providers.Response{Text: "Answer.", FinishReason: "stop"}, nil
}

func (s silentReasoner) Stream(ctx context.Context, req *providers.Request) (providers.Stream, error) {
	return &silentStream{ctx: ctx, marker: s.marker, think: s.think}, nil
}

type silentStream struct {
	ctx    context.Context
	marker bool
	think  time.Duration
	step   int
}

func (s *silentStream) Recv() (providers.Chunk, error) {
	s.step++
	switch {
	case s.step == 1 && s.marker:
		return providers.Chunk{Reasoning: &providers.ReasoningDelta{}}, nil
	case s.step <= 2:
		s.step = 2
		select {
		case <-time.After(s.think):
		case <-s.ctx.Done():
			return providers.Chunk{}, &providers.Error{Provider: "r", Kind: providers.KindTimeout, Err: s.ctx.Err()}
		}
		return providers.Chunk{Text: "Answer."}, nil
	case s.step == 3:
		return providers.Chunk{FinishReason: "stop", Usage: &providers.Usage{PromptTokens: 3, CompletionTokens: 2}}, nil
	}
	return providers.Chunk{}, io.EOF
}

func (s *silentStream) Close() error { return nil }

// TestSilentReasoningIsNotAStall: a model that says it reasons (OpenAI's reasoning models,
// whose streams show nothing while they do) may be silent past the first-token and idle
// timeouts, up to what a non-streamed call may take, and answers; the same silence without
// that word, or under a caller's own first_token_timeout, is a stall.
func TestSilentReasoningIsNotAStall(t *testing.T) {
	const think = 400 * time.Millisecond
	for _, tc := range []struct {
		name     string
		marker   bool
		ownLimit bool
		answers  bool
	}{
		{"says it reasons", true, false, true},
		{"silent without a word", false, false, false},
		{"says it reasons, the caller's own first-token limit", true, true, false},
	} {
		g, err := New(Options{Providers: fakeRegistry{"r": silentReasoner{marker: tc.marker, think: think}}, Prices: fakePrices{},
			DefaultMaxRetries: -1, FirstTokenTimeout: 100 * time.Millisecond, StreamIdleTimeout: 100 * time.Millisecond,
			AttemptTimeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		req := userReq("Think hard.", "r/o3")
		req.ephemeral = true
		if tc.ownLimit {
			limit := 0.1
			req.FirstTokenTimeout = &limit
		}
		text, err := "", error(nil)
		st, err := g.Stream(context.Background(), Scope{}, req)
		if err == nil {
			for {
				c, rerr := st.Recv()
				if rerr != nil {
					if rerr != io.EOF {
						err = rerr
					}
					break
				}
				if c.Reasoning != nil {
					t.Errorf("%s: the reasoning marker was relayed: %+v", tc.name, c.Reasoning)
				}
				text += c.Text
			}
			st.Close()
		}
		if answered := err == nil && text == "Answer."; answered != tc.answers {
			t.Errorf("%s: answered %v (text %q, err %v), want %v", tc.name, answered, text, err, tc.answers)
		}
	}
}
