package completions

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/switchyard-ai/switchyard/store"
)

// MemberLimits bound what one model group member (a deployment) is sent, as LiteLLM's
// router holds a deployment to its rpm, tpm and max_parallel_requests. A member at its rpm
// or tpm is skipped for the request's next model, as one whose circuit breaker is open
// is, and a request whose every model is at its limit fails with a *LimitedError (a 429
// with Retry-After). A member at its max_parallel is skipped likewise while a later model
// can be called at once; when none can, the request queues for a slot instead, as
// LiteLLM's per-deployment semaphore makes it (MaxParallel). The zero value bounds
// nothing. RPM and TPM are counted in this process, and with Options.SharedLimits across
// the processes sharing those counters (replicas on one PostgreSQL store), give or take
// what the others did since their last exchange; MaxParallel is per process: replicas each
// allow it.
type MemberLimits struct {
	// RPM is the most upstream calls (retries included) the member gets in any minute;
	// 0: no bound.
	RPM int64 `json:"rpm,omitempty"`
	// TPM is the tokens (prompt and completion, from the answers' usage) the member may
	// use per minute: a request's tokens are known only once it is answered, so a call is
	// admitted while the last minute's counted tokens are under TPM (as LiteLLM does);
	// 0: no bound.
	TPM int64 `json:"tpm,omitempty"`
	// MaxParallel is the most calls the member has in flight at once (a stream counts
	// until it ends); 0: no bound. A call past it is not refused: when no other of the
	// request's remaining models can be called at once (each at its own max_parallel, its
	// rpm or tpm, or its breaker open), the request waits for the first slot that frees on
	// any of its models that are only at max_parallel, first come first served, and goes
	// there, unless one of its other models becomes callable first (its rpm or tpm window
	// moves on, its breaker's cooldown ends): the request then goes to that one. The wait is bounded by the request's deadline (FaultPolicy.Timeout, else
	// Options.RequestTimeout, 5 minutes by default) and its context: at the deadline it
	// fails with a *LimitedError, when the caller goes away with the context's error. The
	// choices of Gateway.StreamN do not queue (a started sibling holds its slot until the
	// caller, who has none of them yet, reads it): one at a limit is refused at once.
	MaxParallel int64 `json:"max_parallel,omitempty"`
}

// bounded reports whether l bounds anything.
func (l MemberLimits) bounded() bool { return l.RPM > 0 || l.TPM > 0 || l.MaxParallel > 0 }

// checkLimits validates the Limits of the group name; errors wrap ErrInvalid and name the
// group and the member.
func checkLimits(name string, g ModelGroup) error {
	if len(g.Limits) == 0 {
		return nil
	}
	if len(g.Limits) != len(g.Models) {
		return fmt.Errorf("%w: model group %q: limits: one per model, got %d for %d models", ErrInvalid, name, len(g.Limits), len(g.Models))
	}
	for i, l := range g.Limits {
		for _, f := range []struct {
			field string
			v     int64
		}{{"rpm", l.RPM}, {"tpm", l.TPM}, {"max_parallel", l.MaxParallel}} {
			if f.v < 0 {
				return fmt.Errorf("%w: model group %q: limits[%d].%s (%s): must be 0 (no bound) or more, got %d", ErrInvalid, name, i, f.field, g.Models[i], f.v)
			}
		}
	}
	return nil
}

// memberLimitsOf gathers the limits the groups give their members, by model: a model's
// limits hold wherever it is called (any group, a fallback, its own name), so two groups
// giving one model different limits are refused, naming both (ErrInvalid).
func memberLimitsOf(groups map[string]ModelGroup) (map[string]MemberLimits, error) {
	return perMember(groups, "limits", "limits are counted once",
		func(g ModelGroup) []MemberLimits { return g.Limits }, MemberLimits.bounded)
}

// perMember gathers, by model, the per-member settings (field: "limits", "timeouts") that
// of returns of each group (parallel to its Models), leaving out those set reports unset.
// A model's settings hold wherever it is called, so two groups giving one model different
// ones are refused, naming both and why (ErrInvalid).
func perMember[T comparable](groups map[string]ModelGroup, field, why string, of func(ModelGroup) []T, set func(T) bool) (map[string]T, error) {
	names := make([]string, 0, len(groups))
	for n := range groups {
		names = append(names, n)
	}
	sort.Strings(names)
	out := map[string]T{}
	from := map[string]string{}
	for _, name := range names {
		g := groups[name]
		for i, l := range of(g) {
			if !set(l) {
				continue
			}
			m := g.Models[i]
			if prev, ok := out[m]; ok && prev != l {
				return nil, fmt.Errorf("%w: model group %q: %s[%d] of %s differ from those model group %q gives it (a model's %s, wherever it is called)",
					ErrInvalid, name, field, i, m, from[m], why)
			}
			out[m], from[m] = l, name
		}
	}
	return out, nil
}

// memberLimits counts each limited model's calls, tokens and calls in flight. Its map is
// made by newMemberLimits and only read afterwards; a nil *memberLimits limits nothing.
type memberLimits struct {
	m map[string]*memberUsage
}

// newMemberLimits returns the counts of the models limits bounds (nil when none is).
func newMemberLimits(limits map[string]MemberLimits) *memberLimits {
	if len(limits) == 0 {
		return nil
	}
	ml := &memberLimits{m: make(map[string]*memberUsage, len(limits))}
	for model, l := range limits {
		ml.m[model] = &memberUsage{model: model, lim: l}
	}
	return ml
}

// of returns model's counts, nil when it has no limits.
func (ml *memberLimits) of(model string) *memberUsage {
	if ml == nil {
		return nil
	}
	return ml.m[model]
}

// full reports whether model is at one of its limits at now (its max_parallel counting
// the requests queued for it as in flight: they come first).
func (ml *memberLimits) full(model string, now time.Time) bool {
	u := ml.of(model)
	if u == nil {
		return false
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	_, _, at := u.atLimit(now, nil)
	return at != limitNone
}

// rateFull reports whether model is at its rpm or tpm at now: what bounds a retry, which
// reuses the slot in flight its request holds (so max_parallel does not).
func (ml *memberLimits) rateFull(model string, now time.Time) bool {
	u := ml.of(model)
	if u == nil {
		return false
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	_, _, at := u.rateLimit(now)
	return at
}

// tokens counts n tokens model's answer used at now.
func (ml *memberLimits) tokens(model string, n int64, now time.Time) {
	u := ml.of(model)
	if u == nil || u.lim.TPM <= 0 || n <= 0 {
		return
	}
	u.mu.Lock()
	u.tpm.add(now, n)
	u.mu.Unlock()
}

// The key prefixes of model group members' calls and tokens in Options.SharedLimits.
const (
	sharedMemberCalls  = "member/calls/"
	sharedMemberTokens = "member/tokens/"
)

// shareMemberLimits has the members' rpm and tpm count the calls and tokens other
// processes counted for them (c nil: none), in the routing table in force when they come.
func (g *Gateway) shareMemberLimits(c *store.Counters) {
	if c == nil {
		return
	}
	c.Subscribe(sharedMemberCalls, func(key string, n int64, now time.Time) {
		g.routes().limits.others(strings.TrimPrefix(key, sharedMemberCalls), n, 0, now)
	})
	c.Subscribe(sharedMemberTokens, func(key string, n int64, now time.Time) {
		g.routes().limits.others(strings.TrimPrefix(key, sharedMemberTokens), 0, n, now)
	})
}

// shareCall counts a call made to u's member at now for the other processes
// (Options.SharedLimits; u nil, a member without rpm, or no SharedLimits: nothing).
func (g *Gateway) shareCall(u *memberUsage, now time.Time) {
	if u != nil && u.lim.RPM > 0 && g.opts.SharedLimits != nil {
		g.opts.SharedLimits.Add(sharedMemberCalls+u.model, 1, now)
	}
}

// shareTokens counts n tokens u's member answered at now for the other processes, as
// shareCall counts calls.
func (g *Gateway) shareTokens(u *memberUsage, n int64, now time.Time) {
	if u != nil && u.lim.TPM > 0 && n > 0 && g.opts.SharedLimits != nil {
		g.opts.SharedLimits.Add(sharedMemberTokens+u.model, n, now)
	}
}

// others counts calls and tokens another process counted for model at now against its
// rpm and tpm.
func (ml *memberLimits) others(model string, calls, tokens int64, now time.Time) {
	u := ml.of(model)
	if u == nil {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if calls > 0 && u.lim.RPM > 0 {
		u.rpm.add(now, calls)
	}
	if tokens > 0 && u.lim.TPM > 0 {
		u.tpm.add(now, tokens)
	}
}

// memberUsage is one limited model's counts.
type memberUsage struct {
	model    string
	lim      MemberLimits
	mu       sync.Mutex
	rpm, tpm tokenWindow // calls and tokens in each second of the last minute
	inFlight int64
	// waiters are the requests queued for a slot in flight (MaxParallel), first come
	// first; a request may queue on several members at once.
	waiters []*slotWaiter
}

// slotWaiter is one request queued for a slot in flight on one or more members: a
// member with a slot free for it pokes it (wake), and it tries them again.
type slotWaiter struct {
	poke chan struct{} // buffered: a poke is kept until the waiter looks
}

func newSlotWaiter() *slotWaiter { return &slotWaiter{poke: make(chan struct{}, 1)} }

// wake pokes w without blocking (a poke already pending is enough).
func (w *slotWaiter) wake() {
	select {
	case w.poke <- struct{}{}:
	default:
	}
}

// limitKind says which of its limits a member is at.
type limitKind int

const (
	limitNone     limitKind = iota
	limitParallel           // max_parallel only: a slot frees when a call ends
	limitRate               // rpm or tpm: frees as the minute moves on
)

// ahead is how many requests queued on u come before w (all of them when w is nil or
// not queued on u). u.mu is held.
func (u *memberUsage) ahead(w *slotWaiter) int64 {
	for i, x := range u.waiters {
		if x == w {
			return int64(i)
		}
	}
	return int64(len(u.waiters))
}

// atLimit says whether u is at a limit at now for the request w (nil: a request not
// queued, which comes after every queued one), which (for the skipped attempt) and when
// it frees up (at least a second away: a call in flight ends when it ends). rpm and tpm
// come first: a member at its rate is at limitRate whatever its calls in flight. u.mu is
// held.
func (u *memberUsage) atLimit(now time.Time, w *slotWaiter) (wait time.Duration, why string, at limitKind) {
	if wait, why, rate := u.rateLimit(now); rate {
		return wait, why, limitRate
	}
	if u.lim.MaxParallel > 0 && u.inFlight+u.ahead(w) >= u.lim.MaxParallel {
		return time.Second, fmt.Sprintf("max_parallel %d calls in flight", u.lim.MaxParallel), limitParallel
	}
	return 0, "", limitNone
}

// limitAt is which of its limits u is at, at now, for a request not queued on it.
func (u *memberUsage) limitAt(now time.Time) limitKind {
	u.mu.Lock()
	defer u.mu.Unlock()
	_, _, at := u.atLimit(now, nil)
	return at
}

// rateLimit says whether u is at its rpm or tpm at now, which and when it frees up. u.mu
// is held.
func (u *memberUsage) rateLimit(now time.Time) (wait time.Duration, why string, at bool) {
	if u.lim.RPM > 0 {
		if n, below := u.rpm.sum(now, u.lim.RPM); n >= u.lim.RPM {
			return max(below.Sub(now), time.Second), fmt.Sprintf("rpm %d calls in the last minute", u.lim.RPM), true
		}
	}
	if u.lim.TPM > 0 {
		if n, below := u.tpm.sum(now, u.lim.TPM); n >= u.lim.TPM {
			return max(below.Sub(now), time.Second), fmt.Sprintf("tpm %d tokens in the last minute", u.lim.TPM), true
		}
	}
	return 0, "", false
}

// take admits a call at now for the request w (nil: not queued) unless u is at a limit:
// it counts the call and one more in flight (release ends it), and takes w out of u's
// queue. Not admitted, it says why, which limit and how long until u frees up.
func (u *memberUsage) take(now time.Time, w *slotWaiter) (wait time.Duration, why string, at limitKind) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if wait, why, at := u.atLimit(now, w); at != limitNone {
		return wait, why, at
	}
	u.rpm.add(now, 1)
	u.inFlight++
	if w != nil {
		u.remove(w)
	}
	return 0, "", limitNone
}

// again counts a retry's call at now (its slot in flight is the first call's).
func (u *memberUsage) again(now time.Time) {
	u.mu.Lock()
	u.rpm.add(now, 1)
	u.mu.Unlock()
}

// untake takes back a call take admitted at now that was not made.
func (u *memberUsage) untake(now time.Time) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.rpm.add(now, -1)
	u.inFlight--
	u.wakeFirst()
}

// release ends a call in flight: the first request queued for its slot is woken.
func (u *memberUsage) release() {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.inFlight--
	u.wakeFirst()
}

// queue puts w at the end of u's queue for a slot in flight; a slot already free for it
// (one freed since it was refused) pokes it.
func (u *memberUsage) queue(w *slotWaiter) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.waiters = append(u.waiters, w)
	u.wakeFirst()
}

// leave takes w out of u's queue (when it went elsewhere or stopped waiting): those
// behind it move up, and the ones a free slot is now theirs are woken.
func (u *memberUsage) leave(w *slotWaiter) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.remove(w) {
		u.wakeFirst()
	}
}

// remove takes w out of u's queue, reporting whether it was there. u.mu is held.
func (u *memberUsage) remove(w *slotWaiter) bool {
	for i, x := range u.waiters {
		if x == w {
			u.waiters = append(u.waiters[:i], u.waiters[i+1:]...)
			return true
		}
	}
	return false
}

// wakeFirst wakes the queued requests a free slot is for: as many from the front of the
// queue as slots are free. u.mu is held.
func (u *memberUsage) wakeFirst() {
	free := u.lim.MaxParallel - u.inFlight
	for i := int64(0); i < free && i < int64(len(u.waiters)); i++ {
		u.waiters[i].wake()
	}
}

// limitReachedKind is the Kind of an attempt skipped because its model was at a limit.
const limitReachedKind = "limit_reached"

// skipLimited records that t was skipped at its limit (why), wait before it frees up.
func (p *plan) skipLimited(model, why string, wait time.Duration) {
	p.attempts = append(p.attempts, Attempt{Model: model, Outcome: OutcomeSkipped, Kind: limitReachedKind,
		Error: "skipped: at its limit of " + why})
	if p.limitWait == 0 || wait < p.limitWait {
		p.limitWait = wait
	}
}

// hold keeps u's slot in flight until the call ends (drop) or the request does (ended).
func (p *plan) hold(u *memberUsage) {
	if u != nil {
		p.held = append(p.held, u)
	}
}

// drop ends the call in flight of model p holds, its attempts on it being over.
func (p *plan) drop(model string) {
	for i, u := range p.held {
		if u.model == model {
			u.release()
			p.held = append(p.held[:i], p.held[i+1:]...)
			return
		}
	}
}

// releaseHeld ends every call in flight p still holds.
func (p *plan) releaseHeld() {
	for _, u := range p.held {
		u.release()
	}
	p.held = nil
}

// limited is the error of a plan whose every model was skipped, at least one at its
// limit and none tried: a *LimitedError; nil otherwise.
func (p *plan) limited() error {
	if p.limitWait == 0 {
		return nil
	}
	for _, a := range p.attempts {
		if a.Outcome != OutcomeSkipped {
			return nil
		}
	}
	asked := p.asked
	if p.req != nil && p.req.groupName != "" {
		asked = p.req.groupName
	}
	if asked == "" && len(p.targets) > 0 {
		asked = p.targets[0].name
	}
	return &LimitedError{Model: asked, RetryAfter: p.limitWait, Attempts: append([]Attempt(nil), p.attempts...)}
}

// ErrLimited means every model a request could go to was at its rpm or tpm limit
// (ModelGroup.Limits), or at its max_parallel until the request's deadline (the request
// queued for a slot meanwhile); *LimitedError says when to retry.
var ErrLimited = errors.New("completions: every model is at its limit")

// LimitedError refuses a request whose every model was at its limit (MemberLimits): no
// model was called. It matches ErrLimited.
type LimitedError struct {
	// Model is what the request asked for: the model group's name (or the model's).
	Model string
	// RetryAfter is how long until the first of them frees up (at least a second).
	RetryAfter time.Duration
	// Attempts are the skipped models, each saying which limit it was at.
	Attempts []Attempt
}

// Error words e as LiteLLM's router does ("No deployments available for selected model,
// Try again in N seconds"), which clients match, then says which limits held.
func (e *LimitedError) Error() string {
	var why []string
	for _, a := range e.Attempts {
		if a.Kind == limitReachedKind {
			why = append(why, a.Model+" ("+strings.TrimPrefix(a.Error, "skipped: at its limit of ")+")")
		}
	}
	return fmt.Sprintf("No deployments available for selected model, Try again in %d seconds. Passed model=%s. Every deployment of model group %q is at its limit: %s",
		e.retrySeconds(), e.Model, e.Model, strings.Join(why, ", "))
}

// retrySeconds is RetryAfter in whole seconds, rounded up, at least 1.
func (e *LimitedError) retrySeconds() int {
	return max(int(math.Ceil(e.RetryAfter.Seconds())), 1)
}

// RetryAfterSeconds is RetryAfter in whole seconds, rounded up (at least 1), as a
// Retry-After header says it.
func (e *LimitedError) RetryAfterSeconds() int { return e.retrySeconds() }

// Is matches ErrLimited.
func (e *LimitedError) Is(target error) bool { return target == ErrLimited }
