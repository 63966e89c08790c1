package completions

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/switchyard-ai/switchyard/store"
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
// stored account costs what one of an account kept in memory does (two allocations; it
// reads nothing of the account, see TestSpendGateReadsAccountBesideRequestsInFlight): the
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
	// Alone in the gate, the request reads nothing of the account (TestSpendGateReadsAccountBesideRequestsInFlight).
	if n > 2 {
		t.Errorf("admitting and releasing a request of a stored account alone: %v allocations, want 2", n)
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

// TestSpendGateReadsAccountBesideRequestsInFlight: the spend gate weighs what a stored
// account spent only against this process's requests in flight on it, so a request alone
// in the gate — the common case — reads nothing of the account (a store read and its
// decoding, 10 allocations), while one beside requests in flight still reads it and is
// refused when the spend projected over them would pass the bound.
func TestSpendGateReadsAccountBesideRequestsInFlight(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	b, err := CreateSharedBudget(ctx, st, "acct-1", BudgetLimits{MaxTokens: 1000})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, nil)
	alone := testing.AllocsPerRun(200, func() {
		rel, err := h.g.spend.admitLocal(ctx, b, false)
		if err != nil {
			t.Fatal(err)
		}
		rel()
	})
	read := testing.AllocsPerRun(200, func() { _ = b.Used(ctx) })
	if read < 3 || alone > 2 {
		t.Fatalf("a request alone in the gate: %v allocations (the account's read costs %v); want 2, no read", alone, read)
	}

	// 400 of 1000 tokens spent by one answered request: a second request in flight
	// projects 800, a third 1200, which is refused — read from the account.
	if _, err := b.reserveCall(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := b.charge(ctx, 400, 0.01, true); err != nil {
		t.Fatal(err)
	}
	first, err := h.g.spend.admitLocal(ctx, b, false)
	if err != nil {
		t.Fatal(err)
	}
	defer first()
	beside := testing.AllocsPerRun(20, func() {
		rel, err := h.g.spend.admitLocal(ctx, b, false)
		if err != nil {
			t.Fatal(err)
		}
		rel()
	})
	if beside < alone+read-1 {
		t.Errorf("a request beside one in flight: %v allocations, want the account's read (%v) too", beside, read)
	}
	second, err := h.g.spend.admitLocal(ctx, b, false)
	if err != nil {
		t.Fatalf("a second request beside one in flight, 800 of 1000 projected: %v", err)
	}
	defer second()
	if _, err := h.g.spend.admitLocal(ctx, b, false); !errors.Is(err, ErrBudgetExceeded) {
		t.Fatalf("a third request, 1200 of 1000 projected: %v, want ErrBudgetExceeded", err)
	}
}

// TestBudgetUsedReadsOnlyTheUsage: Used decodes the account's usage alone, not the rest
// of its record (limits, the leases of requests in flight, the ids of the charges applied),
// so what it costs does not grow with them.
func TestBudgetUsedReadsOnlyTheUsage(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	// The same shape (json's scanner allocates by the depth of nesting), one allowed model
	// and no charges applied.
	bare, err := CreateSharedBudget(ctx, st, "bare", BudgetLimits{MaxTokens: 1000, AllowedModels: []string{"a/m1"}})
	if err != nil {
		t.Fatal(err)
	}
	rec := sharedBudget{Limits: BudgetLimits{MaxTokens: 1000, AllowedModels: []string{"a/m1", "a/m2", "a/m3", "a/m4"}}}
	for i := range 64 {
		rec.Applied = append(rec.Applied, fmt.Sprintf("charge-%d", i))
	}
	if err := store.PutJSON(ctx, st, store.Budgets, "full", rec); err != nil {
		t.Fatal(err)
	}
	full, err := LoadSharedBudget(ctx, st, "full")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []*Budget{bare, full} {
		if _, err := b.reserveCall(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := b.charge(ctx, 10, 0.01, true); err != nil {
			t.Fatal(err)
		}
	}
	if u := full.Used(ctx); u.Calls != 1 || u.Tokens != 10 {
		t.Fatalf("used %+v, want the call and its 10 tokens", u)
	}
	nBare := testing.AllocsPerRun(100, func() { _ = bare.Used(ctx) })
	nFull := testing.AllocsPerRun(100, func() { _ = full.Used(ctx) })
	if nFull > nBare {
		t.Errorf("Used of an account with 64 applied charges and 4 allowed models: %v allocations, of a bare one %v; want no more", nFull, nBare)
	}
}
