package completions

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/switchyard-ai/switchyard/store"
)

// spendLease is what one process holds of a stored account's requests in flight: the spend
// gate of every process sharing the account counts them with its own, so requests sent at
// once to several replicas are admitted as if one process had them all.
type spendLease struct {
	// Process is the holder (store.Counters.Process).
	Process string `json:"p"`
	// N is how many of its requests are in flight.
	N int `json:"n"`
	// Until is when the others stop counting them: the latest deadline of the requests
	// it holds, and a margin. A process that dies holding requests (kill -9, a lost host)
	// holds the budget back until then, never longer.
	Until time.Time `json:"until"`
}

const (
	// leaseMargin is how long past its requests' deadline a process's lease still counts:
	// a request ends (is charged and released) a little after its deadline.
	leaseMargin = time.Minute
	// leaseNoDeadline is a lease's length for a request without a deadline.
	leaseNoDeadline = 10 * time.Minute
	// leaseReleaseTimeout bounds the write that ends a request's lease.
	leaseReleaseTimeout = 5 * time.Second
	// leasePollFirst and leasePollMax bound how often a request waiting for another
	// process's first request of an account reads the account again.
	leasePollFirst = 50 * time.Millisecond
	leasePollMax   = time.Second
)

// errLeaseWait ends an admission transaction that writes nothing because the request
// must wait for those in flight.
var errLeaseWait = errors.New("completions: wait for the requests in flight")

// leaseRefused ends an admission transaction that writes nothing because the request is
// refused: over says which bound it would reach (BudgetLimits.projected).
type leaseRefused struct{ over string }

func (e *leaseRefused) Error() string { return e.over }

// othersInFlight is the requests the leases in rec of processes other than process hold
// at now (a lease past its Until holds none).
func (rec *sharedBudget) othersInFlight(process string, now time.Time) int {
	n := 0
	for _, l := range rec.InFlight {
		if l.Process != process && l.Until.After(now) {
			n += l.N
		}
	}
	return n
}

// setLease sets process's lease in rec to n requests, stretching its Until to until (when
// later), and drops the leases that ended: process's at 0 requests, the others' past
// their Until.
func (rec *sharedBudget) setLease(process string, n int, until, now time.Time) {
	found := false
	for i := range rec.InFlight {
		if l := &rec.InFlight[i]; l.Process == process {
			found = true
			l.N = n
			if until.After(l.Until) {
				l.Until = until
			}
		}
	}
	if !found && n > 0 {
		rec.InFlight = append(rec.InFlight, spendLease{Process: process, N: n, Until: until})
	}
	rec.InFlight = slices.DeleteFunc(rec.InFlight, func(l spendLease) bool {
		if l.Process == process {
			return l.N <= 0
		}
		return !l.Until.After(now)
	})
	if len(rec.InFlight) == 0 {
		rec.InFlight = nil
	}
}

// admitShared is admitOwn for a stored account when the processes on its store share their
// limits (Options.SharedLimits): the requests in flight it counts are this process's and
// the others' leases in the account, read in the transaction that writes this process's
// lease with the request in it, so processes admitting at once are admitted one after
// the other, each counting the others'. This process's writes of an account's lease go one
// at a time (lockLease), so the lease stored is always its count. The request waits (reading
// the account again now and then) while nothing is spent yet and another request is in
// flight anywhere; release ends it here and in the lease. When the account cannot be read
// or written (the store is down, the account gone) it falls back to this process's gate,
// whose request then fails as the store tells it. A request's accounts that are all on one
// store are admitted by enterLeased instead, in the transaction that takes their call;
// admitShared is for the others (and admit's callers that take no call).
func (sg *spendGate) admitShared(ctx context.Context, b *Budget, choice bool) (release func(), err error) {
	key := gateKey(b)
	process := sg.shared.Process()
	l := b.limits
	poll := leasePollFirst
	for {
		now := time.Now()
		if err := sg.rateOwn(b, now); err != nil {
			return nil, err
		}
		until := now.Add(leaseNoDeadline)
		if dl, ok := ctx.Deadline(); ok {
			until = dl.Add(leaseMargin)
		}
		unlock := sg.lockLease(key)
		var st *gateState
		err := b.st.UpdateLocked(ctx, BudgetLocks(b.id), func(tx store.Tx) error {
			rec, err := store.GetJSON[sharedBudget](ctx, tx, store.Budgets, b.id)
			if err != nil {
				return err
			}
			u := rec.Used
			if !u.PeriodStart.IsZero() {
				l.roll(&u, now)
			}
			mine := sg.inflight(key)
			n := mine + rec.othersInFlight(process, now)
			if u.CostUSD == 0 && u.Tokens == 0 && n > 0 && !choice {
				return errLeaseWait // nothing spent yet to estimate a request's cost from
			}
			if over := l.projected(u, n); over != "" {
				return &leaseRefused{over}
			}
			rec.setLease(process, mine+1, until, now)
			return store.PutJSON(ctx, tx, store.Budgets, b.id, rec)
		})
		if err == nil {
			st = sg.enter(key)
		}
		unlock()
		var refused *leaseRefused
		switch {
		case err == nil:
			return sg.leased(ctx, b, key, st), nil
		case errors.As(err, &refused):
			return nil, fmt.Errorf("%w: %s", ErrBudgetExceeded, refused.over)
		case errors.Is(err, errLeaseWait):
		case ctx.Err() != nil:
			return nil, context.Cause(ctx)
		default:
			return sg.admitLocal(ctx, b, choice)
		}
		if err := sg.waitLease(ctx, key, poll); err != nil {
			return nil, err
		}
		poll = min(2*poll, leasePollMax)
	}
}

// waitLease waits, before an admission tries the account key again, for one of this
// process's requests of it to end, or poll, long enough for another process's to have; the
// error is ctx's cause when ctx ends first.
func (sg *spendGate) waitLease(ctx context.Context, key accountKey, poll time.Duration) error {
	sg.mu.Lock()
	var idle chan struct{}
	if st := sg.m[key]; st != nil {
		idle = st.waitIdle()
	}
	sg.mu.Unlock()
	t := time.NewTimer(poll)
	defer t.Stop()
	select {
	case <-idle:
	case <-t.C:
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	return nil
}

// leased returns the release of a request admitShared admitted (st, counted in this
// process's gate): it counts the request out here and writes this process's lease with
// what is left (also when the request's own context ended: the write is bounded apart).
func (sg *spendGate) leased(ctx context.Context, b *Budget, key accountKey, st *gateState) func() {
	process := sg.shared.Process()
	var once sync.Once
	return func() {
		once.Do(func() {
			unlock := sg.lockLease(key)
			defer unlock()
			sg.leave(key, st)
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), leaseReleaseTimeout)
			defer cancel()
			err := b.st.UpdateLocked(rctx, BudgetLocks(b.id), func(tx store.Tx) error {
				rec, err := store.GetJSON[sharedBudget](rctx, tx, store.Budgets, b.id)
				if err != nil {
					return err
				}
				now := time.Now()
				rec.setLease(process, sg.inflight(key), time.Time{}, now)
				return store.PutJSON(rctx, tx, store.Budgets, b.id, rec)
			})
			if err != nil && !errors.Is(err, store.ErrNotFound) && sg.warn != nil {
				// The others count the lease until its Until; this process's next request
				// of the account writes it right.
				sg.warn(ctx, "completions: ending a budget's request in flight in the store", "budget", b.id, "err", err)
			}
		})
	}
}

// keyLock is a mutex of one account's lease writes in this process (spendGate.lockLease).
type keyLock struct {
	mu   sync.Mutex
	refs int
}

// lockLease locks key's lease writes in this process and returns the unlock.
func (sg *spendGate) lockLease(key accountKey) (unlock func()) {
	sg.mu.Lock()
	if sg.locks == nil {
		sg.locks = map[accountKey]*keyLock{}
	}
	kl := sg.locks[key]
	if kl == nil {
		kl = &keyLock{}
		sg.locks[key] = kl
	}
	kl.refs++
	sg.mu.Unlock()
	kl.mu.Lock()
	return func() {
		kl.mu.Unlock()
		sg.mu.Lock()
		defer sg.mu.Unlock()
		if kl.refs--; kl.refs == 0 {
			delete(sg.locks, key)
		}
	}
}

// leaseTxTimeout bounds a transaction that writes a lease in (enterLeased's): it runs
// apart from the request's context, so that a request whose context ends as the
// transaction commits knows whether it holds the lease (and a call of every account).
const leaseTxTimeout = 5 * time.Second

// leaseHold is what one request enterLeased admitted holds: the leases in the accounts it
// holds its place in across processes (each with its entry in this process's gate), and
// the releases of the accounts admitted apart (admitOwn's: in memory, or with no USD or
// token bound). A lease ends once: with the request's charge of its answer (ending), or
// else with release.
type leaseHold struct {
	sg   *spendGate
	ctx  context.Context // the request's, without its cancellation: for logging
	mu   sync.Mutex      // one end at a time: a charge's, release's
	held []leaseEntry
	// apart are the releases of the accounts admitted apart, in admission order.
	apart    []func()
	released bool
}

// leaseEntry is one account's lease in a leaseHold.
type leaseEntry struct {
	x     *Budget
	st    *gateState
	ended bool
}

// leasedAccounts returns the indexes in b.accounts() of the accounts whose requests in
// flight are leased in their stored records (stored, with a USD or token bound, this
// process sharing its limits: admitShared's), and the store, when enterLeased can admit a
// request to them in the transaction that reserves its call: every stored account of b on
// that one store, none twice. nil: there are none, or admit and reserveCall go apart.
func (sg *spendGate) leasedAccounts(b *Budget) ([]int, *store.Store) {
	if sg.shared == nil {
		return nil, nil
	}
	var leased []int
	var st *store.Store
	ids := map[string]bool{}
	for i, x := range b.accounts() {
		if x.st == nil {
			continue
		}
		if st != nil && x.st != st || ids[x.id] {
			return nil, nil
		}
		st, ids[x.id] = x.st, true
		if x.limits.MaxCostUSD > 0 || x.limits.MaxTokens > 0 {
			leased = append(leased, i)
		}
	}
	if len(leased) == 0 {
		return nil, nil
	}
	return leased, st
}

// leaseWait ends an admission transaction that writes nothing because the request must
// wait for the requests in flight of account key (errLeaseWait).
type leaseWait struct{ key accountKey }

func (e *leaseWait) Error() string { return errLeaseWait.Error() }
func (e *leaseWait) Unwrap() error { return errLeaseWait }

// enterLeased is admit and reserveCall of a request of b in one: the accounts at leased
// (leasedAccounts') are admitted as admitShared admits them, in the store transaction
// that takes the call from every stored account of b (one, on st) and writes their
// leases with the request in them, so that each account's record is written once to let
// a request in; the other accounts are admitted apart (admitOwn) and their calls taken in
// memory. While a leased account says wait (nothing spent yet and another request in
// flight) the transaction writes nothing and runs again later. taken says err is a
// refusal by an account's calls, tokens or dollars (reserveCall's), not by the requests
// in flight. The returned hold ends the request's leases (leaseHold).
func (sg *spendGate) enterLeased(ctx context.Context, b *Budget, leased []int, st *store.Store, choice bool) (left int64, hold *leaseHold, taken bool, err error) {
	accounts := b.accounts()
	isLeased := make([]bool, len(accounts))
	for _, i := range leased {
		isLeased[i] = true
	}
	hold = &leaseHold{sg: sg, ctx: context.WithoutCancel(ctx)}
	giveUp := func() {
		for i := len(hold.apart) - 1; i >= 0; i-- {
			hold.apart[i]()
		}
	}
	for i, x := range accounts {
		if isLeased[i] {
			continue
		}
		release, err := sg.admitOwn(ctx, x, choice)
		if err != nil {
			giveUp()
			if i > 0 {
				if errors.Is(err, ErrBudgetExceeded) {
					err = b.parentRefusal(i-1, x.Used(ctx), err)
				}
				err = b.parents[i-1].namedRate(err)
			}
			return 0, nil, false, err
		}
		hold.apart = append(hold.apart, release)
	}
	process := sg.shared.Process()
	poll := leasePollFirst
	for {
		now := time.Now()
		for _, i := range leased {
			if err := sg.rateOwn(accounts[i], now); err != nil {
				giveUp()
				if i > 0 {
					err = b.parents[i-1].namedRate(err)
				}
				return 0, nil, false, err
			}
		}
		until := now.Add(leaseNoDeadline)
		if dl, ok := ctx.Deadline(); ok {
			until = dl.Add(leaseMargin)
		}
		lefts, inMemory, err := b.takeInMemory()
		if err != nil {
			giveUp()
			return 0, nil, true, err
		}
		ids := make([]string, 0, len(leased))
		for _, i := range leased {
			ids = append(ids, accounts[i].id)
		}
		unlock := sg.lockLeases(ids)
		taken = false
		tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), leaseTxTimeout)
		err = st.UpdateLocked(tctx, storedLocks(accounts), func(tx store.Tx) error {
			taken = false // a store transaction may run this again
			recs := make([]sharedBudget, len(accounts))
			ls := make([]BudgetLimits, len(accounts))
			for i, x := range accounts {
				if x.st == nil {
					continue
				}
				rec, limits, err := x.readToReserve(tctx, tx)
				if err != nil && i > 0 {
					return b.goneNamed(i-1, err)
				}
				if err != nil {
					return err
				}
				recs[i], ls[i] = rec, limits
			}
			mine := make([]int, len(accounts))
			for _, i := range leased {
				x, rec := accounts[i], &recs[i]
				u := rec.Used
				if !u.PeriodStart.IsZero() {
					x.limits.roll(&u, now)
				}
				mine[i] = sg.inflight(storedAccount(x.id))
				n := mine[i] + rec.othersInFlight(process, now)
				if u.CostUSD == 0 && u.Tokens == 0 && n > 0 && !choice {
					return &leaseWait{key: storedAccount(x.id)} // nothing spent yet to estimate a request's cost from
				}
				if over := x.limits.projected(u, n); over != "" {
					err := fmt.Errorf("%w: %s", ErrBudgetExceeded, over)
					if i > 0 {
						err = b.parentRefusal(i-1, u, err)
					}
					return err
				}
			}
			taken = true
			for i, x := range accounts {
				if x.st == nil {
					continue
				}
				seen := recs[i].Used
				var err error
				if lefts[i], err = ls[i].take(&recs[i].Used, x.clock()); err != nil {
					if i > 0 {
						err = b.parentRefusal(i-1, seen, err)
					}
					return err
				}
			}
			for _, i := range leased {
				recs[i].setLease(process, mine[i]+1, until, now)
			}
			for i, x := range accounts {
				if x.st == nil {
					continue
				}
				if err := store.PutJSON(tctx, tx, store.Budgets, x.id, recs[i]); err != nil {
					return err
				}
			}
			return nil
		})
		cancel()
		if err == nil {
			for _, i := range leased {
				hold.held = append(hold.held, leaseEntry{x: accounts[i], st: sg.enter(storedAccount(accounts[i].id))})
			}
		}
		unlock()
		if err == nil {
			for _, l := range lefts {
				if l > 0 && (left == 0 || l < left) {
					left = l
				}
			}
			return left, hold, false, nil
		}
		b.giveBackInMemory(inMemory)
		var wait *leaseWait
		if !errors.As(err, &wait) {
			giveUp()
			return 0, nil, taken, err
		}
		if err := sg.waitLease(ctx, wait.key, poll); err != nil {
			giveUp()
			return 0, nil, false, err
		}
		poll = min(2*poll, leasePollMax)
	}
}

// takeInMemory takes one call from each of b's accounts kept in memory (in b.accounts()
// order; the stored ones are left to the caller), giving back those taken when one
// refuses. lefts has a slot per account; taken lists the indexes of those taken.
func (b *Budget) takeInMemory() (lefts []int64, taken []int, err error) {
	accounts := b.accounts()
	lefts = make([]int64, len(accounts))
	for i, x := range accounts {
		if x.st != nil {
			continue
		}
		o := x.own()
		o.mu.Lock()
		seen := o.used
		lefts[i], err = x.limits.take(&o.used, x.clock())
		o.mu.Unlock()
		if err != nil {
			b.giveBackInMemory(taken)
			if i > 0 {
				err = b.parentRefusal(i-1, seen, err)
			}
			return nil, nil, err
		}
		taken = append(taken, i)
	}
	return lefts, taken, nil
}

// giveBackInMemory gives back the calls takeInMemory took from the accounts at taken.
func (b *Budget) giveBackInMemory(taken []int) {
	accounts := b.accounts()
	for _, i := range taken {
		o := accounts[i].own()
		o.mu.Lock()
		o.used.Calls = max(o.used.Calls-1, 0)
		o.mu.Unlock()
	}
}

// ending starts to end, in the store transaction of the charge of the request's answer,
// the leases of h still held (nil h: none): fold writes the lease of account x into its
// record rec (nothing for an account h holds none of), the request counted out; done,
// called once the transaction ended, counts the request out of this process's gate of
// the accounts fold wrote when it committed, and leaves the others to release. Until
// done, h's accounts' lease writes in this process wait (lockLease).
func (h *leaseHold) ending() (fold func(x *Budget, rec *sharedBudget, now time.Time), done func(committed bool)) {
	if h == nil {
		return func(*Budget, *sharedBudget, time.Time) {}, func(bool) {}
	}
	h.mu.Lock()
	var ids []string
	for _, e := range h.held {
		if !e.ended {
			ids = append(ids, e.x.id)
		}
	}
	unlock := h.sg.lockLeases(ids)
	process := h.sg.shared.Process()
	folded := map[string]bool{}
	fold = func(x *Budget, rec *sharedBudget, now time.Time) {
		for _, e := range h.held {
			if !e.ended && e.x.id == x.id {
				rec.setLease(process, h.sg.inflight(storedAccount(x.id))-1, time.Time{}, now)
				folded[x.id] = true
			}
		}
	}
	done = func(committed bool) {
		if committed {
			for i := range h.held {
				if e := &h.held[i]; !e.ended && folded[e.x.id] {
					h.sg.leave(storedAccount(e.x.id), e.st)
					e.ended = true
				}
			}
		}
		unlock()
		h.mu.Unlock()
	}
	return fold, done
}

// release ends the request: it releases the accounts admitted apart, and counts it out
// of this process's gate of the accounts whose lease no charge ended and writes their
// leases with what is left, in one transaction bounded apart from the request's
// context. Only the first call counts.
func (h *leaseHold) release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.released {
		return
	}
	h.released = true
	for i := len(h.apart) - 1; i >= 0; i-- {
		h.apart[i]()
	}
	var open []*leaseEntry
	var ids []string
	for i := range h.held {
		if e := &h.held[i]; !e.ended {
			open, ids = append(open, e), append(ids, e.x.id)
		}
	}
	if len(open) == 0 {
		return
	}
	defer h.sg.lockLeases(ids)()
	for _, e := range open {
		h.sg.leave(storedAccount(e.x.id), e.st)
		e.ended = true
	}
	process := h.sg.shared.Process()
	rctx, cancel := context.WithTimeout(h.ctx, leaseReleaseTimeout)
	defer cancel()
	err := open[0].x.st.UpdateLocked(rctx, BudgetLocks(ids...), func(tx store.Tx) error {
		now := time.Now()
		for _, e := range open {
			rec, err := store.GetJSON[sharedBudget](rctx, tx, store.Budgets, e.x.id)
			if errors.Is(err, store.ErrNotFound) {
				continue // deleted meanwhile: no lease to end
			}
			if err != nil {
				return err
			}
			rec.setLease(process, h.sg.inflight(storedAccount(e.x.id)), time.Time{}, now)
			if err := store.PutJSON(rctx, tx, store.Budgets, e.x.id, rec); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil && h.sg.warn != nil {
		// The others count the lease until its Until; this process's next request of
		// the account writes it right.
		h.sg.warn(h.ctx, "completions: ending a budget's request in flight in the store", "budget", open[0].x.id, "err", err)
	}
}

// lockLeases locks the lease writes in this process of the accounts ids (lockLease), in
// the order of their ids, whatever the order given: requests locking several accounts
// never each wait for one the other holds. It returns the unlock.
func (sg *spendGate) lockLeases(ids []string) (unlock func()) {
	ids = slices.Clone(ids)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	unlocks := make([]func(), len(ids))
	for i, id := range ids {
		unlocks[i] = sg.lockLease(storedAccount(id))
	}
	return func() {
		for i := len(unlocks) - 1; i >= 0; i-- {
			unlocks[i]()
		}
	}
}
