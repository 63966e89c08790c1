package completions

import (
	"context"
	"errors"
	"testing"

	"github.com/switchyard-ai/switchyard/store/memstore"
)

// A key inside a team, and for each request inside an end user's account (Within): the
// charge lands in all three; the end user's spent account refuses naming it by kind and
// name, taking nothing from the key's or the team's; the key itself is unchanged by Within.
func TestWithinEndUserAccount(t *testing.T) {
	onBudgetBackends(t, func(t *testing.T, h *harness, budget func(id string, l BudgetLimits) *Budget) {
		ctx := context.Background()
		team, key := budget("team/t", BudgetLimits{MaxCostUSD: 1}), budget("key/1", BudgetLimits{MaxCostUSD: 1})
		alice, bob := budget("enduser/alice", BudgetLimits{MaxCostUSD: 0.002}), budget("enduser/bob", BudgetLimits{})
		key.SetParent(team, "t")
		if _, err := h.g.Complete(ctx, Scope{Budget: key.Within(alice, "end_user", "alice")}, userReq("hi", "a/priced")); err != nil {
			t.Fatal(err)
		}
		for _, b := range []*Budget{key, team, alice} {
			if u := b.Used(ctx); u.Calls != 1 || u.CostUSD < 0.0029 {
				t.Fatalf("an account after one request: %+v", u)
			}
		}
		_, err := h.g.Complete(ctx, Scope{Budget: key.Within(alice, "end_user", "alice")}, userReq("hi", "a/priced"))
		var be *BudgetExceededError
		if !errors.As(err, &be) || be.Kind != "end_user" || be.Name != "alice" || be.Limits.MaxCostUSD != 0.002 {
			t.Fatalf("spent end user: %v, want its refusal", err)
		}
		for _, b := range []*Budget{key, team} {
			if u := b.Used(ctx); u.Calls != 1 {
				t.Errorf("an account took a call of the refused request: %+v", u)
			}
		}
		if _, err := h.g.Complete(ctx, Scope{Budget: key.Within(bob, "end_user", "bob")}, userReq("hi", "a/priced")); err != nil {
			t.Fatalf("another end user of the same key: %v", err)
		}
		if u := key.Used(ctx); u.Calls != 2 {
			t.Errorf("the key's own account is not shared with its views: %+v", u)
		}
		if key.Parent() != team || len(key.parents) != 1 {
			t.Error("Within changed the key")
		}
	})
}

// A blocked end user refuses the request, naming itself, and the key takes no call.
func TestWithinBlockedEndUser(t *testing.T) {
	h := newHarness(t, nil)
	h.a.on("x", step{text: "hi"})
	ctx := context.Background()
	st := memstore.New()
	key, _ := CreateSharedBudget(ctx, st, "key/1", BudgetLimits{})
	eu, _ := CreateSharedBudget(ctx, st, "enduser/e", BudgetLimits{Blocked: true})
	_, err := h.g.Complete(ctx, Scope{Budget: key.Within(eu, "end_user", "e")}, userReq("hi", "a/x"))
	var be *BudgetExceededError
	if !errors.As(err, &be) || !be.Limits.Blocked || be.Kind != "end_user" {
		t.Fatalf("blocked end user: %v", err)
	}
	if u := key.Used(ctx); u.Calls != 0 {
		t.Errorf("the key took a call: %+v", u)
	}
}
