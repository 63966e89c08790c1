package completions

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store"
)

// BreakerOptions configures the per-model circuit breaker: after Failures consecutive
// outage-like failures of a model (rate limits, 5xx, timeouts, connection failures, broken
// streams) the gateway skips it for Cooldown (±20% jitter), then lets one request probe it;
// the probe's success closes the breaker, its failure opens it again. A request whose
// every remaining model is open still tries the first of them (as a probe), so the breaker
// never turns a degraded provider into a total outage. With Options.SharedLimits, a breaker
// one process opens opens on the other processes of the store at their next Sync.
type BreakerOptions struct {
	// Failures opens the breaker; default 5, negative disables the breaker.
	Failures int
	// Cooldown is how long an open breaker skips the model; default 30s.
	Cooldown time.Duration
	// OnChange, when set, is told of every change of a breaker's state, in this process
	// (a breaker opened on another process of the store opens here too, and says so). It
	// runs with the breakers locked and must not block.
	OnChange func(BreakerChange)
}

// BreakerChange is a move of a model's circuit breaker from one state to another.
type BreakerChange struct {
	// Model is the breaker's model ("provider/model").
	Model string
	// From and To are BreakerClosed, BreakerOpen or BreakerHalfOpen.
	From, To string
	// Failures is how many failures in a row opened it (To BreakerOpen; 0 when another
	// process opened it).
	Failures int
	// Cause is the last failure's kind (providers.Kind's String; To BreakerOpen), or
	// "opened on another replica".
	Cause string
	// Time is when it changed.
	Time time.Time
}

// Breaker states, as logged and reported by Gateway.BreakerStates.
const (
	BreakerClosed   = "closed"
	BreakerOpen     = "open"
	BreakerHalfOpen = "half_open"
)

// breakers holds the breaker of every model that failed. Its zero value is unusable; see
// newBreakers.
type breakers struct {
	opts BreakerOptions
	log  *slog.Logger
	mu   sync.Mutex
	m    map[string]*breaker
	// shared tells the other processes of the store when a breaker opens here (share).
	shared *store.Counters
}

// sharedTrips is the key prefix of a model's breaker trips in Options.SharedLimits.
const sharedTrips = "breaker/"

// share has b count its trips in c and open a breaker whenever another process of the
// store says it opened its own (c nil: nothing is shared). A breaker open or probing here
// keeps its state: this process has news of its own.
func (b *breakers) share(c *store.Counters) {
	if c == nil || b.disabled() {
		return
	}
	b.shared = c
	c.Subscribe(sharedTrips, func(key string, _ int64, now time.Time) {
		model := strings.TrimPrefix(key, sharedTrips)
		b.mu.Lock()
		defer b.mu.Unlock()
		br := b.breakerOf(model)
		if br.state == BreakerClosed {
			b.trip(model, br, now, "opened on another replica")
		}
	})
}

type breaker struct {
	state    string
	failures int       // consecutive, while closed
	until    time.Time // open: when a probe may go; half-open: when a lost probe may be replaced
}

func newBreakers(opts BreakerOptions, log *slog.Logger) *breakers {
	if opts.Failures == 0 {
		opts.Failures = 5
	}
	if opts.Cooldown <= 0 {
		opts.Cooldown = 30 * time.Second
	}
	return &breakers{opts: opts, log: log, m: map[string]*breaker{}}
}

func (b *breakers) disabled() bool { return b.opts.Failures < 0 }

// open reports whether model's breaker would skip it now (without claiming a probe).
func (b *breakers) open(model string, now time.Time) bool {
	if b.disabled() {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	br := b.m[model]
	return br != nil && br.state != BreakerClosed && now.Before(br.until)
}

// reopensIn is how long until model's open breaker lets a call through again (0: it does
// at now).
func (b *breakers) reopensIn(model string, now time.Time) time.Duration {
	if b.disabled() {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	br := b.m[model]
	if br == nil || br.state == BreakerClosed || !now.Before(br.until) {
		return 0
	}
	return br.until.Sub(now)
}

// allow reports whether a call to model may go now; when the cool-down is over it makes
// this call the probe (half-open) and keeps others out until it reports.
func (b *breakers) allow(model string, now time.Time) bool {
	if b.disabled() {
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	br := b.m[model]
	if br == nil || br.state == BreakerClosed {
		return true
	}
	if now.Before(br.until) {
		return false
	}
	b.change(BreakerChange{Model: model, From: br.state, To: BreakerHalfOpen, Time: now})
	b.set(model, br, BreakerHalfOpen)
	br.until = now.Add(b.opts.Cooldown) // a probe that never reports is replaced after this
	return true
}

// record reports the outcome of a call to model: err nil for success. With tight, the
// caller's own limits were shorter than the gateway's: a timeout under them is no sign of an
// outage (one caller's impatience must not open the breaker for every caller).
func (b *breakers) record(model string, err error, now time.Time, tight bool) {
	if b.disabled() {
		return
	}
	kind := providers.KindOf(err)
	outage := err != nil && kind.Retryable() && kind != providers.KindUnknown && !(tight && kind == providers.KindTimeout)
	b.mu.Lock()
	defer b.mu.Unlock()
	br := b.m[model]
	switch {
	case err == nil:
		if br != nil {
			if br.state != BreakerClosed {
				b.change(BreakerChange{Model: model, From: br.state, To: BreakerClosed, Time: now})
				b.set(model, br, BreakerClosed)
			}
			delete(b.m, model)
		}
	case !outage:
		// A bad request or a filtered answer says nothing about the model's health.
	case br == nil || br.state == BreakerClosed:
		br = b.breakerOf(model)
		br.failures++
		if br.failures >= b.opts.Failures {
			b.trip(model, br, now, kind.String())
			b.tell(model, now)
		}
	default: // the probe failed
		br.failures = 1
		b.trip(model, br, now, kind.String())
		b.tell(model, now)
	}
}

// trip opens br for the cool-down (jittered); after says why, for the log.
func (b *breakers) trip(model string, br *breaker, now time.Time, after string) {
	cool := time.Duration(float64(b.opts.Cooldown) * (0.8 + 0.4*rand.Float64()))
	br.until = now.Add(cool)
	failures := br.failures
	br.failures = 0
	b.change(BreakerChange{Model: model, From: br.state, To: BreakerOpen, Failures: failures, Cause: after, Time: now})
	b.set(model, br, BreakerOpen, "after", after, "cooldown", cool.Round(time.Millisecond).String())
}

// change tells OnChange of c when it is a change.
func (b *breakers) change(c BreakerChange) {
	if b.opts.OnChange != nil && c.From != c.To {
		b.opts.OnChange(c)
	}
}

// tell counts a trip of model's breaker for the other processes (share).
func (b *breakers) tell(model string, now time.Time) {
	if b.shared != nil {
		b.shared.Add(sharedTrips+model, 1, now)
	}
}

// set moves br to state, logging real changes at info; a breaker that stays open (its model
// tried anyway as the last resort, failing again) is logged at debug.
func (b *breakers) set(model string, br *breaker, state string, attrs ...any) {
	level := slog.LevelInfo
	if br.state == state {
		level = slog.LevelDebug
	}
	b.log.Log(context.Background(), level, "completions: circuit breaker "+state, append([]any{"model", model, "from", br.state}, attrs...)...)
	br.state = state
}

// states returns the state of every model whose breaker is not closed.
func (b *breakers) states(now time.Time) map[string]string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make(map[string]string, len(b.m))
	for m, br := range b.m {
		switch {
		case br.state == BreakerOpen && !now.Before(br.until):
			// Cooled down: the next call is let through as the probe, whenever it comes
			// (a model no longer called would otherwise read open for ever).
			out[m] = BreakerHalfOpen
		case br.state != BreakerClosed:
			out[m] = br.state
		}
	}
	return out
}

// BreakerStates returns the models whose circuit breaker is open or half-open, with their
// state (BreakerOpen, BreakerHalfOpen); the others are closed. An open breaker whose
// cooldown has passed is half-open: the next call to its model is the probe.
func (g *Gateway) BreakerStates() map[string]string {
	if g.breakers == nil {
		return map[string]string{}
	}
	return g.breakers.states(g.opts.Now())
}

// breakerOf is model's breaker, made closed when it has none; b.mu must be held.
func (b *breakers) breakerOf(model string) *breaker {
	br := b.m[model]
	if br == nil {
		br = &breaker{state: BreakerClosed}
		b.m[model] = br
	}
	return br
}
