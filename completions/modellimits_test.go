package completions

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// TestModelSpendHasItsOwnPeriod: a charge to an entry of BudgetLimits.Models adds to the
// account's spend and to the model's; the account's period starting afresh leaves the
// model's spend alone, which starts afresh with its own period; another model's charge
// is the account's only; replacing the limits without the entry drops its spend. In
// memory and in the store alike.
func TestModelSpendHasItsOwnPeriod(t *testing.T) {
	ctx := context.Background()
	start := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	one := 1.0
	limits := BudgetLimits{ResetEvery: time.Hour, Models: map[string]ModelLimits{"gpt-4o": {MaxCostUSD: &one, ResetEvery: 24 * time.Hour}}}
	st := memstore.New()
	shared, err := CreateSharedBudget(ctx, st, "key/m", limits)
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string]*Budget{"memory": NewBudget(limits), "shared": shared} {
		now := start
		b.now = func() time.Time { return now }
		for _, model := range []string{"gpt-4o", "other", ""} {
			if _, _, err := b.chargeAccounts(ctx, 10, 0.25, true, model); err != nil {
				t.Fatal(err)
			}
		}
		if u := b.Used(ctx); math.Abs(u.CostUSD-0.75) > 1e-9 || u.Models["gpt-4o"].CostUSD != 0.25 || len(u.Models) != 1 {
			t.Fatalf("%s: used %+v", name, u)
		}
		now = start.Add(2 * time.Hour) // the account's period is over, the model's is not
		if u := b.Used(ctx); u.CostUSD != 0 || u.Models["gpt-4o"].CostUSD != 0.25 {
			t.Fatalf("%s: after the account's period: %+v", name, u)
		}
		if _, _, err := b.chargeAccounts(ctx, 10, 0.5, true, "gpt-4o"); err != nil {
			t.Fatal(err)
		}
		if u := b.Used(ctx); u.CostUSD != 0.5 || u.Models["gpt-4o"].CostUSD != 0.75 || !u.Models["gpt-4o"].PeriodStart.Equal(start) {
			t.Fatalf("%s: charged in the account's next period: %+v", name, u)
		}
		now = start.Add(25 * time.Hour) // the model's period is over too
		if u := b.Used(ctx); u.Models["gpt-4o"].CostUSD != 0 || !u.Models["gpt-4o"].PeriodStart.Equal(start.Add(24*time.Hour)) {
			t.Fatalf("%s: after the model's period: %+v", name, u)
		}
	}
	if err := st.Update(ctx, func(tx store.Tx) error { return SetSharedBudgetLimits(ctx, tx, "key/m", BudgetLimits{}) }); err != nil {
		t.Fatal(err)
	}
	b, err := LoadSharedBudget(ctx, st, "key/m")
	if err != nil {
		t.Fatal(err)
	}
	if u := b.Used(ctx); len(u.Models) != 0 {
		t.Fatalf("the entry removed, its spend is kept: %+v", u)
	}
}
