package completions

// Review 11c: the spend gate's mean cost per answer counted charges, not requests (mended:
// the mean is over finished requests, Calls less those in flight).

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store"
)

// A hedged request is charged once for its winner and once per cancelled loser, so
// Budget.Charged counts 2 for one request and the gate's "mean cost per answer" is half
// what a request costs: a burst is admitted about twice over the bound.
func TestReview11cHedgedRequestCountsOneAnswer(t *testing.T) {
	h := newHarness(t, nil)
	h.a.on("slow", step{delay: 300 * time.Millisecond, text: "late", usage: providers.Usage{PromptTokens: 100, CompletionTokens: 100}})
	h.b.on("fast", step{text: "hello", usage: providers.Usage{PromptTokens: 100, CompletionTokens: 100}})
	const max = 1000
	b := NewBudget(BudgetLimits{MaxTokens: max})
	r := userReq("hi", "a/slow")
	r.FallbackModels = []string{"b/fast"}
	r.FaultPolicy.HedgeAfter = ptr(0.02)
	ctx := context.Background()
	if _, err := h.g.Complete(ctx, Scope{Budget: b}, r); err != nil {
		t.Fatal(err)
	}
	u := b.Used(ctx)
	t.Logf("after one hedged request: %+v", u)
	if u.Calls != 1 {
		t.Errorf("one request (hedged) counted as %d", u.Calls)
	}
	// What the gate admits at once now: it should stop when spent + n*(cost of a request)
	// reaches the bound.
	want := 0
	for n := int64(0); u.Tokens+n*u.Tokens < max; n++ {
		want++
	}
	if n := admitAtOnce(t, h.g, b, 50, false); n > want {
		t.Errorf("%d requests admitted at once; %d tokens spent at %d a request leave room for %d", n, u.Tokens, u.Tokens, want)
	}
}

// admitAtOnce admits requests of b's into g's spend gate until it refuses one (at most
// limit), each taking its call when reserve says so (as prepare does), then releases them
// all; it returns how many were in flight together.
func admitAtOnce(t *testing.T, g *Gateway, b *Budget, limit int, reserve bool) int {
	t.Helper()
	ctx := context.Background()
	var rels []func()
	defer func() {
		for _, rel := range rels {
			rel()
		}
	}()
	for range limit {
		rel, err := g.spend.admit(ctx, b, false)
		if errors.Is(err, ErrBudgetExceeded) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		rels = append(rels, rel)
		if reserve {
			if _, err := b.reserveCall(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	return len(rels)
}

// A stream its caller closes after the first fragments is counted out of the gate (its
// release runs) but never charged: the tokens the upstream produced (and billed) are not
// on the key's budget, so neither the bound nor the gate's projection sees them.
func TestReview11cStreamClosedEarlyIsCharged(t *testing.T) {
	h := newHarness(t, nil)
	h.a.on("long", step{text: "one two three four five six seven eight", usage: providers.Usage{PromptTokens: 100, CompletionTokens: 100}})
	b := NewBudget(BudgetLimits{MaxTokens: 1000})
	ctx := context.Background()
	st, err := h.g.Stream(ctx, Scope{Budget: b}, userReq("hi", "a/long"))
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := st.Recv(); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	u := b.Used(ctx)
	if u.Tokens == 0 {
		t.Errorf("a stream closed after 3 fragments charged nothing: %+v", u)
	}
	if n := len(h.ledger.all()); n == 0 {
		t.Errorf("nor recorded in the ledger")
	}
}

// A shared budget stored before Charged existed (every virtual key issued before this
// change: its record has spend but no "charged") takes the mean from all its past spend
// over the answers charged since the upgrade: after one new answer the mean is the whole
// history's cost, and a key that spent half its bound is refused (429) a second request
// in flight although it has room for a hundred.
func TestReview11cPreexistingSpendDoesNotStarveTheGate(t *testing.T) {
	h := newHarness(t, nil)
	ctx := context.Background()
	// The record as the previous release wrote it: 100 answers, 5000 tokens, no "charged".
	if err := store.PutJSON(ctx, h.store, store.Budgets, "key/vk_old", sharedBudget{
		Limits: BudgetLimits{MaxTokens: 10000}, Used: BudgetUsage{Calls: 100, Tokens: 5000}}); err != nil {
		t.Fatal(err)
	}
	b, err := LoadSharedBudget(ctx, h.store, "key/vk_old")
	if err != nil {
		t.Fatal(err)
	}
	h.a.on("m", step{text: "hi", usage: providers.Usage{PromptTokens: 25, CompletionTokens: 25}})
	if _, err := h.g.Complete(ctx, Scope{Budget: b}, userReq("hi", "a/m")); err != nil { // the first answer after the upgrade: 50 tokens
		t.Fatal(err)
	}
	t.Logf("usage: %+v", b.Used(ctx))
	r1, err := h.g.spend.admit(ctx, b, false)
	if err != nil {
		t.Fatal(err)
	}
	defer r1()
	r2, err := h.g.spend.admit(ctx, b, false)
	if err != nil {
		t.Fatalf("second request in flight refused with 4950 of 10000 tokens left at ~50 a request: %v", err)
	}
	r2()
}
