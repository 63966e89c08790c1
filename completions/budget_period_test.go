package completions

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/store/memstore"
)

// TestBudgetCostAndPeriod: a USD bound stops a budget once its cost reaches it, and with
// ResetEvery the account starts afresh a whole number of periods after its first use, in
// memory and in the store alike.
func TestBudgetCostAndPeriod(t *testing.T) {
	ctx := context.Background()
	start := time.Date(2026, 11, 1, 9, 30, 0, 0, time.UTC)
	limits := BudgetLimits{MaxCostUSD: 0.05, ResetEvery: 24 * time.Hour}
	shared, err := CreateSharedBudget(ctx, memstore.New(), "key/t", limits)
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string]*Budget{"memory": NewBudget(limits), "shared": shared} {
		now := start
		b.now = func() time.Time { return now }
		for i := range 2 { // 0 and 0.03 are below 0.05
			if _, err := b.reserveCall(ctx); err != nil {
				t.Fatalf("%s: call %d: %v", name, i+1, err)
			}
			if err := b.charge(ctx, 100, 0.03); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := b.reserveCall(ctx); !errors.Is(err, ErrBudgetExceeded) {
			t.Fatalf("%s: at $0.06 of $0.05: %v", name, err)
		}
		if u := b.Used(ctx); u.Calls != 2 || u.Tokens != 200 || u.CostUSD < 0.059 || !u.PeriodStart.Equal(start) {
			t.Fatalf("%s: used %+v", name, u)
		}
		now = start.Add(23 * time.Hour)
		if _, err := b.reserveCall(ctx); !errors.Is(err, ErrBudgetExceeded) {
			t.Fatalf("%s: within the day: %v", name, err)
		}
		now = start.Add(50 * time.Hour) // two days and two hours later: the third period
		if u := b.Used(ctx); u.Calls != 0 || u.CostUSD != 0 || !u.PeriodStart.Equal(start.Add(48*time.Hour)) {
			t.Fatalf("%s: a new period reads %+v", name, u)
		}
		if _, err := b.reserveCall(ctx); err != nil {
			t.Fatalf("%s: in a new period: %v", name, err)
		}
		if u := b.Used(ctx); u.Calls != 1 || !u.PeriodStart.Equal(start.Add(48*time.Hour)) {
			t.Fatalf("%s: used in the new period %+v", name, u)
		}
	}
}

// TestBudgetAllowsNames: a budget's allowed names are read as a request names models: a
// model group allows its models, a bare name the model it resolves to, and Allows answers
// for names as /v1/models lists them.
func TestBudgetAllowsNames(t *testing.T) {
	groups := map[string][]string{"pair": {"openai/a", "openai/b"}}
	expand := func(n string) []string {
		if n == "c" {
			return []string{"openai/c"}
		}
		return groups[n]
	}
	b := NewBudget(BudgetLimits{AllowedModels: []string{"pair", "c"}})
	for model, want := range map[string]bool{"openai/a": true, "openai/b": true, "openai/c": true, "openai/d": false, "pair": true} {
		if got := b.allows(model, expand); got != want {
			t.Errorf("allows(%s) = %v, want %v", model, got, want)
		}
	}
	if NewBudget(BudgetLimits{AllowedModels: []string{"openai/a"}}).allows("openai/a", nil) != true {
		t.Error("an exact name")
	}
	if !NewBudget(BudgetLimits{}).allows("any/model", nil) {
		t.Error("no list allows every model")
	}
}
