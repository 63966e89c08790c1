package completions

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// HealthJitter is the share of HealthMonitorOptions.Interval a wait between two rounds may
// be longer or shorter by (±10%), so that replicas started together drift apart.
const HealthJitter = 0.1

// HealthMonitorOptions configure a HealthMonitor. Interval is required.
type HealthMonitorOptions struct {
	// Interval is the wait between two rounds of checks (±HealthJitter); it must be
	// positive.
	Interval time.Duration
	// Concurrency is how many deployments are checked at once (below 1: 1).
	Concurrency int
	// Timeout bounds each deployment's check (0 or less: Interval; a background check has
	// no request whose end would bound it, and one never answered would hold every later
	// round).
	Timeout time.Duration
	// Deployments lists what a round checks; default Gateway.GroupDeployments (what an
	// unnarrowed GET /health checks).
	Deployments func() []Deployment
	// OnChange, when set, is told when a model turns unhealthy (its first failed check
	// included) or healthy again: once per change, never per check. It must not block.
	OnChange func(HealthChange)
	// OnRound, when set, is told of every round once it is the latest.
	OnRound func(HealthRound)
	// OpenBreakers has a failed check that looks like an outage (a rate limit, a 5xx, a
	// timeout, a connection failure: what counts towards the circuit breaker) open the
	// model's circuit breaker as soon as it fails (not at the round's end), so requests
	// skip it until its cooldown probe; and a passing check close the model's open breaker
	// at once, as that probe answering would (the same BreakerChange to closed), so a
	// recovered model need not wait for the cooldown. The breaker then reports the outages
	// it covers: see HealthChange.Breaker.
	OpenBreakers bool
	// Now is the clock; default the gateway's (Options.Now).
	Now func() time.Time
	// After waits between rounds; default time.After. Tests give one that waits for their
	// own ticks.
	After func(time.Duration) <-chan time.Time
	// Logger logs failed checks and changes; default the gateway's.
	Logger *slog.Logger
}

// HealthRound is one round of checks of every deployment.
type HealthRound struct {
	// Started and Finished are when the round began and ended.
	Started, Finished time.Time
	// Results are the deployments' results, in HealthMonitorOptions.Deployments' order.
	Results []HealthResult
}

// HealthChange is a model turning unhealthy or healthy again.
type HealthChange struct {
	// Model is the "provider/model" checked.
	Model string
	// ModelNames are the names clients send for it (its model groups).
	ModelNames []string
	// Healthy is its state now.
	Healthy bool
	// Err is why its check failed (Healthy false).
	Err error
	// Time is when the round that saw the change finished.
	Time time.Time
	// Breaker says the model's circuit breaker reports this change itself
	// (HealthMonitorOptions.OpenBreakers), so an alert on it would repeat the breaker's
	// (one outage, one deployment_down): turning unhealthy, the model's breaker was open
	// once its check failed (the check opened it, or found it open), a BreakerChange to
	// open having been told; healthy again, the outage ended was such a one, and the
	// passing check closed the breaker (a BreakerChange to closed). False for a failure
	// the breaker does not count (a bad key, an unknown model), or with the breaker off.
	Breaker bool
}

// HealthMonitor checks a gateway's deployments in the background (LiteLLM's
// background_health_checks): at start and then every Interval, with the one tiny real
// request of CheckDeployment, and keeps the latest round for GET /health to answer at once.
// Each process runs its own. Create it with NewHealthMonitor and run it with Run (which
// returns when its context ends), or with Start and Close (which waits for the loop).
type HealthMonitor struct {
	g    *Gateway
	opts HealthMonitorOptions

	mu     sync.Mutex
	latest *HealthRound
	// down: model -> its last check failed, and whether its breaker reports that outage
	// (HealthChange.Breaker).
	down map[string]bool

	// runMu guards stop and done, the loop Start launched (nil before Start), and closed
	// (Close was called: Start refuses).
	runMu  sync.Mutex
	stop   context.CancelFunc
	done   chan struct{}
	closed bool
}

// ErrHealthMonitorClosed is returned by HealthMonitor.Start after Close (as net/http's
// Server answers ErrServerClosed once closed): a monitor starts once; make a new one to
// check again.
var ErrHealthMonitorClosed = errors.New("completions: the health monitor is closed")

// ErrHealthMonitorStarted is returned by HealthMonitor.Start while the loop an earlier
// Start launched runs (or ran until its context ended).
var ErrHealthMonitorStarted = errors.New("completions: the health monitor is already started")

// Start runs Run in a goroutine of its own until ctx ends or Close is called. A monitor
// starts once: Start after Close (Close before any Start included) returns
// ErrHealthMonitorClosed, and a second Start ErrHealthMonitorStarted, launching nothing;
// make a new monitor to check again.
func (m *HealthMonitor) Start(ctx context.Context) error {
	m.runMu.Lock()
	defer m.runMu.Unlock()
	if m.closed {
		return ErrHealthMonitorClosed
	}
	if m.stop != nil {
		return ErrHealthMonitorStarted
	}
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	m.stop, m.done = cancel, done
	go func() {
		defer close(done)
		m.Run(rctx)
	}()
	return nil
}

// Close stops the loop Start launched and waits for it to return: a round under way ends
// with its context (and is dropped), and nothing of the monitor's runs after Close
// returned, so a caller may then close what its checks use (the store). Without Start it
// returns at once; either way a later Start fails (ErrHealthMonitorClosed). It may be
// called more than once. It must not be called from the monitor's own callbacks
// (HealthMonitorOptions' Deployments, OnChange and OnRound): it waits for the round that
// called them, which would never end. Close does not stop a Run the caller runs itself:
// its context does.
func (m *HealthMonitor) Close() {
	m.runMu.Lock()
	m.closed = true
	stop, done := m.stop, m.done
	m.runMu.Unlock()
	if stop == nil {
		return
	}
	stop()
	<-done
}

// NewHealthMonitor returns a monitor of g's deployments; it checks nothing until Run.
func NewHealthMonitor(g *Gateway, opts HealthMonitorOptions) (*HealthMonitor, error) {
	if g == nil {
		return nil, errors.New("completions: a health monitor needs a gateway")
	}
	if opts.Interval <= 0 {
		return nil, invalid("interval", "the health check interval must be positive, got %s", opts.Interval)
	}
	if opts.Timeout <= 0 {
		opts.Timeout = opts.Interval
	}
	if opts.Deployments == nil {
		opts.Deployments = g.GroupDeployments
	}
	if opts.Now == nil {
		opts.Now = g.opts.Now
	}
	if opts.After == nil {
		opts.After = time.After
	}
	if opts.Logger == nil {
		opts.Logger = g.log
	}
	return &HealthMonitor{g: g, opts: opts, down: map[string]bool{}}, nil
}

// Run checks every deployment now and then every Interval (±HealthJitter) until ctx ends.
// A round cut short by ctx's end is dropped: shutting down is no outage.
func (m *HealthMonitor) Run(ctx context.Context) {
	if len(m.opts.Deployments()) == 0 {
		m.opts.Logger.Warn("completions: background model health checks have nothing to check: no model groups (--model-groups)")
	}
	for {
		m.Check(ctx)
		wait := time.Duration(float64(m.opts.Interval) * (1 - HealthJitter + 2*HealthJitter*rand.Float64()))
		select {
		case <-ctx.Done():
			return
		case <-m.opts.After(wait):
		}
	}
}

// Check runs one round now, makes it the latest (unless ctx ended during it) and returns
// it; it tells OnChange of the models whose health changed.
func (m *HealthMonitor) Check(ctx context.Context) HealthRound {
	round := HealthRound{Started: m.opts.Now()}
	var checked func(Deployment, error)
	var openMu sync.Mutex
	open := map[string]bool{} // model -> its breaker was open once its check failed
	if m.opts.OpenBreakers && m.g.breakers != nil {
		// At once, not at the round's end: a long round's early result is old news by then
		// (the model may have answered, or failed, requests since).
		checked = func(d Deployment, err error) {
			switch {
			case err == nil:
				m.g.breakers.checkPassed(d.Model, m.opts.Now())
			case ctx.Err() == nil:
				if m.g.breakers.checkFailed(d.Model, err, m.opts.Now()) {
					openMu.Lock()
					open[d.Model] = true
					openMu.Unlock()
				}
			}
		}
	}
	round.Results = m.g.checkDeployments(ctx, m.opts.Deployments(), m.opts.Concurrency, m.opts.Timeout, checked)
	round.Finished = m.opts.Now()
	if ctx.Err() != nil {
		return round
	}
	type state struct {
		err   error
		names []string
	}
	models := map[string]*state{}
	var order []string
	for _, r := range round.Results {
		st := models[r.Deployment.Model]
		if st == nil {
			st = &state{err: r.Err}
			models[r.Deployment.Model] = st
			order = append(order, r.Deployment.Model)
		}
		if !slices.Contains(st.names, r.Deployment.ModelName) {
			st.names = append(st.names, r.Deployment.ModelName)
		}
	}
	var changes []HealthChange
	m.mu.Lock()
	m.latest = &round
	for _, model := range order {
		st := models[model]
		down := st.err != nil
		byBreaker, wasDown := m.down[model]
		if down != wasDown {
			if down {
				byBreaker = open[model]
			}
			changes = append(changes, HealthChange{Model: model, ModelNames: st.names, Healthy: !down, Err: st.err, Time: round.Finished, Breaker: byBreaker})
		}
		if down {
			if !wasDown {
				m.down[model] = byBreaker
			}
		} else {
			delete(m.down, model)
		}
	}
	m.mu.Unlock()
	for _, model := range order {
		if err := models[model].err; err != nil {
			m.opts.Logger.Warn("completions: background model health check failed", "model", model, "err", err)
		}
	}
	for _, c := range changes {
		if c.Healthy {
			m.opts.Logger.Info("completions: model healthy again", "model", c.Model)
		} else {
			m.opts.Logger.Warn("completions: model unhealthy", "model", c.Model, "err", c.Err)
		}
		if m.opts.OnChange != nil {
			m.opts.OnChange(c)
		}
	}
	if m.opts.OnRound != nil {
		m.opts.OnRound(round)
	}
	return round
}

// Deployments lists what the next round checks (HealthMonitorOptions.Deployments).
func (m *HealthMonitor) Deployments() []Deployment {
	return m.opts.Deployments()
}

// Latest returns the latest round (false: none has finished yet).
func (m *HealthMonitor) Latest() (HealthRound, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.latest == nil {
		return HealthRound{}, false
	}
	return *m.latest, true
}

// checkFailed opens model's breaker after a failed health check of it (err) that looks like
// an outage, unless it is open already; the probe after its cooldown, or a passing check
// (checkPassed), closes it again. It reports whether the breaker is open (or probing)
// afterwards: opened here, or by earlier failures.
func (b *breakers) checkFailed(model string, err error, now time.Time) (open bool) {
	if b.disabled() {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	kind := providers.KindOf(err)
	if !kind.Retryable() || kind == providers.KindUnknown {
		// Not an outage: the breaker stays as it is.
		br := b.m[model]
		return br != nil && br.state != BreakerClosed
	}
	br := b.breakerOf(model)
	if br.state == BreakerOpen && now.Before(br.until) {
		return true
	}
	// The check is one more failure, and its kind the cause (BreakerChange.Cause, so the
	// breaker's alert's error_class, is a kind; the monitor logs that it was a check).
	br.failures++
	b.trip(model, br, now, kind.String())
	b.tell(model, now)
	return true
}

// checkPassed closes model's breaker after a passing health check of it, as its probe
// answering would: the same BreakerChange to closed (so the same recovery alert) and the
// same fresh count of failures. A closed breaker's count starts again too.
func (b *breakers) checkPassed(model string, now time.Time) {
	b.record(model, nil, now, false)
}
