package completions

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// scriptedN is a provider whose k-th call (1-based, in arrival order) answers per fn
// (review 10b's).
type scriptedN struct {
	calls atomic.Int32
	fn    func(ctx context.Context, k int, req *providers.Request) (*providers.Response, error)
}

func (s *scriptedN) Name() string { return "s" }
func (s *scriptedN) Complete(ctx context.Context, req *providers.Request) (*providers.Response, error) {
	return s.fn(ctx, int(s.calls.Add(1)), req)
}
func (s *scriptedN) Stream(context.Context, *providers.Request) (providers.Stream, error) {
	return nil, errors.New("not streamed")
}

// TestCompleteNKeepsPaidAnswers: n choices are n requests at once; one failing after its
// retries leaves the others' answers (paid for) as the choices, with its failure reported,
// rather than throwing them away; all failing is the first failure.
func TestCompleteNKeepsPaidAnswers(t *testing.T) {
	p := &scriptedN{fn: func(_ context.Context, k int, req *providers.Request) (*providers.Response, error) {
		if k == 3 {
			time.Sleep(50 * time.Millisecond) // after the others were answered
			return nil, &providers.Error{Provider: "s", Model: req.Model, Kind: providers.KindBadRequest, StatusCode: 400, Message: "no"}
		}
		return &providers.Response{Text: "ok", Model: req.Model, Usage: providers.Usage{PromptTokens: 10, CompletionTokens: 10}}, nil
	}}
	h := newHarness(t, func(o *Options) { o.Providers = fakeRegistry{"a": p} })
	r := userReq("hi", "a/m")
	r.ephemeral = true
	answers, failed, err := h.g.CompleteN(context.Background(), Scope{}, r, 3)
	if err != nil || len(answers) != 2 || len(failed) != 1 {
		t.Fatalf("answers %d, failed %v, err %v", len(answers), failed, err)
	}
	complete := 0
	for _, e := range h.ledger.all() {
		if e.Complete {
			complete++
		}
	}
	if complete != 2 {
		t.Errorf("%d complete ledger entries, want the 2 answers returned", complete)
	}
	p.fn = func(_ context.Context, _ int, req *providers.Request) (*providers.Response, error) {
		return nil, &providers.Error{Provider: "s", Model: req.Model, Kind: providers.KindBadRequest, StatusCode: 400, Message: "no"}
	}
	if answers, _, err := h.g.CompleteN(context.Background(), Scope{}, r, 3); err == nil || answers != nil {
		t.Errorf("all failing: %v %v", answers, err)
	}
}

// TestCompleteNRefusals: several choices are not taken for a stored conversation (it has
// one next turn). With a budget each choice is a request of its own: review 10b found n
// requests at once overspending a token cap (each capped to all that was left), and review
// 11d choices timing out one behind the other in the spend gate; now the choices are
// admitted together, take a call each (a call bound of 2 gives 2 of 4) and share the tokens
// left (at most 100 / 4 = 25 each: at most 2 × 35 tokens, within the cap).
func TestCompleteNRefusals(t *testing.T) {
	p := &scriptedN{fn: func(_ context.Context, _ int, req *providers.Request) (*providers.Response, error) {
		return &providers.Response{Text: "x", Model: req.Model, Usage: providers.Usage{PromptTokens: 10, CompletionTokens: req.MaxTokens}}, nil
	}}
	h := newHarness(t, func(o *Options) { o.Providers = fakeRegistry{"a": p} })
	var ve *ValidationError
	if _, _, err := h.g.CompleteN(context.Background(), Scope{Owner: "k"}, userReq("pick a number", "a/m"), 3); !errors.As(err, &ve) || ve.Field != "n" {
		t.Errorf("stored request: %v", err)
	}
	b := NewBudget(BudgetLimits{MaxTokens: 100, MaxCalls: 2})
	r := userReq("hi", "a/m")
	r.ephemeral = true
	answers, failed, err := h.g.CompleteN(context.Background(), Scope{Budget: b}, r, 4)
	if err != nil || len(answers) != 2 || len(failed) != 2 {
		t.Fatalf("with a budget: %d answers, %d failed, %v", len(answers), len(failed), err)
	}
	for _, f := range failed {
		if !errors.Is(f, ErrBudgetExceeded) {
			t.Errorf("a choice beyond the budget: %v", f)
		}
	}
	// Each choice gets a quarter of what is left when it takes its call: 35 tokens, or fewer
	// when the other was charged first.
	if used := b.Used(context.Background()); used.Calls != 2 || used.Tokens > 70 || p.calls.Load() != 2 {
		t.Errorf("used %+v, %d upstream calls; want two calls within the cap of 100 (at most 35 tokens each)", used, p.calls.Load())
	}
}
