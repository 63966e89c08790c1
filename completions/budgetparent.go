package completions

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/switchyard-ai/switchyard/store"
)

// A Budget may sit inside other Budgets: a team's account that every key of the team draws
// on (SetParent), and for one request an end user's (Within). A request is then refused
// when any account refuses it, its call is reserved in all and its cost charged to all.
// Shared Budgets on one store are read and written in one store transaction, so that
// replicas on the store never both take the last call of an account and a refusal by one
// account leaves the others untouched.

// BudgetExceededError is a refusal by a named parent Budget (SetParent's name: a team's
// id; Within's kind and name: an end user's); it matches ErrBudgetExceeded. Used is what
// the parent had used, Limits its limits.
type BudgetExceededError struct {
	// Kind is Within's kind ("" for SetParent's parent).
	Kind   string
	Name   string
	Used   BudgetUsage
	Limits BudgetLimits
	// Reason is the refusal as an unnamed Budget gives it.
	Reason error
}

// Error names the exhausted budget and why it refused.
func (e *BudgetExceededError) Error() string {
	return fmt.Sprintf("completions: budget exceeded: %s: %s", e.Name, reasonText(e.Reason))
}

// Is matches ErrBudgetExceeded.
func (e *BudgetExceededError) Is(target error) bool { return target == ErrBudgetExceeded }

// Unwrap returns the unnamed refusal.
func (e *BudgetExceededError) Unwrap() error { return e.Reason }

// BudgetGoneError is ErrBudgetGone naming the shared account that was deleted while the
// request was on its way: the caller's own (Kind and Name empty: its key was revoked) or
// one it sits inside (SetParent's, Name a team's id; Within's, with its kind and name: an
// end user's). It matches ErrBudgetGone.
type BudgetGoneError struct {
	// Kind is Within's kind ("" for the caller's own account and SetParent's parent).
	Kind string
	// Name is SetParent's or Within's name ("" for the caller's own account).
	Name string
	// ID is the account's store id.
	ID string
}

// Error names the deleted account's budget and whose it was.
func (e *BudgetGoneError) Error() string {
	if e.Name == "" {
		return fmt.Sprintf("%v: budget %s", ErrBudgetGone, e.ID)
	}
	return fmt.Sprintf("%v: budget %s of %s", ErrBudgetGone, e.ID, e.Name)
}

// Is matches ErrBudgetGone.
func (e *BudgetGoneError) Is(target error) bool { return target == ErrBudgetGone }

// goneNamed names parent i in err when err is its account's *BudgetGoneError; other
// errors pass unchanged.
func (b *Budget) goneNamed(i int, err error) error {
	var ge *BudgetGoneError
	if !errors.As(err, &ge) || ge.Name != "" {
		return err
	}
	p := b.parents[i]
	named := *ge
	named.Kind, named.Name = p.kind, p.name
	return &named
}

// reasonText is err's text after ErrBudgetExceeded's.
func reasonText(err error) string {
	msg := err.Error()
	if len(msg) > len(ErrBudgetExceeded.Error())+2 && msg[:len(ErrBudgetExceeded.Error())] == ErrBudgetExceeded.Error() {
		return msg[len(ErrBudgetExceeded.Error())+2:]
	}
	return msg
}

// parentRefusal names parent i in its refusal err (pu: what it had used) or in the
// error saying its account is gone (goneNamed); other errors pass unchanged.
func (b *Budget) parentRefusal(i int, pu BudgetUsage, err error) error {
	if !errors.Is(err, ErrBudgetExceeded) {
		return b.goneNamed(i, err)
	}
	p := b.parents[i]
	return &BudgetExceededError{Kind: p.kind, Name: p.name, Used: pu, Limits: p.b.Limits(), Reason: err}
}

// sameStore reports whether b and all its parents are shared Budgets on one store.
func (b *Budget) sameStore() bool {
	if b.st == nil {
		return false
	}
	for _, p := range b.parents {
		if p.b.st != b.st {
			return false
		}
	}
	return true
}

// inMemory reports whether b and all its parents keep their accounts in memory.
func (b *Budget) inMemory() bool {
	if b.st != nil {
		return false
	}
	for _, p := range b.parents {
		if p.b.st != nil {
			return false
		}
	}
	return true
}

// reserveAll is reserveCall of a Budget with parents: a call taken from all or none.
// tokensLeft is the fewest tokens any has left (0: none has a token bound).
func (b *Budget) reserveAll(ctx context.Context) (tokensLeft int64, err error) {
	now := b.clock()
	lefts := make([]int64, 1+len(b.parents))
	switch {
	case b.sameStore():
		err = b.st.UpdateLocked(ctx, storedLocks(b.accounts()), func(tx store.Tx) error {
			return updateBudgets(ctx, tx, b, func(us []*BudgetUsage, ls []BudgetLimits) error {
				var err error
				if lefts[0], err = ls[0].take(us[0], now); err != nil {
					return err
				}
				for i, p := range b.parents {
					seen := *us[i+1]
					if lefts[i+1], err = ls[i+1].take(us[i+1], p.b.clock()); err != nil {
						return b.parentRefusal(i, seen, err)
					}
				}
				return nil
			})
		})
	case b.inMemory():
		// Always the key's lock first, then its parents' in order: no parent locks a child.
		o := b.own()
		o.mu.Lock()
		for _, p := range b.parents {
			p.b.own().mu.Lock()
		}
		if lefts[0], err = b.limits.take(&o.used, now); err == nil {
			for i, p := range b.parents {
				po := p.b.own()
				seen := po.used
				if lefts[i+1], err = p.b.limits.take(&po.used, p.b.clock()); err != nil {
					// Given back: a parent refused the request.
					o.used.Calls--
					for _, q := range b.parents[:i] {
						q.b.own().used.Calls--
					}
					err = b.parentRefusal(i, seen, err)
					break
				}
			}
		}
		for i := len(b.parents) - 1; i >= 0; i-- {
			b.parents[i].b.own().mu.Unlock()
		}
		o.mu.Unlock()
	default: // accounts in different places: taken one after the other, given back on refusal
		if lefts[0], err = b.reserveOwn(ctx, now); err != nil {
			return 0, err
		}
		for i, p := range b.parents {
			if lefts[i+1], err = p.b.reserveCall(ctx); err != nil {
				b.giveBack(ctx)
				for _, q := range b.parents[:i] {
					q.b.giveBack(ctx)
				}
				return 0, b.parentRefusal(i, p.b.Used(ctx), err)
			}
		}
	}
	if err != nil {
		return 0, err
	}
	for _, l := range lefts {
		if l > 0 && (tokensLeft == 0 || l < tokensLeft) {
			tokensLeft = l
		}
	}
	return tokensLeft, nil
}

// reserveOwn takes one call from b's own account, without its parents'.
func (b *Budget) reserveOwn(ctx context.Context, now time.Time) (int64, error) {
	if b.st != nil {
		var left int64
		err := b.st.UpdateLocked(ctx, BudgetLocks(b.id), func(tx store.Tx) error {
			rec, limits, err := b.readToReserve(ctx, tx)
			if err != nil {
				return err
			}
			if left, err = limits.take(&rec.Used, now); err != nil {
				return err
			}
			return store.PutJSON(ctx, tx, store.Budgets, b.id, rec)
		})
		return left, err
	}
	o := b.own()
	o.mu.Lock()
	defer o.mu.Unlock()
	return b.limits.take(&o.used, now)
}

// giveBack returns a call reserveOwn took.
func (b *Budget) giveBack(ctx context.Context) {
	if b.st != nil {
		_ = b.update(context.WithoutCancel(ctx), func(u *BudgetUsage) error {
			u.Calls = max(u.Calls-1, 0)
			return nil
		})
		return
	}
	o := b.own()
	o.mu.Lock()
	o.used.Calls = max(o.used.Calls-1, 0)
	o.mu.Unlock()
}

// chargeAll is charge of a Budget with parents: the tokens and cost recorded in all, and
// the alert thresholds any reached.
func (b *Budget) chargeAll(ctx context.Context, tokens int64, cost float64, answered bool, models []string, ends *leaseHold) ([]BudgetAlert, []AccountState, error) {
	states := make([]AccountState, 0, 1+len(b.parents))
	if !b.sameStore() {
		alerts, state, err := b.chargeOwn(ctx, tokens, cost, answered, modelAt(models, 0), ends)
		if err == nil {
			states = append(states, state)
		}
		for i, p := range b.parents {
			palerts, pstate, perr := p.b.chargeOwn(ctx, tokens, cost, answered, modelAt(models, i+1), ends)
			alerts, err = append(alerts, palerts...), errors.Join(err, b.goneNamed(i, perr))
			if perr == nil {
				pstate.Kind, pstate.Name = p.kind, p.name
				states = append(states, pstate)
			}
		}
		return alerts, states, err
	}
	ctx = context.WithoutCancel(ctx) // the tokens were spent
	accounts := b.accounts()
	var gone error
	var alerts []BudgetAlert
	fold, done := ends.ending()
	err := b.st.UpdateLocked(ctx, storedLocks(accounts), func(tx store.Tx) error {
		gone, alerts, states = nil, nil, states[:0] // a store transaction may run this again
		// Each account still stored is charged: one deleted while the request was in
		// flight (a key revoked, a team or end user deleted) loses nothing of the others'.
		for i, x := range accounts {
			rec, err := store.GetJSON[sharedBudget](ctx, tx, store.Budgets, x.id)
			if errors.Is(err, store.ErrNotFound) {
				gone = errors.Join(gone, b.accountGone(i))
				continue
			}
			if err != nil {
				return fmt.Errorf("completions: budget %s: %w", x.id, err)
			}
			alerts = append(alerts, x.chargeAdd(rec.Limits, &rec.Used, x.clock(), tokens, cost, answered, modelAt(models, i))...)
			state := rec.Limits.state(rec.Used)
			if i > 0 {
				state.Kind, state.Name = b.parents[i-1].kind, b.parents[i-1].name
			}
			states = append(states, state)
			fold(x, &rec, time.Now())
			if err := store.PutJSON(ctx, tx, store.Budgets, x.id, rec); err != nil {
				return err
			}
		}
		return nil
	})
	done(err == nil)
	if err != nil {
		// None was charged: each is kept to charge again (one deleted meanwhile is then
		// found gone).
		failed := &chargeError{accounts: accounts, models: make([]string, len(accounts)), err: err}
		copy(failed.models, models)
		return nil, nil, errors.Join(failed, gone)
	}
	return alerts, states, gone
}

// accountGone is the error saying account i of b.accounts() is gone.
func (b *Budget) accountGone(i int) error {
	err := error(&BudgetGoneError{ID: b.accounts()[i].id})
	if i > 0 {
		err = b.goneNamed(i-1, err)
	}
	return err
}

// accounts is b followed by its parents.
func (b *Budget) accounts() []*Budget {
	out := make([]*Budget, 0, 1+len(b.parents))
	out = append(out, b)
	for _, p := range b.parents {
		out = append(out, p.b)
	}
	return out
}

// updateBudgets applies fn to the stored accounts of b and its parents in tx (in that
// order), with the limits a call reserved on each is held to (readToReserve: a pending
// account is stored by this transaction), and writes them all back when it succeeds.
func updateBudgets(ctx context.Context, tx store.Tx, b *Budget, fn func(us []*BudgetUsage, ls []BudgetLimits) error) error {
	accounts := b.accounts()
	recs := make([]sharedBudget, len(accounts))
	us := make([]*BudgetUsage, len(accounts))
	ls := make([]BudgetLimits, len(accounts))
	for i, x := range accounts {
		rec, limits, err := x.readToReserve(ctx, tx)
		if err != nil && i > 0 {
			return b.goneNamed(i-1, err)
		}
		if err != nil {
			return err
		}
		recs[i], ls[i] = rec, limits
		us[i] = &recs[i].Used
	}
	if err := fn(us, ls); err != nil {
		return err
	}
	for i, x := range accounts {
		if err := store.PutJSON(ctx, tx, store.Budgets, x.id, recs[i]); err != nil {
			return err
		}
	}
	return nil
}

// costBound reports whether b or a parent bounds USD.
func (b *Budget) costBound() bool {
	if b.limits.MaxCostUSD > 0 {
		return true
	}
	for _, p := range b.parents {
		if p.b.limits.MaxCostUSD > 0 {
			return true
		}
	}
	return false
}
