package completions

import (
	"context"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// TestRecordAccountsAfterCharge: a request charged to a key's budget inside a team's and a
// user's records the accounts as its charge left them (RequestRecord.Accounts), the key's
// own first, then the team's and the user's with their names, each with its max budget,
// its spend including the request's cost and the end of its period; a request without a
// budget records none. In memory and on the store alike.
func TestRecordAccountsAfterCharge(t *testing.T) {
	for _, shared := range []bool{false, true} {
		obs := &recordingObserver{}
		h := newHarness(t, func(o *Options) { o.Observer = obs })
		h.a.on("priced", step{text: "hi", usage: providers.Usage{PromptTokens: 1000, CompletionTokens: 1000}})
		st := memstore.New()
		budget := func(id string, l BudgetLimits) *Budget {
			if !shared {
				return NewBudget(l)
			}
			b, err := CreateSharedBudget(context.Background(), st, id, l)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
		ctx := context.Background()
		key := budget("key/1", BudgetLimits{MaxCostUSD: 2, ResetEvery: time.Hour})
		team, user := budget("team/t", BudgetLimits{MaxCostUSD: 10}), budget("user/u", BudgetLimits{Blocked: false})
		key.SetParent(team, "t")
		key.AddParent(user, "user", "u")
		if _, err := h.g.Complete(ctx, Scope{}, userReq("hi", "a/priced")); err != nil {
			t.Fatal(err)
		}
		if r := obs.take(t); r.Accounts != nil {
			t.Errorf("shared %v: accounts of a request without a budget: %+v", shared, r.Accounts)
		}
		for i := 1; i <= 2; i++ {
			if _, err := h.g.Complete(ctx, Scope{Budget: key}, userReq("hi", "a/priced")); err != nil {
				t.Fatal(err)
			}
			r := obs.take(t)
			cost := r.Usage.Costs.Spent()
			if cost <= 0 || len(r.Accounts) != 3 {
				t.Fatalf("shared %v: cost %g, accounts %+v", shared, cost, r.Accounts)
			}
			k, tm, u := r.Accounts[0], r.Accounts[1], r.Accounts[2]
			spent := float64(i) * cost
			if k.Kind != "" || k.Name != "" || k.MaxCostUSD != 2 || k.SpentUSD < spent-1e-12 || k.SpentUSD > spent+1e-12 || k.Period != time.Hour ||
				k.ResetAt.Sub(time.Now()) > time.Hour || k.ResetAt.Before(time.Now().Add(-time.Minute)) {
				t.Errorf("shared %v, request %d: the key's account %+v, want max 2, spent %g, reset within the hour", shared, i, k, spent)
			}
			if tm.Kind != "" || tm.Name != "t" || tm.MaxCostUSD != 10 || tm.SpentUSD < spent-1e-12 || !tm.ResetAt.IsZero() {
				t.Errorf("shared %v, request %d: the team's account %+v", shared, i, tm)
			}
			if u.Kind != "user" || u.Name != "u" || u.MaxCostUSD != 0 || u.SpentUSD < spent-1e-12 {
				t.Errorf("shared %v, request %d: the user's account %+v", shared, i, u)
			}
		}
	}
}
