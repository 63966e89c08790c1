package completions

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/switchyard-ai/switchyard/store"
)

// A Budget may sit inside a parent Budget (SetParent): a team's account that every key of
// the team draws on. A request is then refused when either account refuses it, its call is
// reserved in both and its cost charged to both. Two shared Budgets on one store are read
// and written in one store transaction, so that replicas on the store never both take the
// team's last call and a refusal by the team leaves the key's account untouched.

// BudgetExceededError is a refusal by a named parent Budget (SetParent's name: a team's
// id); it matches ErrBudgetExceeded. Used is what the parent had used, Limits its limits.
type BudgetExceededError struct {
	Name   string
	Used   BudgetUsage
	Limits BudgetLimits
	// Reason is the refusal as an unnamed Budget gives it.
	Reason error
}

func (e *BudgetExceededError) Error() string {
	return fmt.Sprintf("completions: budget exceeded: %s: %s", e.Name, reasonText(e.Reason))
}

// Is matches ErrBudgetExceeded.
func (e *BudgetExceededError) Is(target error) bool { return target == ErrBudgetExceeded }

// Unwrap returns the unnamed refusal.
func (e *BudgetExceededError) Unwrap() error { return e.Reason }

// reasonText is err's text after ErrBudgetExceeded's.
func reasonText(err error) string {
	msg := err.Error()
	if len(msg) > len(ErrBudgetExceeded.Error())+2 && msg[:len(ErrBudgetExceeded.Error())] == ErrBudgetExceeded.Error() {
		return msg[len(ErrBudgetExceeded.Error())+2:]
	}
	return msg
}

// parentRefusal names the parent in its refusal err (pu: what it had used); other
// errors pass unchanged.
func (b *Budget) parentRefusal(pu BudgetUsage, err error) error {
	if !errors.Is(err, ErrBudgetExceeded) {
		return err
	}
	return &BudgetExceededError{Name: b.parentName, Used: pu, Limits: b.parent.Limits(), Reason: err}
}

// sameStore reports whether b and its parent are shared Budgets on one store.
func (b *Budget) sameStore() bool {
	return b.st != nil && b.parent.st == b.st
}

// reserveBoth is reserveCall of a Budget with a parent: a call taken from both or neither.
// tokensLeft is the fewer tokens either has left (0: neither has a token bound).
func (b *Budget) reserveBoth(ctx context.Context) (tokensLeft int64, err error) {
	p := b.parent
	now, pnow := b.clock(), p.clock()
	var mine, theirs int64
	switch {
	case b.sameStore():
		err = b.st.Update(ctx, func(tx store.Tx) error {
			return updateBudgets(ctx, tx, b, p, func(u, pu *BudgetUsage) error {
				var err error
				if mine, err = b.limits.take(u, now); err != nil {
					return err
				}
				seen := *pu
				if theirs, err = p.limits.take(pu, pnow); err != nil {
					return b.parentRefusal(seen, err)
				}
				return nil
			})
		})
	case b.st == nil && p.st == nil:
		b.mu.Lock()
		p.mu.Lock() // always the child's lock first: no parent locks its children
		if mine, err = b.limits.take(&b.used, now); err == nil {
			seen := p.used
			if theirs, err = p.limits.take(&p.used, pnow); err != nil {
				b.used.Calls-- // given back: the parent refused the request
				err = b.parentRefusal(seen, err)
			}
		}
		p.mu.Unlock()
		b.mu.Unlock()
	default: // accounts in different places: taken one after the other, given back on refusal
		if mine, err = b.reserveOwn(ctx, now); err != nil {
			return 0, err
		}
		if theirs, err = p.reserveCall(ctx); err != nil {
			b.giveBack(ctx)
			return 0, b.parentRefusal(p.Used(ctx), err)
		}
	}
	if err != nil {
		return 0, err
	}
	switch {
	case mine == 0:
		return theirs, nil
	case theirs == 0:
		return mine, nil
	}
	return min(mine, theirs), nil
}

// reserveOwn takes one call from b's own account, without its parent's.
func (b *Budget) reserveOwn(ctx context.Context, now time.Time) (int64, error) {
	if b.st != nil {
		var left int64
		err := b.update(ctx, func(u *BudgetUsage) error {
			var err error
			left, err = b.limits.take(u, now)
			return err
		})
		return left, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.limits.take(&b.used, now)
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
	b.mu.Lock()
	b.used.Calls = max(b.used.Calls-1, 0)
	b.mu.Unlock()
}

// chargeBoth is charge of a Budget with a parent: the tokens and cost recorded in both,
// and the alert thresholds either reached.
func (b *Budget) chargeBoth(ctx context.Context, tokens int64, cost float64, answered bool) ([]BudgetAlert, error) {
	p := b.parent
	if !b.sameStore() {
		alerts, err := b.chargeOwn(ctx, tokens, cost, answered)
		palerts, perr := p.chargeOwn(ctx, tokens, cost, answered)
		return append(alerts, palerts...), errors.Join(err, perr)
	}
	ctx = context.WithoutCancel(ctx) // the tokens were spent
	var gone error
	var alerts []BudgetAlert
	err := b.st.Update(ctx, func(tx store.Tx) error {
		gone, alerts = nil, nil // a store transaction may run this again
		// Each account still stored is charged: one deleted while the request was in
		// flight (a key revoked, a team deleted after the key left it) loses nothing of
		// the other's.
		for _, x := range []*Budget{b, p} {
			rec, err := store.GetJSON[sharedBudget](ctx, tx, store.Budgets, x.id)
			if errors.Is(err, store.ErrNotFound) {
				gone = errors.Join(gone, fmt.Errorf("%w: budget %s", ErrBudgetGone, x.id))
				continue
			}
			if err != nil {
				return fmt.Errorf("completions: budget %s: %w", x.id, err)
			}
			alerts = append(alerts, x.chargeAdd(rec.Limits, &rec.Used, x.clock(), tokens, cost, answered)...)
			if err := store.PutJSON(ctx, tx, store.Budgets, x.id, rec); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, errors.Join(err, gone)
	}
	return alerts, gone
}

// updateBudgets applies fn to the stored accounts of b and p in tx, and writes both back
// when it succeeds.
func updateBudgets(ctx context.Context, tx store.Tx, b, p *Budget, fn func(u, pu *BudgetUsage) error) error {
	read := func(x *Budget) (sharedBudget, error) {
		rec, err := store.GetJSON[sharedBudget](ctx, tx, store.Budgets, x.id)
		if errors.Is(err, store.ErrNotFound) {
			return rec, fmt.Errorf("%w: budget %s", ErrBudgetGone, x.id)
		}
		if err != nil {
			return rec, fmt.Errorf("completions: budget %s: %w", x.id, err)
		}
		return rec, nil
	}
	rec, err := read(b)
	if err != nil {
		return err
	}
	prec, err := read(p)
	if err != nil {
		return err
	}
	if err := fn(&rec.Used, &prec.Used); err != nil {
		return err
	}
	if err := store.PutJSON(ctx, tx, store.Budgets, b.id, rec); err != nil {
		return err
	}
	return store.PutJSON(ctx, tx, store.Budgets, p.id, prec)
}

// costBound reports whether b or its parent bounds USD.
func (b *Budget) costBound() bool {
	return b.limits.MaxCostUSD > 0 || (b.parent != nil && b.parent.limits.MaxCostUSD > 0)
}
