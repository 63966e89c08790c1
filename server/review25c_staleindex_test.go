package server

import (
	"context"
	"net/http"
	"testing"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/storetest/drivertest"
)

// TestReview25cStaleBudgetIndexEntry: an entry of store.BudgetCustomers whose end user no
// longer names the budget (left by a replica of an earlier build that rewrote or deleted
// and re-made the end user during a rolling upgrade, or by any write that missed the
// index) neither lets /budget/update overwrite that end user's own limits nor keeps
// /budget/delete refusing a budget no end user names; on every driver.
func TestReview25cStaleBudgetIndexEntry(t *testing.T) {
	drivertest.ForEach(t, func(t *testing.T, d store.Driver) {
		st := store.New(d)
		_, s := keysServer(t, st, 0)
		ctx := context.Background()
		if r := do(t, s, "POST", "/budget/new", testKey, `{"budget_id":"tier","max_budget":1,"budget_duration":"30d"}`); r.status != http.StatusOK {
			t.Fatal(r.status, r.raw)
		}
		// x has limits of its own; y names the budget.
		if r := do(t, s, "POST", "/customer/new", testKey, `{"user_id":"x","max_budget":3}`); r.status != http.StatusOK {
			t.Fatal(r.status, r.raw)
		}
		if r := do(t, s, "POST", "/customer/new", testKey, `{"user_id":"y","budget_id":"tier"}`); r.status != http.StatusOK {
			t.Fatal(r.status, r.raw)
		}
		rec, err := storedEndUserOf(ctx, st, owner0(t, st, "x"), "x")
		if err != nil {
			t.Fatal(err)
		}
		// The entry an earlier build left: x once named tier.
		if err := st.Put(ctx, store.BudgetCustomers, budgetCustomersPrefix(rec.Owner, "tier")+"x", []byte(`""`)); err != nil {
			t.Fatal(err)
		}

		if r := do(t, s, "POST", "/budget/update", testKey, `{"budget_id":"tier","max_budget":50}`); r.status != http.StatusOK {
			t.Fatal(r.status, r.raw)
		}
		if c := customerInfo(t, s, "x"); c.BudgetID == nil || *c.BudgetID != "x" || c.Budget == nil || c.Budget.MaxBudget == nil || *c.Budget.MaxBudget != 3 || c.Budget.BudgetDuration != nil {
			t.Fatalf("x, which names no budget, after /budget/update of tier: %+v %+v", c, c.Budget)
		}
		if c := customerInfo(t, s, "y"); *c.Budget.MaxBudget != 50 {
			t.Fatalf("y after /budget/update of tier: %+v", c.Budget)
		}
		// y leaves; x never named it: the budget can go.
		if r := do(t, s, "POST", "/customer/delete", testKey, `{"user_ids":["y"]}`); r.status != http.StatusOK {
			t.Fatal(r.status, r.raw)
		}
		if r := do(t, s, "POST", "/budget/delete", testKey, `{"id":"tier"}`); r.status != http.StatusOK {
			t.Fatalf("/budget/delete of a budget only a stale entry names: %d %s", r.status, r.raw)
		}
	})
}

// owner0 is the owner of the end user id in st (the test key's id).
func owner0(t *testing.T, st *store.Store, id string) string {
	t.Helper()
	es, err := st.List(context.Background(), store.EndUsers, store.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		if len(e.Key) > len(id) && e.Key[len(e.Key)-len(id)-1:] == "/"+id {
			return e.Key[:len(e.Key)-len(id)-1]
		}
	}
	t.Fatalf("no end user %s", id)
	return ""
}
