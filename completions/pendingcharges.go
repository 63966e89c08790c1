package completions

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchyard-ai/switchyard/store"
)

// The charge of an answered request that its store could not take (the store down, its
// disk full, PostgreSQL restarting) is not lost: it is kept in the gateway's pending
// charges, one per stored account, which a background loop applies again with backoff
// until the store takes it, and Close tries once more. Each pending charge has an id the
// account records when it is applied (sharedBudget.Applied), so one applied by a run
// whose commit's outcome never came back (store.ErrCommitUnknown) is not applied again.
// A first charge carries no such id: when its commit got no answer it is kept only if
// the store can tell later whether it committed (a *store.CommitUnknownError, PostgreSQL's
// transaction id read with the transaction's first write, at no extra round trip), and
// is applied again only once the store says it did not; else (or when the store has not
// told within maxUnansweredWait) it is logged and counted.
// Until then, admission counts a key's pending charges as spent (pendingCharges.admits):
// a store blip does not let a key spend past its bound unboundedly.
//
// The pending charges are kept in the process's memory only (a crash or kill -9 loses
// them, a Close with the store still down counts them Lost): the store is what refused
// them, so they cannot be kept there, and a file of the replica's own would be on the
// disk a bbolt store already failed on, or on a PostgreSQL replica's disk that need not
// outlive it; replayed after a restart it could apply a charge twice (an account records
// only its last maxAppliedCharges ids).
//
// A pending charge belongs to the period of the account it was incurred in (its at, by the
// account's clock): applied after the account's period was reset (BudgetLimits.ResetEvery),
// it is recorded as applied but not counted in the new period's calls, tokens, cost or
// thresholds, and admission no longer counts it — the period it belonged to is over and its
// spend was dropped with it, as LiteLLM's reset drops a key's spend; a model's entry
// (BudgetLimits.Models), whose periods are its own, is charged when its period still holds
// at. The request is in the spend logs all the same (they record answers, not accounts).

const (
	// maxPendingCharges bounds the charges kept: past it a failed charge is logged as
	// lost (PendingChargeStats.Lost), as the process's memory cannot grow without bound.
	maxPendingCharges = 10000
	// maxAppliedCharges bounds the ids of applied pending charges an account keeps.
	maxAppliedCharges = 64
	// pendingChargeTimeout bounds each attempt of a pending charge.
	pendingChargeTimeout = 5 * time.Second
	// maxUnansweredWait bounds how long a first charge whose commit got no answer waits
	// for the store to tell its outcome: past it (a transaction in progress for longer
	// than a dead client's session lasts; a token the store says it will never tell,
	// store.ErrInvalid — PostgreSQL's txid_status "too old" or "in the future" — at once)
	// it is given up as unknown, as one the store cannot tell
	// is, rather than asked about for ever and counted at admission for ever. Three hours outlast a server's default TCP keepalive
	// (2 h 11 min on Linux), by which a session whose client vanished mid-commit ends and
	// its transaction, still in progress until then, aborts and is told (pgstore ends such
	// a session of its own at the first question, when the server lets it: this bound is
	// for when it does not).
	maxUnansweredWait = 3 * time.Hour
)

// PendingChargeStats says how the charges the store could not take stand (Gateway.
// PendingCharges): those still to apply and what they hold, and counts since start.
type PendingChargeStats struct {
	// Count is how many account charges are kept to apply again; CostUSD and Tokens
	// are their sums, Oldest when the oldest was answered (zero when none).
	Count   int       `json:"count"`
	CostUSD float64   `json:"cost_usd"`
	Tokens  int64     `json:"tokens"`
	Oldest  time.Time `json:"oldest,omitzero"`
	// Applied counts the kept charges applied later (or found committed by a first charge
	// whose commit got no answer); Lost those given up (the queue full, or still pending
	// at Close); Unknown the first charges whose commit's outcome never came back
	// (store.ErrCommitUnknown) and that the store cannot tell later, not applied again
	// lest they count twice.
	Applied int64 `json:"applied"`
	Lost    int64 `json:"lost"`
	Unknown int64 `json:"unknown"`
}

// pendingCharge is one account's charge kept to apply again.
type pendingCharge struct {
	id         string
	x          *Budget // a stored account
	tokens     int64
	cost       float64
	answered   bool
	model      string    // the entry of x's BudgetLimits.Models charged ("": none)
	owner, tag string    // the request's scope, for the alerts the charge raises
	at         time.Time // when it was incurred, by x's clock: the period it belongs to
	// unanswered names the transaction of a first charge whose commit got no answer
	// (a *store.CommitUnknownError's Token): applied again only once the store says it
	// did not commit. "": apply it.
	unanswered    string
	since, next   time.Time
	tries         int
	first, maxGap time.Duration
}

// pendingCharges is a Gateway's charges kept to apply again. The zero value is ready;
// its loop starts with the first charge kept.
type pendingCharges struct {
	log   *slog.Logger
	alert func(ctx context.Context, a BudgetAlert) // Options.BudgetAlert; nil: none

	// first and maxGap bound the backoff between attempts (0: 100 ms and 30 s).
	first, maxGap time.Duration
	// unansweredWait is maxUnansweredWait (0: it).
	unansweredWait time.Duration

	mu      sync.Mutex
	q       []*pendingCharge
	wake    chan struct{}
	stop    context.CancelFunc
	done    chan struct{}
	closed  bool
	applied atomic.Int64
	lost    atomic.Int64
	unknown atomic.Int64
	n       atomic.Int64 // len(q), read without the lock at every admission
}

// chargeError is the failure of the charge of stored accounts the store did not take
// (not because they were deleted): each with the model entry its charge was for.
type chargeError struct {
	accounts []*Budget
	models   []string
	err      error
}

func (e *chargeError) Error() string { return e.err.Error() }
func (e *chargeError) Unwrap() error { return e.err }

// chargeFailures returns the *chargeError in err and in the errors it joins.
func chargeFailures(err error) []*chargeError {
	var ce *chargeError
	if errors.As(err, &ce) && !isJoin(err) {
		return []*chargeError{ce}
	}
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return nil
	}
	var out []*chargeError
	for _, e := range j.Unwrap() {
		out = append(out, chargeFailures(e)...)
	}
	return out
}

func isJoin(err error) bool {
	_, ok := err.(interface{ Unwrap() []error })
	return ok
}

// chargeID is a new pending charge's id.
func chargeID() string {
	var b [12]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// keep keeps the charges failed names (from a charge of tokens and cost for scope's
// request) to apply again; a charge whose commit's outcome is unknown is logged and
// counted instead (it may have been applied).
func (pc *pendingCharges) keep(ctx context.Context, scope Scope, tokens int64, cost float64, answered bool, failed []*chargeError) {
	now := time.Now()
	for _, f := range failed {
		var cu *store.CommitUnknownError
		unanswered := ""
		if errors.As(f.err, &cu) {
			unanswered = cu.Token
		} else if errors.Is(f.err, store.ErrCommitUnknown) {
			pc.unknown.Add(int64(len(f.accounts)))
			pc.log.ErrorContext(ctx, "completions: a budget charge's outcome is unknown (the store's commit got no answer): not applied again, lest it count twice",
				"tag", scope.Tag, "accounts", accountIDs(f.accounts), "tokens", tokens, "cost_usd", cost, "err", f.err)
			continue
		}
		for i, x := range f.accounts {
			if x.st == nil {
				continue
			}
			c := &pendingCharge{id: chargeID(), x: x, tokens: tokens, cost: cost, answered: answered, model: f.models[i],
				owner: scope.Owner, tag: scope.Tag, at: x.clock(), unanswered: unanswered, since: now, next: now}
			if !pc.add(c) {
				pc.lost.Add(1)
				pc.log.ErrorContext(ctx, "completions: a budget charge the store did not take is lost: too many pending, or the gateway closed",
					"budget", x.id, "tokens", tokens, "cost_usd", cost, "pending", maxPendingCharges, "err", f.err)
				continue
			}
			if unanswered != "" {
				pc.log.WarnContext(ctx, "completions: a budget charge's commit got no answer: kept until the store tells whether it committed",
					"budget", x.id, "charge", c.id, "transaction", unanswered, "tokens", tokens, "cost_usd", cost, "err", f.err)
				continue
			}
			pc.log.WarnContext(ctx, "completions: a budget charge the store did not take is kept to apply again",
				"budget", x.id, "charge", c.id, "tokens", tokens, "cost_usd", cost, "err", f.err)
		}
	}
}

func accountIDs(xs []*Budget) []string {
	ids := make([]string, 0, len(xs))
	for _, x := range xs {
		ids = append(ids, x.id)
	}
	return ids
}

// add queues c, starting the loop when it is not running; false when the queue is full
// or closed.
func (pc *pendingCharges) add(c *pendingCharge) bool {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if pc.closed || len(pc.q) >= maxPendingCharges {
		return false
	}
	pc.q = append(pc.q, c)
	pc.n.Store(int64(len(pc.q)))
	if pc.done == nil {
		ctx, cancel := context.WithCancel(context.Background())
		pc.stop, pc.done, pc.wake = cancel, make(chan struct{}), make(chan struct{}, 1)
		go pc.loop(ctx, pc.done)
	}
	select {
	case pc.wake <- struct{}{}:
	default:
	}
	return true
}

// backoff is the wait after a charge's tries-th failed attempt.
func (pc *pendingCharges) backoff(tries int) time.Duration {
	first, maxGap := pc.first, pc.maxGap
	if first <= 0 {
		first = 100 * time.Millisecond
	}
	if maxGap <= 0 {
		maxGap = 30 * time.Second
	}
	d := first
	for range min(tries-1, 30) {
		if d *= 2; d >= maxGap {
			return maxGap
		}
	}
	return d
}

// loop applies the due charges until ctx ends, then closes done.
func (pc *pendingCharges) loop(ctx context.Context, done chan struct{}) {
	defer close(done)
	for {
		next := pc.runDue(ctx, false)
		var timer <-chan time.Time
		var t *time.Timer
		if !next.IsZero() {
			t = time.NewTimer(max(time.Until(next), 0))
			timer = t.C
		}
		select {
		case <-ctx.Done():
		case <-pc.wake:
		case <-timer:
		}
		if t != nil {
			t.Stop()
		}
		if ctx.Err() != nil {
			return
		}
	}
}

// runDue attempts the charges due (all with every), each once, and returns when the
// soonest still pending is due (zero: none).
func (pc *pendingCharges) runDue(ctx context.Context, every bool) (next time.Time) {
	pc.mu.Lock()
	now := time.Now()
	var due []*pendingCharge
	for _, c := range pc.q {
		if every || !c.next.After(now) {
			due = append(due, c)
		}
	}
	pc.mu.Unlock()
	for _, c := range due {
		if ctx.Err() != nil {
			break
		}
		pc.attempt(ctx, c)
	}
	pc.mu.Lock()
	defer pc.mu.Unlock()
	for _, c := range pc.q {
		if next.IsZero() || c.next.Before(next) {
			next = c.next
		}
	}
	return next
}

// attempt applies c once: applied (or found applied, or its account deleted) it leaves
// the queue, else it is due again after its backoff.
func (pc *pendingCharges) attempt(ctx context.Context, c *pendingCharge) {
	actx, cancel := context.WithTimeout(ctx, pendingChargeTimeout)
	defer cancel()
	if c.unanswered != "" {
		committed, err := c.x.st.CommitStatus(actx, c.unanswered)
		if err != nil && (errors.Is(err, store.ErrInvalid) || time.Since(c.since) >= cmp.Or(pc.unansweredWait, maxUnansweredWait)) {
			// The store will never tell (the token names no transaction of it, or it could
			// not tell for too long): as a first charge the store cannot tell about.
			pc.remove(c)
			pc.unknown.Add(1)
			pc.log.ErrorContext(ctx, "completions: a budget charge's commit outcome cannot be told: not applied again, lest it count twice",
				"budget", c.x.id, "charge", c.id, "transaction", c.unanswered, "tries", c.tries+1,
				"pending_for", time.Since(c.since).String(), "err", err)
			return
		}
		if err != nil {
			c.tries++
			c.next = time.Now().Add(pc.backoff(c.tries))
			pc.log.WarnContext(ctx, "completions: a budget charge's commit outcome is not known yet", "budget", c.x.id, "charge", c.id,
				"transaction", c.unanswered, "tries", c.tries, "retry_in", pc.backoff(c.tries).String(), "err", err)
			return
		}
		if committed {
			pc.remove(c)
			pc.applied.Add(1)
			pc.log.InfoContext(ctx, "completions: a budget charge whose commit got no answer had committed", "budget", c.x.id, "charge", c.id,
				"transaction", c.unanswered)
			return
		}
		c.unanswered = "" // rolled back: nothing of it was kept, apply it now
	}
	alerts, err := c.x.chargeOnce(actx, c.id, c.at, c.tokens, c.cost, c.answered, c.model)
	if err != nil && !errors.Is(err, ErrBudgetGone) {
		c.tries++
		c.next = time.Now().Add(pc.backoff(c.tries))
		pc.log.WarnContext(ctx, "completions: a pending budget charge failed again", "budget", c.x.id, "charge", c.id,
			"tries", c.tries, "retry_in", pc.backoff(c.tries).String(), "err", err)
		return
	}
	pc.remove(c)
	if err != nil {
		pc.log.InfoContext(ctx, "completions: a pending budget charge's account was deleted", "budget", c.x.id, "charge", c.id)
		return
	}
	pc.applied.Add(1)
	pc.log.InfoContext(ctx, "completions: a pending budget charge applied", "budget", c.x.id, "charge", c.id,
		"tries", c.tries+1, "pending_for", time.Since(c.since).String())
	if pc.alert != nil {
		for _, a := range alerts {
			a.Owner, a.Tag = c.owner, c.tag
			pc.alert(ctx, a)
		}
	}
}

func (pc *pendingCharges) remove(c *pendingCharge) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	pc.q = slices.DeleteFunc(pc.q, func(o *pendingCharge) bool { return o == c })
	pc.n.Store(int64(len(pc.q)))
}

// close stops the loop and attempts every charge still pending once more, within ctx;
// those still pending then are logged and counted as lost. Charges failing afterwards are
// lost at once (add refuses them).
func (pc *pendingCharges) close(ctx context.Context) error {
	pc.mu.Lock()
	pc.closed = true
	stop, done := pc.stop, pc.done
	pc.mu.Unlock()
	if stop == nil {
		return nil
	}
	stop()
	select {
	case <-done:
	case <-ctx.Done():
		return ctx.Err()
	}
	pc.runDue(ctx, true)
	pc.mu.Lock()
	left := pc.q
	pc.q = nil
	pc.n.Store(0)
	pc.mu.Unlock()
	if len(left) == 0 {
		return nil
	}
	pc.lost.Add(int64(len(left)))
	for _, c := range left {
		pc.log.ErrorContext(ctx, "completions: a pending budget charge is lost: the gateway closed before the store took it",
			"budget", c.x.id, "charge", c.id, "tokens", c.tokens, "cost_usd", c.cost, "tries", c.tries)
	}
	return nil
}

// stats reports the queue (Gateway.PendingCharges).
func (pc *pendingCharges) stats() PendingChargeStats {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	s := PendingChargeStats{Count: len(pc.q), Applied: pc.applied.Load(), Lost: pc.lost.Load(), Unknown: pc.unknown.Load()}
	for _, c := range pc.q {
		s.CostUSD += c.cost
		s.Tokens += c.tokens
		if s.Oldest.IsZero() || c.since.Before(s.Oldest) {
			s.Oldest = c.since
		}
	}
	return s
}

// owed is what the pending charges of account id incurred from the start of its period
// on hold (from zero: all of them).
func (pc *pendingCharges) owed(id string, from time.Time) (tokens int64, cost float64, ok bool) {
	if pc.n.Load() == 0 {
		return 0, 0, false
	}
	pc.mu.Lock()
	defer pc.mu.Unlock()
	for _, c := range pc.q {
		if c.x.id == id && !c.at.Before(from) {
			tokens, cost, ok = tokens+c.tokens, cost+c.cost, true
		}
	}
	return tokens, cost, ok
}

// admits refuses a request of b (ErrBudgetExceeded, naming a parent as its refusals do)
// when an account of b is spent once its pending charges are counted: they were answered
// and will be charged. Nothing is taken.
func (pc *pendingCharges) admits(ctx context.Context, b *Budget) error {
	if pc.n.Load() == 0 {
		return nil
	}
	for i, x := range b.accounts() {
		if x.st == nil {
			continue
		}
		if _, _, ok := pc.owed(x.id, time.Time{}); !ok {
			continue // none kept: no read of the account (a charge pending elsewhere is no reason)
		}
		u := x.Used(ctx) // rolled to the current period
		var from time.Time
		if x.limits.ResetEvery > 0 {
			from = u.PeriodStart // the charges of an earlier period no longer count
		}
		tokens, cost, ok := pc.owed(x.id, from)
		if !ok {
			continue
		}
		u.Tokens += tokens
		u.CostUSD += cost
		seen := u
		if _, err := x.limits.take(&u, x.clock()); err != nil {
			if i > 0 {
				return b.parentRefusal(i-1, seen, err)
			}
			return err
		}
	}
	return nil
}

// errChargeApplied ends the transaction of a pending charge its account has applied.
var errChargeApplied = errors.New("completions: charge applied already")

// chargeOnce charges x's stored account with the pending charge id, incurred at at,
// unless the account records it applied, and records it so: a run again after a commit
// whose outcome never came back applies it once. A charge of a period that has ended is
// recorded but not counted (the package's comment above says why); its model's entry is
// charged when that entry's own period holds at.
func (x *Budget) chargeOnce(ctx context.Context, id string, at time.Time, tokens int64, cost float64, answered bool, model string) ([]BudgetAlert, error) {
	var alerts []BudgetAlert
	err := x.updateRec(ctx, func(rec *sharedBudget) error {
		alerts = nil // a store transaction may run this again
		if slices.Contains(rec.Applied, id) {
			return errChargeApplied
		}
		now := x.clock()
		if rec.Limits.modelPeriodBeganAfter(rec.Used, model, at, now) {
			model = ""
		}
		if rec.Limits.periodBeganAfter(&rec.Used, at, now) {
			rec.Limits.chargeModel(&rec.Used, model, cost, now)
		} else {
			alerts = x.chargeAdd(rec.Limits, &rec.Used, now, tokens, cost, answered, model)
		}
		rec.Applied = append(rec.Applied, id)
		if n := len(rec.Applied); n > maxAppliedCharges {
			rec.Applied = slices.Clone(rec.Applied[n-maxAppliedCharges:])
		}
		return nil
	})
	if errors.Is(err, errChargeApplied) {
		return nil, nil
	}
	return alerts, err
}

// periodBeganAfter rolls u to now and reports whether its period began after at: a charge
// incurred at at belongs to a period that has ended. An account whose period never started
// (zero: a new account, or one without ResetEvery) has no earlier period.
func (l BudgetLimits) periodBeganAfter(u *BudgetUsage, at, now time.Time) bool {
	if l.ResetEvery <= 0 || u.PeriodStart.IsZero() {
		return false
	}
	l.roll(u, now)
	return u.PeriodStart.After(at)
}

// modelPeriodBeganAfter reports whether the period of model's entry of u, rolled to now,
// began after at (periodBeganAfter's rule, for the entry's own period).
func (l BudgetLimits) modelPeriodBeganAfter(u BudgetUsage, model string, at, now time.Time) bool {
	ml, ok := l.Models[model]
	mu := u.Models[model]
	if !ok || model == "" || ml.ResetEvery <= 0 || mu.PeriodStart.IsZero() {
		return false
	}
	ml.roll(&mu, now)
	return mu.PeriodStart.After(at)
}
