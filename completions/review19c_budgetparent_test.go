package completions

import (
	"context"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// A request in flight when its key's parent account is deleted (the key taken out of its
// team, then the team deleted) still charges the key's own account: its tokens were spent.
func TestReview19cChargeKeptWhenParentGone(t *testing.T) {
	h := newHarness(t, nil)
	h.a.on("priced", step{text: "hi", delay: 300 * time.Millisecond, usage: providers.Usage{PromptTokens: 1000, CompletionTokens: 1000}})
	ctx := context.Background()
	st := memstore.New()
	team, err := CreateSharedBudget(ctx, st, "team/t", BudgetLimits{MaxCostUSD: 10})
	if err != nil {
		t.Fatal(err)
	}
	k, err := CreateSharedBudget(ctx, st, "key/1", BudgetLimits{MaxCostUSD: 1})
	if err != nil {
		t.Fatal(err)
	}
	k.SetParent(team, "t")
	done := make(chan error, 1)
	go func() {
		_, err := h.g.Complete(ctx, Scope{Budget: k}, userReq("hi", "a/priced"))
		done <- err
	}()
	for team.Used(ctx).Calls == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	if err := st.Delete(ctx, store.Budgets, "team/t"); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if u := k.Used(ctx); u.Calls != 1 || u.CostUSD == 0 || u.Tokens != 2000 {
		t.Fatalf("the key's own account after its answer: %+v (its charge was lost)", u)
	}
}
