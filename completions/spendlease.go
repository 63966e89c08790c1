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
// whose request then fails as the store tells it.
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
		err := b.st.Update(ctx, func(tx store.Tx) error {
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
		// Waiting: for one of this process's requests of the account to end, or long enough
		// for another process's to have.
		sg.mu.Lock()
		var idle chan struct{}
		if st := sg.m[key]; st != nil {
			idle = st.idle
		}
		sg.mu.Unlock()
		t := time.NewTimer(poll)
		select {
		case <-idle:
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, context.Cause(ctx)
		}
		t.Stop()
		poll = min(2*poll, leasePollMax)
	}
}

// leased returns the release of a request admitShared admitted (st, counted in this
// process's gate): it counts the request out here and writes this process's lease with
// what is left (also when the request's own context ended: the write is bounded apart).
func (sg *spendGate) leased(ctx context.Context, b *Budget, key any, st *gateState) func() {
	process := sg.shared.Process()
	var once sync.Once
	return func() {
		once.Do(func() {
			unlock := sg.lockLease(key)
			defer unlock()
			sg.leave(key, st)
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), leaseReleaseTimeout)
			defer cancel()
			err := b.st.Update(rctx, func(tx store.Tx) error {
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
func (sg *spendGate) lockLease(key any) (unlock func()) {
	sg.mu.Lock()
	if sg.locks == nil {
		sg.locks = map[any]*keyLock{}
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
