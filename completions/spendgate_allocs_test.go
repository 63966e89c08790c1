package completions

import (
	"context"
	"testing"

	"github.com/switchyard-ai/switchyard/store/memstore"
)

// A request alone in a budget's spend gate costs two allocations to let in and count out
// (its ticket, holding the key's state, and the release), and its release stays
// idempotent: a second call counts nothing out.
func TestSpendGateAdmitsAloneInTwoAllocations(t *testing.T) {
	h := newHarness(t, nil)
	b := NewBudget(BudgetLimits{MaxTokens: 1000})
	ctx := context.Background()
	key := gateKey(b)
	n := testing.AllocsPerRun(200, func() {
		rel, err := h.g.spend.admitLocal(ctx, b, false)
		if err != nil {
			t.Fatal(err)
		}
		rel()
	})
	// Used's copy is the rest: measured without the gate.
	base := testing.AllocsPerRun(200, func() { _, _ = gateKey(b), b.Used(ctx) })
	if n-base > 2 {
		t.Errorf("admitting and releasing a request alone: %v allocations beyond the key and usage (%v), want 2", n-base, base)
	}

	first, err := h.g.spend.admitLocal(ctx, b, false)
	if err != nil {
		t.Fatal(err)
	}
	second, err := h.g.spend.admitLocal(ctx, b, true)
	if err != nil {
		t.Fatal(err)
	}
	first()
	first()
	if got := h.g.spend.inflight(key); got != 1 {
		t.Fatalf("in flight after the first request's release called twice: %d, want 1", got)
	}
	second()
	if got := h.g.spend.inflight(key); got != 0 {
		t.Fatalf("in flight after both releases: %d, want 0", got)
	}
}

// TestGateKeyOfStoredAccountAllocatesNothing: a request alone in the spend gate of a
// stored account costs what one of an account kept in memory does (two allocations): the
// gate's key of a stored account (its id) is a plain struct, where boxing the id in an
// interface cost one more on every request of a key with a budget. Every Budget loaded on
// one account shares the key; budgets kept in memory each have their own.
func TestGateKeyOfStoredAccountAllocatesNothing(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	b, err := CreateSharedBudget(ctx, st, "acct-1", BudgetLimits{MaxTokens: 1000})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, nil)
	n := testing.AllocsPerRun(200, func() {
		rel, err := h.g.spend.admitLocal(ctx, b, false)
		if err != nil {
			t.Fatal(err)
		}
		rel()
	})
	base := testing.AllocsPerRun(200, func() { _ = b.Used(ctx) }) // the store's copy
	if n-base > 2 {
		t.Errorf("admitting and releasing a request of a stored account alone: %v allocations beyond the usage read (%v), want 2", n-base, base)
	}
	again, err := LoadSharedBudget(ctx, st, "acct-1")
	if err != nil {
		t.Fatal(err)
	}
	m1, m2 := NewBudget(BudgetLimits{MaxTokens: 1}), NewBudget(BudgetLimits{MaxTokens: 1})
	if gateKey(again) != gateKey(b) || gateKey(m1) == gateKey(m2) || gateKey(m1) == gateKey(b) {
		t.Error("gate keys: want one per stored account, one per budget kept in memory")
	}
	rel, err := h.g.spend.admitLocal(ctx, b, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := h.g.spend.inflight(gateKey(again)); got != 1 {
		t.Fatalf("in flight on the account, asked through another Budget loaded on it: %d, want 1", got)
	}
	rel()
}
