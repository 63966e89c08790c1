package completions

// Review 11d: the spend gate's mean is "spent / (Calls - in flight)", and Calls counts
// every request that took a call, the ones that failed and cost nothing included (a 429
// after its retries, an outage, a timeout). A key whose earlier requests failed is taken to
// cost a fraction of what its answers cost, and a burst is admitted many times over the
// bound, which the gate exists to prevent.

import (
	"context"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

func TestReview11dFailedRequestsDiluteTheGatesMean(t *testing.T) {
	h := newHarness(t, nil)
	const max = 1000
	b := NewBudget(BudgetLimits{MaxTokens: max})
	ctx := context.Background()
	// 9 requests fail upstream (nothing billed, nothing charged), then one is answered
	// for 100 tokens.
	h.a.on("m", step{err: upstreamErr(providers.KindBadRequest, 400, 0)})
	for range 9 {
		if _, err := h.g.Complete(ctx, Scope{Budget: b}, userReq("hi", "a/m")); err == nil {
			t.Fatal("want a failure")
		}
	}
	h.a.on("m", step{text: "hello", usage: providers.Usage{PromptTokens: 50, CompletionTokens: 50}})
	if _, err := h.g.Complete(ctx, Scope{Budget: b}, userReq("hi", "a/m")); err != nil {
		t.Fatal(err)
	}
	u := b.Used(ctx)
	t.Logf("usage: %+v", u)
	// A request costs 100 tokens; 900 are left: at most 9 may be in flight at once.
	want := 0
	for n := int64(0); u.Tokens+n*100 < max; n++ {
		want++
	}
	if n := admitAtOnce(t, h.g, b, 200, true); n > want {
		t.Errorf("%d requests admitted at once at ~100 tokens each with %d of %d tokens left (room for %d): the mean counts the 9 failed requests", n, max-u.Tokens, max, want)
	}
}
