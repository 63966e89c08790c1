package completions

import (
	"context"
	"errors"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// An account deleted while a request is on its way is named in the error: an end user's
// (Within) by its kind and name, a team's (SetParent) by its name, the key's own by
// neither; in the call's reservation and in its charge, whether the key's account is on
// the same store or in memory (the operator's own key).
func TestBudgetGoneNamesTheAccount(t *testing.T) {
	ctx := context.Background()
	for _, sharedKey := range []bool{true, false} {
		st := memstore.New()
		var key *Budget
		if sharedKey {
			key, _ = CreateSharedBudget(ctx, st, "key/1", BudgetLimits{})
			team, _ := CreateSharedBudget(ctx, st, "team/t", BudgetLimits{})
			key.SetParent(team, "t")
		} else {
			key = NewBudget(BudgetLimits{})
		}
		alice, _ := CreateSharedBudget(ctx, st, "enduser/alice", BudgetLimits{})
		b := key.Within(alice, "end_user", "alice")

		// Reserved, then deleted: the charge names the end user.
		if _, err := b.reserveCall(ctx); err != nil {
			t.Fatal(err)
		}
		if err := DeleteSharedBudget(ctx, st, "enduser/alice"); err != nil {
			t.Fatal(err)
		}
		_, err := b.charge(ctx, 10, 0.01, true)
		var ge *BudgetGoneError
		if !errors.Is(err, ErrBudgetGone) || !errors.As(err, &ge) || ge.Kind != "end_user" || ge.Name != "alice" || ge.ID != "enduser/alice" {
			t.Fatalf("shared key %v: charge after the end user was deleted: %v", sharedKey, err)
		}

		// Deleted before the reservation: the request is refused naming the end user.
		h := newHarness(t, nil)
		h.a.on("priced", step{text: "hi", usage: providers.Usage{PromptTokens: 1, CompletionTokens: 1}})
		_, err = h.g.Complete(ctx, Scope{Budget: b}, userReq("hi", "a/priced"))
		if ge = nil; !errors.As(err, &ge) || ge.Kind != "end_user" || ge.Name != "alice" {
			t.Fatalf("shared key %v: request after the end user was deleted: %v", sharedKey, err)
		}
		if !sharedKey {
			continue
		}
		if err := DeleteSharedBudget(ctx, st, "team/t"); err != nil {
			t.Fatal(err)
		}
		_, err = h.g.Complete(ctx, Scope{Budget: key}, userReq("hi", "a/priced"))
		if ge = nil; !errors.As(err, &ge) || ge.Kind != "" || ge.Name != "t" {
			t.Fatalf("request after the team was deleted: %v", err)
		}
		if err := DeleteSharedBudget(ctx, st, "key/1"); err != nil {
			t.Fatal(err)
		}
		_, err = h.g.Complete(ctx, Scope{Budget: key}, userReq("hi", "a/priced"))
		if ge = nil; !errors.As(err, &ge) || ge.Name != "" || ge.ID != "key/1" {
			t.Fatalf("request after the key was revoked: %v", err)
		}
	}
}
