package completions

import (
	"context"
	"errors"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// Two keys inside one team account: the first spends the team's budget, and the second,
// whose own budget is untouched, is refused naming the team.
func TestParentBudgetSharedByTwoKeys(t *testing.T) {
	onBudgetBackends(t, func(t *testing.T, h *harness, budget func(id string, l BudgetLimits) *Budget) {
		ctx := context.Background()
		team := budget("team/t", BudgetLimits{MaxCostUSD: 0.002})
		k1, k2 := budget("key/1", BudgetLimits{MaxCostUSD: 1}), budget("key/2", BudgetLimits{MaxCostUSD: 1})
		k1.SetParent(team, "t")
		k2.SetParent(team, "t")
		if _, err := h.g.Complete(ctx, Scope{Budget: k1}, userReq("hi", "a/priced")); err != nil {
			t.Fatal(err)
		}
		if u := team.Used(ctx); u.Calls != 1 || u.CostUSD < 0.0029 {
			t.Fatalf("team account after one request: %+v", u)
		}
		_, err := h.g.Complete(ctx, Scope{Budget: k2}, userReq("hi", "a/priced"))
		var be *BudgetExceededError
		if !errors.Is(err, ErrBudgetExceeded) || !errors.As(err, &be) || be.Name != "t" || be.Limits.MaxCostUSD != 0.002 {
			t.Fatalf("second key: %v, want the team's refusal", err)
		}
		if u := k2.Used(ctx); u.Calls != 0 {
			t.Errorf("the refused key's account took a call: %+v", u)
		}
		if u := k1.Used(ctx); u.Calls != 1 || u.CostUSD == 0 {
			t.Errorf("the first key's own account: %+v", u)
		}
	})
}

// A parent's AllowedModels bound its children's; a blocked parent refuses every child.
func TestParentBudgetModelsAndBlock(t *testing.T) {
	h := newHarness(t, nil)
	h.a.on("x", step{text: "hi"})
	h.a.on("y", step{text: "hi"})
	ctx := context.Background()
	team := NewBudget(BudgetLimits{AllowedModels: []string{"a/x"}})
	k := NewBudget(BudgetLimits{})
	k.SetParent(team, "t")
	if _, err := h.g.Complete(ctx, Scope{Budget: k}, userReq("hi", "a/y")); !errors.Is(err, ErrModelNotAllowed) {
		t.Fatalf("a model outside the team's: %v", err)
	}
	if !h.g.Allows(Scope{Budget: k}, "a/x") || h.g.Allows(Scope{Budget: k}, "a/y") {
		t.Error("Allows ignores the team's models")
	}
	if _, err := h.g.Complete(ctx, Scope{Budget: k}, userReq("hi", "a/x")); err != nil {
		t.Fatal(err)
	}
	blocked := NewBudget(BudgetLimits{Blocked: true})
	k2 := NewBudget(BudgetLimits{})
	k2.SetParent(blocked, "t")
	_, err := h.g.Complete(ctx, Scope{Budget: k2}, userReq("hi", "a/x"))
	var be *BudgetExceededError
	if !errors.As(err, &be) || !be.Limits.Blocked {
		t.Fatalf("blocked team: %v", err)
	}
}

// Without a parent a Budget refuses as before: an unnamed error, no *BudgetExceededError.
func TestBudgetWithoutParentUnchanged(t *testing.T) {
	h := newHarness(t, nil)
	h.a.on("x", step{text: "hi"})
	ctx := context.Background()
	k := NewBudget(BudgetLimits{MaxCalls: 1})
	if _, err := h.g.Complete(ctx, Scope{Budget: k}, userReq("hi", "a/x")); err != nil {
		t.Fatal(err)
	}
	_, err := h.g.Complete(ctx, Scope{Budget: k}, userReq("hi", "a/x"))
	var be *BudgetExceededError
	if !errors.Is(err, ErrBudgetExceeded) || errors.As(err, &be) || err.Error() != "completions: budget exceeded: 1 of 1 calls used" {
		t.Fatalf("got %v", err)
	}
}

// onBudgetBackends runs f as a subtest with accounts in memory ("memory") and on one store
// ("store"): budget makes one of f's accounts (id names it on the store); the harness's
// model a/priced answers 1,000 prompt and 1,000 completion tokens.
func onBudgetBackends(t *testing.T, f func(t *testing.T, h *harness, budget func(id string, l BudgetLimits) *Budget)) {
	for _, shared := range []bool{false, true} {
		name := "memory"
		if shared {
			name = "store"
		}
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, nil)
			h.a.on("priced", step{text: "hi", usage: providers.Usage{PromptTokens: 1000, CompletionTokens: 1000}})
			st := memstore.New()
			f(t, h, func(id string, l BudgetLimits) *Budget {
				if !shared {
					return NewBudget(l)
				}
				b, err := CreateSharedBudget(context.Background(), st, id, l)
				if err != nil {
					t.Fatal(err)
				}
				return b
			})
		})
	}
}
