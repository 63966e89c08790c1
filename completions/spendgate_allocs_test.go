package completions

import (
	"context"
	"testing"
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
	// gateKey's boxing and Used's copy are the rest: measured without the gate.
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
