package completions

// Review 11d: with a budget, CompleteN's choices go through the spend gate, which sends a
// budget's requests one at a time until it has spent anything. A key's first n-choice
// request (a fresh optimization job key, a new virtual key) therefore runs its choices
// one after the other, yet every choice keeps the deadline of the one request
// (Scope.Received + RequestTimeout): the wait in the gate is not bounded by it, and the
// later choices start with the time the first used already gone. Choices that take over
// half the request timeout each come back as one answer and n-1 timeouts, each of which
// still took a call from the budget.

import (
	"context"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

func TestReview11dCompleteNBudgetChoicesShareOneDeadline(t *testing.T) {
	p := &scriptedN{fn: func(ctx context.Context, _ int, req *providers.Request) (*providers.Response, error) {
		select {
		case <-time.After(300 * time.Millisecond):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return &providers.Response{Text: "x", Model: req.Model, Usage: providers.Usage{PromptTokens: 10, CompletionTokens: 10}}, nil
	}}
	h := newHarness(t, func(o *Options) {
		o.Providers = fakeRegistry{"a": p}
		o.RequestTimeout = 500 * time.Millisecond
	})
	ctx := context.Background()
	run := func(scope Scope) (int, []error, time.Duration) {
		r := userReq("hi", "a/m")
		r.ephemeral = true
		scope.Received = time.Now() // as the server sets it
		start := time.Now()
		answers, failed, _ := h.g.CompleteN(ctx, scope, r, 3)
		return len(answers), failed, time.Since(start)
	}
	if n, failed, d := run(Scope{}); n != 3 {
		t.Fatalf("without a budget: %d answers in %s, failed %v", n, d, failed)
	}
	b := NewBudget(BudgetLimits{MaxTokens: 1_000_000, MaxCalls: 100})
	n, failed, d := run(Scope{Budget: b})
	if n != 3 {
		t.Errorf("with a budget that can pay for all of them: %d of 3 answers in %s (each takes 300ms of a 500ms request timeout); failed: %v", n, d, failed)
	}
	t.Logf("budget used: %+v", b.Used(ctx))
}
