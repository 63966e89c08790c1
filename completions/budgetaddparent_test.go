package completions

import (
	"context"
	"errors"
	"testing"
)

// TestAddParentBesideTeam: a key inside a team's account and, with AddParent, a user's is
// refused by the user's spent account (named with its kind) while the team's has room;
// every account is charged, in memory and on a store.
func TestAddParentBesideTeam(t *testing.T) {
	onBudgetBackends(t, func(t *testing.T, h *harness, budget func(id string, l BudgetLimits) *Budget) {
		ctx := context.Background()
		team, user, key := budget("team/t", BudgetLimits{MaxCostUSD: 1}), budget("user/u", BudgetLimits{MaxCostUSD: 0.002}), budget("key/1", BudgetLimits{})
		key.SetParent(team, "t")
		key.AddParent(user, "user", "u")
		if _, err := h.g.Complete(ctx, Scope{Budget: key}, userReq("hi", "a/priced")); err != nil {
			t.Fatal(err)
		}
		for what, b := range map[string]*Budget{"key": key, "team": team, "user": user} {
			if u := b.Used(ctx); u.Calls != 1 || u.CostUSD < 0.0029 {
				t.Fatalf("%s account after one request: %+v", what, u)
			}
		}
		_, err := h.g.Complete(ctx, Scope{Budget: key}, userReq("hi", "a/priced"))
		var be *BudgetExceededError
		if !errors.As(err, &be) || be.Kind != "user" || be.Name != "u" || be.Limits.MaxCostUSD != 0.002 {
			t.Fatalf("over the user's budget: %v, want the user's refusal", err)
		}
		if u := team.Used(ctx); u.Calls != 1 {
			t.Errorf("the team's account took the refused call: %+v", u)
		}
		if u := key.Used(ctx); u.Calls != 1 {
			t.Errorf("the key's account took the refused call: %+v", u)
		}
	})
}
