package completions

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/switchyard-ai/switchyard/store"
)

// spendGate keeps a budget's USD and token bounds when its key sends requests at once:
// the bound is checked before a request and its cost is only known after it, so requests in
// flight together would each pass the check and all be paid for. Per budget it counts the
// requests in flight (this process's; with Options.SharedLimits, for a budget kept in the
// store, every process's: spendlease.go) and admits one more only while what was spent
// plus the in-flight requests at the budget's mean cost per answered request stays under
// the bound; until the budget has spent anything to take the mean from, its requests go
// one at a time.
// Its zero value is ready to use.
type spendGate struct {
	mu  sync.Mutex
	m   map[accountKey]*gateState
	tpm map[accountKey]*tokenWindow // budgets with TokensPerMinute: their last minute's tokens
	// models are the minutes of the entries of accounts' Models with a requests or tokens
	// per minute bound (modellimits.go).
	models map[modelWindow]*tokenWindow
	// shared carries the tokens of budgets kept in the store to and from the other
	// processes (Options.SharedLimits), and names this process in the leases of their
	// requests in flight (spendlease.go); nil keeps both in this process.
	shared *store.Counters
	locks  map[accountKey]*keyLock // accounts whose lease this process is writing (lockLease)
	// warn logs what a request cannot tell its caller (a lease not ended); nil: nothing.
	warn func(ctx context.Context, msg string, args ...any)
}

// sharedTokens is the key prefix of a stored budget's tokens in Options.SharedLimits.
const sharedTokens = "tpm/"

// share makes the gate count the tokens other processes' answers used for budgets kept in
// the store, and their requests in flight (c nil: none); warn logs what a request cannot
// report.
func (sg *spendGate) share(c *store.Counters, warn func(ctx context.Context, msg string, args ...any)) {
	if c == nil {
		return
	}
	sg.shared = c
	sg.warn = warn
	c.Subscribe(sharedTokens, func(key string, n int64, now time.Time) {
		countIn(sg, &sg.tpm, storedAccount(strings.TrimPrefix(key, sharedTokens)), n, now)
	})
	sg.shareModels()
}

// tokenWindow is the tokens a budget's answers used in each second of the last minute.
type tokenWindow struct {
	sec    [60]int64
	at     [60]int64 // the Unix second each slot holds
	latest int64
}

// sum is the tokens of the minute before now, and when enough of them leave it for the
// total to drop below limit (now when it is below already).
func (w *tokenWindow) sum(now time.Time, limit int64) (total int64, below time.Time) {
	n := now.Unix()
	in := func(i int) bool { return w.at[i] > n-60 && w.at[i] <= n && w.sec[i] > 0 }
	for i := range w.at {
		if in(i) {
			total += w.sec[i]
		}
	}
	if total < limit {
		// Every request of a key with a bound asks (and its rate headers): no allocation.
		return total, now
	}
	var secs []int64 // the seconds of the minute that used tokens, oldest first
	for i, t := range w.at {
		if in(i) {
			secs = append(secs, t)
		}
	}
	slices.Sort(secs)
	left := total
	for _, t := range secs {
		left -= w.sec[t%60]
		if left < limit {
			return total, time.Unix(t+60, 0)
		}
	}
	return total, now.Add(time.Minute)
}

// add counts tokens at now.
func (w *tokenWindow) add(now time.Time, tokens int64) {
	n := now.Unix()
	i := int(n % 60)
	if w.at[i] != n {
		w.at[i], w.sec[i] = n, 0
	}
	w.sec[i] += tokens
	w.latest = n
}

// accountKey is the spend gate's key of a budget's account: its id in the store (every
// Budget loaded on one stored account shares it), or the Budget that holds an account kept
// in memory (Budget.own). A struct rather than an interface value, so that a stored
// account's id is not boxed (an allocation) on every request.
type accountKey struct {
	id  string
	mem *Budget
}

// storedAccount is the key of the account the store keeps under id.
func storedAccount(id string) accountKey { return accountKey{id: id} }

// gateKey is the spend gate's key of b: its account in the store, else b itself.
func gateKey(b *Budget) accountKey {
	if b.st != nil {
		return storedAccount(b.id)
	}
	return accountKey{mem: b.own()}
}

// used counts tokens answered for b (and its parents) at now (for TokensPerMinute).
func (sg *spendGate) used(b *Budget, tokens int64, now time.Time) {
	for _, p := range b.parents {
		sg.usedOwn(p.b, tokens, now)
	}
	sg.usedOwn(b, tokens, now)
}

// usedOwn is used for b's own account.
func (sg *spendGate) usedOwn(b *Budget, tokens int64, now time.Time) {
	if b.limits.TokensPerMinute <= 0 || tokens <= 0 {
		return
	}
	countIn(sg, &sg.tpm, gateKey(b), tokens, now)
	if b.st != nil {
		sg.shared.Add(sharedTokens+b.id, tokens, now)
	}
}

// countIn adds tokens at now to key's window of *windows (sg.tpm's accounts, sg.models'
// entries of their Models), made when it has none.
func countIn[K comparable](sg *spendGate, windows *map[K]*tokenWindow, key K, tokens int64, now time.Time) {
	sg.mu.Lock()
	defer sg.mu.Unlock()
	if *windows == nil {
		*windows = map[K]*tokenWindow{}
	}
	m := *windows
	w := m[key]
	if w == nil {
		if len(m) >= 4096 { // bound the windows kept: drop those a minute old
			for k, ow := range m {
				if ow.latest < now.Unix()-60 {
					delete(m, k)
				}
			}
		}
		w = &tokenWindow{}
		m[key] = w
	}
	w.add(now, tokens)
}

// rate refuses a request of b when its (or a parent's) last minute used TokensPerMinute.
func (sg *spendGate) rate(b *Budget, now time.Time) error {
	for _, p := range b.parents {
		if err := sg.rateOwn(p.b, now); err != nil {
			return p.namedRate(err)
		}
	}
	return sg.rateOwn(b, now)
}

// namedRate names p, the account whose tokens per minute refused a request, in err's
// *TokenRateError; other errors pass unchanged.
func (p enclosing) namedRate(err error) error {
	var te *TokenRateError
	if errors.As(err, &te) {
		te.Kind, te.Name = p.kind, p.name
	}
	return err
}

// rateOwn is rate for b's own account.
func (sg *spendGate) rateOwn(b *Budget, now time.Time) error {
	limit := b.limits.TokensPerMinute
	if limit <= 0 {
		return nil
	}
	total, below := sg.lastMinute(b, now, limit)
	if total < limit {
		return nil
	}
	return &TokenRateError{Used: total, Limit: limit, RetryAfter: max(below.Sub(now), time.Second)}
}

type gateState struct {
	inflight int
	idle     chan struct{} // closed when inflight drops to 0; made by the first wait (waitIdle)
}

// waitIdle is st's idle channel, made now when none waited before (a request alone in
// the gate, the common case, makes none). sg.mu must be held.
func (st *gateState) waitIdle() chan struct{} {
	if st.idle == nil {
		st.idle = make(chan struct{})
	}
	return st.idle
}

// gateTicket is one request admitLocal let in, counted out once by release; the request
// that opened its key's run of requests in flight keeps the key's gateState in it (one
// allocation for both).
type gateTicket struct {
	state gateState // the key's, when this request found none in flight
	sg    *spendGate
	key   accountKey
	st    *gateState // the key's state this request is counted in
	once  sync.Once
}

// release counts t's request out of the gate, once however often it is called.
func (t *gateTicket) release() {
	t.once.Do(func() { t.sg.leave(t.key, t.st) })
}

// admit waits (within ctx) until b may take one more request and counts it in flight; the
// returned release, called once when the request ends, counts it out. A budget without a
// USD or token bound is not gated. A choice of an n-choice request (choice) does not wait
// for its siblings: they are one request, and their tokens share what the budget has left
// (prepare), so only the projection holds them back.
func (sg *spendGate) admit(ctx context.Context, b *Budget, choice bool) (release func(), err error) {
	if len(b.parents) == 0 {
		return sg.admitOwn(ctx, b, choice)
	}
	// The key's own account first, then its parents' (a team's, whose bounds every key of
	// the team shares; an end user's): all are held until the request ends.
	mine, err := sg.admitOwn(ctx, b, choice)
	if err != nil {
		return nil, err
	}
	held := []func(){mine}
	releaseAll := func() {
		for i := len(held) - 1; i >= 0; i-- {
			held[i]()
		}
	}
	for i, p := range b.parents {
		theirs, err := sg.admitOwn(ctx, p.b, choice)
		if err != nil {
			releaseAll()
			if errors.Is(err, ErrBudgetExceeded) {
				err = b.parentRefusal(i, p.b.Used(ctx), err)
			}
			return nil, p.namedRate(err)
		}
		held = append(held, theirs)
	}
	return releaseAll, nil
}

// admitOwn is admit for b's own account, without its parent's: counted with every
// process's requests for a stored account when the processes share their limits
// (admitShared), else with this process's (admitLocal).
func (sg *spendGate) admitOwn(ctx context.Context, b *Budget, choice bool) (release func(), err error) {
	l := b.limits
	if l.MaxCostUSD <= 0 && l.MaxTokens <= 0 {
		if err := sg.rateOwn(b, time.Now()); err != nil {
			return nil, err
		}
		return func() {}, nil
	}
	if sg.shared != nil && b.st != nil {
		return sg.admitShared(ctx, b, choice)
	}
	return sg.admitLocal(ctx, b, choice)
}

// admitLocal is admitOwn counting this process's requests in flight only.
func (sg *spendGate) admitLocal(ctx context.Context, b *Budget, choice bool) (release func(), err error) {
	l := b.limits
	key := gateKey(b)
	for {
		// Checked again after each wait: the answer waited for may have used the minute.
		if err := sg.rateOwn(b, time.Now()); err != nil {
			return nil, err
		}
		// What the account spent is weighed only against requests in flight here (the
		// wait for a first answer, projected): a request alone in the gate, the common
		// case, reads nothing (a store read and its decoding: 8 allocations or more).
		var u BudgetUsage
		read := sg.inflight(key) > 0
		if read {
			u = b.Used(ctx)
		}
		sg.mu.Lock()
		if sg.m == nil {
			sg.m = map[accountKey]*gateState{}
		}
		if st := sg.m[key]; st != nil && st.inflight > 0 && !read {
			sg.mu.Unlock() // requests came in since: read what the account spent after all
			continue
		}
		t := &gateTicket{sg: sg, key: key, st: sg.m[key]}
		if t.st == nil {
			t.st = &t.state
			sg.m[key] = t.st
		}
		st := t.st
		if u.CostUSD == 0 && u.Tokens == 0 && st.inflight > 0 && !choice {
			// Nothing spent yet to estimate a request's cost from: one at a time.
			idle := st.waitIdle()
			sg.mu.Unlock()
			select {
			case <-idle:
				continue
			case <-ctx.Done():
				return nil, context.Cause(ctx)
			}
		}
		if over := l.projected(u, st.inflight); over != "" {
			sg.mu.Unlock()
			return nil, fmt.Errorf("%w: %s", ErrBudgetExceeded, over)
		}
		st.inflight++
		sg.mu.Unlock()
		return t.release, nil
	}
}

// enter counts one more request of key in flight in this process and returns its state.
func (sg *spendGate) enter(key accountKey) *gateState {
	sg.mu.Lock()
	defer sg.mu.Unlock()
	if sg.m == nil {
		sg.m = map[accountKey]*gateState{}
	}
	st := sg.m[key]
	if st == nil {
		st = &gateState{}
		sg.m[key] = st
	}
	st.inflight++
	return st
}

// leave counts a request of key (in st, enter's) out, waking those waiting for key's
// requests to end when it was the last.
func (sg *spendGate) leave(key accountKey, st *gateState) {
	sg.mu.Lock()
	defer sg.mu.Unlock()
	if st.inflight--; st.inflight == 0 {
		if st.idle != nil {
			close(st.idle)
		}
		if sg.m[key] == st {
			delete(sg.m, key)
		}
	}
}

// inflight is how many requests of key this process has in flight.
func (sg *spendGate) inflight(key accountKey) int {
	sg.mu.Lock()
	defer sg.mu.Unlock()
	if st := sg.m[key]; st != nil {
		return st.inflight
	}
	return 0
}

// projected says which bound what u spent plus inflight requests at u's mean per answered
// request would reach, "" when neither. Before any answer (or for a record from before
// Answered was kept) the mean is over u.Calls less those in flight here.
func (l BudgetLimits) projected(u BudgetUsage, inflight int) string {
	if inflight == 0 {
		return ""
	}
	finished := u.Answered
	if finished == 0 { // nothing answered yet (partial charges only) or a record from before Answered
		finished = max(u.Calls-int64(inflight), 1)
	}
	n := float64(inflight)
	if mean := u.CostUSD / float64(finished); l.costSpent(u.CostUSD + n*mean) {
		return fmt.Sprintf("$%.4f of $%.4f spent and %d requests in flight (about $%.4f each)", u.CostUSD, l.MaxCostUSD, inflight, mean)
	}
	if mean := float64(u.Tokens) / float64(finished); l.MaxTokens > 0 && float64(u.Tokens)+n*mean >= float64(l.MaxTokens) {
		return fmt.Sprintf("%d of %d tokens used and %d requests in flight (about %.0f tokens each)", u.Tokens, l.MaxTokens, inflight, mean)
	}
	return ""
}

// TokensLeft is b's own tokens-per-minute bound and what its last minute leaves of it
// (never below 0), as the request rate headers show a key's requests (LiteLLM's and
// OpenAI's x-ratelimit-*-tokens); 0, 0 when b has no such bound.
func (g *Gateway) TokensLeft(b *Budget) (limit, left int64) {
	if b == nil || b.limits.TokensPerMinute <= 0 {
		return 0, 0
	}
	limit = b.limits.TokensPerMinute
	total, _ := g.spend.lastMinute(b, g.opts.Now(), limit)
	return limit, max(0, limit-total)
}

// lastMinute is the tokens b's own account used in the minute to now and, when they reach
// limit, when they drop below it (tokenWindow.sum); 0 for an account that used none.
func (sg *spendGate) lastMinute(b *Budget, now time.Time, limit int64) (total int64, below time.Time) {
	sg.mu.Lock()
	defer sg.mu.Unlock()
	w := sg.tpm[gateKey(b)]
	if w == nil {
		return 0, now
	}
	return w.sum(now, limit)
}
