package completions

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// TestBudgetAnsweredAfterCutRequests: an account whose first charges were requests cut
// short (charged unanswered: a stream broken midway) counts only the answered requests
// that follow as answered, in memory and in the store (the rule for records from before
// Answered was kept counted the cut ones too, lowering the spend gate's mean per request);
// a stored record from before it still has its past requests counted.
func TestBudgetAnsweredAfterCutRequests(t *testing.T) {
	ctx := context.Background()
	limits := BudgetLimits{MaxCostUSD: 10}
	shared, err := CreateSharedBudget(ctx, memstore.New(), "key/cut", limits)
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string]*Budget{"memory": NewBudget(limits), "shared": shared} {
		for _, answered := range []bool{false, false, true} {
			if _, err := b.reserveCall(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := b.charge(ctx, 10, 0.01, answered); err != nil {
				t.Fatal(err)
			}
		}
		if u := b.Used(ctx); u.Calls != 3 || u.Answered != 1 {
			t.Errorf("%s: after two cut requests and an answer: calls %d, answered %d; want 3 and 1", name, u.Calls, u.Answered)
		}
	}

	// A record of an earlier build: usage without answered counts or the mark.
	st := memstore.New()
	old, err := CreateSharedBudget(ctx, st, "key/old", limits)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := st.Get(ctx, store.Budgets, old.id)
	if err != nil {
		t.Fatal(err)
	}
	var rec map[string]any
	if err := json.Unmarshal(raw, &rec); err != nil {
		t.Fatal(err)
	}
	rec["used"] = map[string]any{"calls": 4, "tokens": 40, "cost_usd": 0.04}
	b, _ := json.Marshal(rec)
	if err := st.Put(ctx, store.Budgets, old.id, b); err != nil {
		t.Fatal(err)
	}
	if _, err := old.reserveCall(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := old.charge(ctx, 10, 0.01, true); err != nil {
		t.Fatal(err)
	}
	if u := old.Used(ctx); u.Calls != 5 || u.Answered != 5 {
		t.Errorf("an earlier build's record: calls %d, answered %d; want 5 and 5 (its four past requests answered)", u.Calls, u.Answered)
	}
}
