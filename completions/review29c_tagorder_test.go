package completions

import (
	"context"
	"slices"
	"testing"
)

// TestReview29cTagAccountsInOneOrder: the accounts of a request's tags are entered in one
// order whatever order the request names them in. The spend gate holds each account of a
// request while it waits for the next (one request at a time on an account with nothing
// spent yet), so a request tagged a,b and one tagged b,a sent together could each hold the
// account the other waited for, until their deadlines (or for ever without one).
func TestReview29cTagAccountsInOneOrder(t *testing.T) {
	ctx := context.Background()
	tags := &fakeTagBudgets{accounts: map[string]*Budget{
		"op/a": NewBudget(BudgetLimits{MaxCostUSD: 1}), "op/b": NewBudget(BudgetLimits{MaxCostUSD: 1}), "op/c": NewBudget(BudgetLimits{MaxCostUSD: 1})}}
	h := newHarness(t, func(o *Options) { o.TagBudgets = tags })
	order := func(ts ...string) []string {
		sc, err := h.g.withTagBudgets(ctx, Scope{Owner: "op", Budget: NewBudget(BudgetLimits{MaxCostUSD: 1})}, ts)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, p := range sc.Budget.parents {
			names = append(names, p.name)
		}
		return names
	}
	want := []string{"a", "b", "c"}
	for _, ts := range [][]string{{"a", "b", "c"}, {"b", "a", "c"}, {"c", "b", "a"}, {"c", "x", "a", "b", "a"}} {
		if got := order(ts...); !slices.Equal(got, want) {
			t.Errorf("tags %v entered as %v, want %v", ts, got, want)
		}
	}
}
