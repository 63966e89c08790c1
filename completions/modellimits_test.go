package completions

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
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
			if _, _, err := b.chargeAccounts(ctx, 10, 0.25, true, []string{model}); err != nil {
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
		if _, _, err := b.chargeAccounts(ctx, 10, 0.5, true, []string{"gpt-4o"}); err != nil {
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

// TestModelLimitsHoldEachModelOfARequest: with several models (native models, fallbacks),
// each is held to its own entry of the key's Models: a model over its budget is skipped
// (recorded, never called) for the next one, on Complete and Stream alike; the model that
// answers is charged, in its entry and its tokens of the minute, not the one asked; a
// fallback's rpm counts its calls only, and refuses it past them. In memory and in the
// store alike.
func TestModelLimitsHoldEachModelOfARequest(t *testing.T) {
	ctx := context.Background()
	zero, one := 0.0, 1.0
	rpm := int64(1)
	limits := BudgetLimits{Models: map[string]ModelLimits{
		"a/priced": {MaxCostUSD: &zero}, // spent from the start
		"b/priced": {MaxCostUSD: &one},
		"b/x":      {RequestsPerMinute: &rpm},
	}}
	for _, shared := range []bool{false, true} {
		h := newHarness(t, nil)
		h.a.on("down", step{err: &providers.Error{Kind: providers.KindBadRequest, Message: "no"}})
		h.b.on("priced", step{text: "from b", usage: providers.Usage{PromptTokens: 1000, CompletionTokens: 1000}})
		b := NewBudget(limits)
		if shared {
			var err error
			if b, err = CreateSharedBudget(ctx, memstore.New(), "key/m", limits); err != nil {
				t.Fatal(err)
			}
		}
		scope := Scope{Budget: b, KeyID: "k"}
		resp, err := h.g.Complete(ctx, scope, userReq("hi", "a/priced", "b/priced"))
		if err != nil || resp.Provider != "b" || len(resp.Attempts) != 2 || resp.Attempts[0].Kind != modelBudgetKind || resp.Attempts[0].Outcome != OutcomeSkipped {
			t.Fatalf("shared %v: models [a/priced b/priced], a spent: %v %+v", shared, err, resp)
		}
		if h.a.callCount("priced") != 0 {
			t.Fatalf("shared %v: a/priced was called over its budget", shared)
		}
		if u := b.Used(ctx); math.Abs(u.Models["b/priced"].CostUSD-0.003) > 1e-9 || u.Models["a/priced"].CostUSD != 0 {
			t.Fatalf("shared %v: charged %+v; want b/priced's entry only", shared, u.Models)
		}
		req := userReq("hi", "a/priced")
		req.FallbackModels = []string{"b/priced"}
		st, err := h.g.Stream(ctx, scope, req)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := drain(t, st); err != nil {
			t.Fatal(err)
		}
		if u := b.Used(ctx); math.Abs(u.Models["b/priced"].CostUSD-0.006) > 1e-9 {
			t.Fatalf("shared %v: a streamed fallback's answer charged %+v", shared, u.Models)
		}
		// rpm 1 on the fallback b/x: an answer of a/x does not count it; one of b/x does,
		// and the next request that falls back to it is refused it.
		req = userReq("hi", "a/x")
		req.FallbackModels = []string{"b/x"}
		for range 2 {
			if resp, err := h.g.Complete(ctx, scope, req); err != nil || resp.Provider != "a" {
				t.Fatalf("shared %v: a/x answering: %v %+v", shared, err, resp)
			}
		}
		req = userReq("hi", "a/down")
		req.FallbackModels = []string{"b/x"}
		if resp, err := h.g.Complete(ctx, scope, req); err != nil || resp.Provider != "b" {
			t.Fatalf("shared %v: the first fall back to b/x: %v %+v", shared, err, resp)
		}
		_, err = h.g.Complete(ctx, scope, req)
		var af *AllFailedError
		if !errors.As(err, &af) || len(af.Attempts) != 2 || !slices.ContainsFunc(af.Attempts, func(a Attempt) bool { return a.Model == "b/x" && a.Kind == modelRateKind }) ||
			h.b.callCount("x") != 1 {
			t.Fatalf("shared %v: the second fall back to b/x past its rpm: %v (b/x called %d times)", shared, err, h.b.callCount("x"))
		}
	}
}

// TestModelLimitsAllRefused: a request every model of which its key's Models refuse gets
// the first one's refusal, taking nothing from the account; one whose models were all
// skipped as they were about to be called, at least one by the key's Models (allFailed),
// gets that refusal too, but not when a model was called.
func TestModelLimitsAllRefused(t *testing.T) {
	ctx := context.Background()
	zero := 0.0
	none := int64(0)
	h := newHarness(t, nil)
	b := NewBudget(BudgetLimits{Models: map[string]ModelLimits{"a/priced": {MaxCostUSD: &zero}, "b/priced": {RequestsPerMinute: &none}}})
	req := userReq("hi", "a/priced")
	req.FallbackModels = []string{"b/priced"}
	var mb *ModelBudgetError
	if _, err := h.g.Complete(ctx, Scope{Budget: b}, req); !errors.As(err, &mb) || mb.Model != "a/priced" || !errors.Is(err, ErrBudgetExceeded) {
		t.Fatalf("a/priced then b/priced, both refused: %v; want a/priced's budget refusal", err)
	}
	var mr *ModelRateError
	if _, err := h.g.Complete(ctx, Scope{Budget: b}, userReq("hi", "b/priced", "a/priced")); !errors.As(err, &mr) || mr.Model != "b/priced" {
		t.Fatalf("b/priced then a/priced, both refused: %v; want b/priced's rpm refusal", err)
	}
	if u := b.Used(ctx); u.Calls != 0 {
		t.Fatalf("the refused requests took calls: %+v", u)
	}

	refusal := &ModelRateError{Model: "b/priced", Limit: 1, Used: 1}
	p := &plan{}
	p.skipLimited("a/m", "rpm 1", time.Second)
	p.skipModel(target{name: "b/priced"}, refusal)
	if err := p.allFailed(); !errors.Is(err, ErrLimited) {
		t.Fatalf("one at its deployment's limit, one refused by the key: %v; want the deployment's limit", err)
	}
	p = &plan{}
	p.skipModel(target{name: "b/priced"}, refusal)
	p.skipModel(target{name: "a/priced"}, &ModelBudgetError{Model: "a/priced"})
	if err := p.allFailed(); err != error(refusal) {
		t.Fatalf("every model skipped by the key's limits: %v; want the first refusal", err)
	}
	p.attempts = append(p.attempts, Attempt{Model: "c/m", Outcome: OutcomeError, Kind: providers.KindOverloaded.String()})
	var af *AllFailedError
	if err := p.allFailed(); !errors.As(err, &af) {
		t.Fatalf("a model called and failed: %v; want AllFailedError", err)
	}
}

// TestEnclosingModelEntriesAreCharged: a charge through a key's Budget that sits inside an
// end user's (Within) adds the cost to the entry given for each account: the key's own
// entry to the key's, the end user's to the end user's, in memory and in the store alike;
// an account not given one (or without that entry) has its total charged only.
func TestEnclosingModelEntriesAreCharged(t *testing.T) {
	ctx := context.Background()
	one := 1.0
	keyLimits := BudgetLimits{Models: map[string]ModelLimits{"gpt-4o": {MaxCostUSD: &one}}}
	userLimits := BudgetLimits{Models: map[string]ModelLimits{"gpt-4o-mini": {MaxCostUSD: &one}}}
	st := memstore.New()
	sharedKey, err := CreateSharedBudget(ctx, st, "key/k", keyLimits)
	if err != nil {
		t.Fatal(err)
	}
	sharedUser, err := CreateSharedBudget(ctx, st, "enduser/u", userLimits)
	if err != nil {
		t.Fatal(err)
	}
	for name, pair := range map[string][2]*Budget{"memory": {NewBudget(keyLimits), NewBudget(userLimits)}, "shared": {sharedKey, sharedUser}} {
		key, user := pair[0], pair[1]
		b := key.Within(user, "end_user", "u")
		if _, _, err := b.chargeAccounts(ctx, 10, 0.25, true, []string{"", "gpt-4o-mini"}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := b.chargeAccounts(ctx, 10, 0.5, true, []string{"gpt-4o"}); err != nil {
			t.Fatal(err)
		}
		if u := user.Used(ctx); math.Abs(u.CostUSD-0.75) > 1e-9 || u.Models["gpt-4o-mini"].CostUSD != 0.25 || len(u.Models) != 1 {
			t.Errorf("%s: the end user's account: %+v", name, u)
		}
		if u := key.Used(ctx); math.Abs(u.CostUSD-0.75) > 1e-9 || u.Models["gpt-4o"].CostUSD != 0.5 || len(u.Models) != 1 {
			t.Errorf("%s: the key's account: %+v", name, u)
		}
	}
}
