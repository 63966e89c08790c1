package completions

import (
	"context"
	"testing"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// TestReview19eChargeJudgesStoredLimits: a request loads its key's Budget (and the limits
// then stored) before it runs; when the operator raises the soft budget meanwhile, the
// request's charge must not report the old mark as crossed (nor take the new mark's alert
// away from the charge that reaches it). Same for a key inside a team.
func TestReview19eChargeJudgesStoredLimits(t *testing.T) {
	ctx := context.Background()
	for _, withTeam := range []bool{false, true} {
		st := memstore.New()
		inflight, err := CreateSharedBudget(ctx, st, "key/k", BudgetLimits{SoftCostUSD: 5})
		if err != nil {
			t.Fatal(err)
		}
		load := func() *Budget {
			b, err := LoadSharedBudget(ctx, st, "key/k")
			if err != nil {
				t.Fatal(err)
			}
			if withTeam {
				team, err := LoadSharedBudget(ctx, st, "team/o/t")
				if err != nil {
					t.Fatal(err)
				}
				b.SetParent(team, "t")
			}
			return b
		}
		if withTeam {
			if _, err := CreateSharedBudget(ctx, st, "team/o/t", BudgetLimits{}); err != nil {
				t.Fatal(err)
			}
			inflight = load()
		}
		if a, err := load().charge(ctx, 10, 1, true); err != nil || len(a) != 0 {
			t.Fatalf("team %v: $1 of a $5 soft budget: %v %v", withTeam, a, err)
		}
		// The request in flight loaded the $5 mark; the operator now raises it to $10.
		if err := st.Update(ctx, func(tx store.Tx) error {
			return SetSharedBudgetLimits(ctx, tx, "key/k", BudgetLimits{SoftCostUSD: 10})
		}); err != nil {
			t.Fatal(err)
		}
		if a, err := inflight.charge(ctx, 10, 5, true); err != nil || len(a) != 0 {
			t.Fatalf("team %v: $6 of a soft budget raised to $10 alerted %+v (err %v)", withTeam, a, err)
		}
		a, err := load().charge(ctx, 10, 4.5, true)
		if err != nil || len(a) != 1 || a[0].Threshold != ThresholdSoft || a[0].SoftUSD != 10 {
			t.Fatalf("team %v: $10.5 of a $10 soft budget alerted %+v (err %v), want the soft budget of $10 once", withTeam, a, err)
		}
	}
}
