package completions

import (
	"math"
	"time"
)

// FaultPolicy is what a request may ask of the gateway's fault handling: extension fields,
// the same on the native and the OpenAI-compatible endpoints. Durations are in seconds
// (fractions allowed), as in LiteLLM's timeout fields; each is bounded by
// MaxRequestSeconds. Zero values keep the gateway's settings (Options).
type FaultPolicy struct {
	// Timeout is the whole request's deadline: retries and fallbacks all happen within
	// it, and a retry never takes the time the remaining fallbacks need (each keeps at
	// least its first-token timeout). Longer than the gateway's bound on one non-streamed
	// call (Options.AttemptTimeout), it lifts that bound to itself.
	Timeout *float64 `json:"timeout,omitempty" jsonschema:"exclusiveMinimum=0,maximum=3600"`
	// FirstTokenTimeout bounds the wait for an attempt's response and first fragment (the
	// whole answer when not streaming is bounded by the attempt timeout instead); a model
	// that stays silent this long is left for the next one at once, without retries.
	FirstTokenTimeout *float64 `json:"first_token_timeout,omitempty" jsonschema:"exclusiveMinimum=0,maximum=3600"`
	// StreamIdleTimeout bounds the silence between two fragments of a stream.
	StreamIdleTimeout *float64 `json:"stream_idle_timeout,omitempty" jsonschema:"exclusiveMinimum=0,maximum=3600"`
	// HedgeAfter starts the next model when the first fragment has not come within this
	// many seconds, takes whichever answers first and cancels the other; the attempts list
	// and the usage show both. A non-streamed request is streamed from the upstreams for
	// it and answered whole.
	HedgeAfter *float64 `json:"hedge_after,omitempty" jsonschema:"exclusiveMinimum=0,maximum=3600"`
	// FallbackOnContentFilter lets a content-filter block or a refusal fall over to the
	// next model; by default it is reported to the caller as the answer, since asking
	// another model would override a policy decision.
	FallbackOnContentFilter bool `json:"fallback_on_content_filter,omitempty"`
}

// MaxRequestSeconds bounds the durations of a FaultPolicy.
const MaxRequestSeconds = 3600

// Limits on one request's fan-out (issue: one completion must not become thousands of
// upstream calls).
const (
	// MaxModels bounds models and fallback_models, each.
	MaxModels = 10
	// MaxUpstreamAttempts bounds the upstream calls of one request: retries, fallbacks,
	// hedged starts and continuations together.
	MaxUpstreamAttempts = 10
)

// validate checks the policy's fields; field names are those of the JSON body.
func (f *FaultPolicy) validate() error {
	for _, d := range []struct {
		name string
		v    *float64
	}{{"timeout", f.Timeout}, {"first_token_timeout", f.FirstTokenTimeout}, {"stream_idle_timeout", f.StreamIdleTimeout}, {"hedge_after", f.HedgeAfter}} {
		if d.v != nil && (math.IsNaN(*d.v) || *d.v <= 0 || *d.v > MaxRequestSeconds) {
			return invalid(d.name, "must be a number of seconds above 0 and at most %d, got %g", MaxRequestSeconds, *d.v)
		}
	}
	return nil
}

// seconds converts a validated policy duration, or returns def when unset.
func seconds(v *float64, def time.Duration) time.Duration {
	if v == nil {
		return def
	}
	return time.Duration(*v * float64(time.Second))
}

// timing is a request's effective time budget.
type timing struct {
	deadline   time.Time     // the whole request's
	attempt    time.Duration // one non-streamed upstream call
	firstToken time.Duration // per attempt: response and first fragment
	idle       time.Duration // between fragments
	// reasoning is the silence allowed while the model reasons (after a reasoning fragment,
	// before its answer's first text or call): reasoning models show nothing for long.
	reasoning  time.Duration
	hedgeAfter time.Duration // 0: no hedging
	// tight: the caller's limits are shorter than the gateway's, so a timeout under them
	// says nothing about the model's health (it does not count for the circuit breaker).
	tight bool
}

// timingFor combines the gateway's options with the scope's call timeout and the request's
// policy.
func (g *Gateway) timingFor(start time.Time, scope Scope, req *Request) timing {
	f := &req.FaultPolicy
	t := timing{
		deadline:   start.Add(seconds(f.Timeout, g.opts.RequestTimeout)),
		attempt:    g.opts.AttemptTimeout,
		firstToken: seconds(f.FirstTokenTimeout, g.opts.FirstTokenTimeout),
		idle:       seconds(f.StreamIdleTimeout, g.opts.StreamIdleTimeout),
		hedgeAfter: seconds(f.HedgeAfter, 0),
	}
	// A model that says it reasons may be silent as long as a non-streamed call may last,
	// unless the caller set its own limits on silence, which then hold.
	t.reasoning = max(t.idle, t.attempt)
	if f.FirstTokenTimeout != nil || f.StreamIdleTimeout != nil {
		t.reasoning = t.idle
	}
	if f.Timeout != nil && scope.CallTimeout == 0 {
		// A request that allows itself longer than one call's bound may spend it on one call
		// (a slow reasoning model), as LiteLLM's timeout does.
		t.attempt = max(t.attempt, t.deadline.Sub(start))
	}
	if scope.CallTimeout > 0 {
		t.attempt = scope.CallTimeout
		if f.Timeout == nil {
			t.deadline = start.Add(scope.CallTimeout)
		}
	}
	if scope.AttemptTimeout > 0 && f.Timeout == nil {
		// Each call, not the request: a call cut by it leaves the rest of the request's time
		// to the retries and fallbacks, as LiteLLM's router timeout does; a stream is held to
		// it until its first chunk (as a model's own timeout), not for its whole length.
		if f.FirstTokenTimeout == nil {
			t.firstToken = min(t.firstToken, scope.AttemptTimeout)
		}
		if scope.CallTimeout > 0 {
			t.attempt = min(t.attempt, scope.AttemptTimeout)
		} else {
			t.attempt = scope.AttemptTimeout
			if d := start.Add(scope.AttemptTimeout); d.After(t.deadline) {
				t.deadline = d
			}
		}
	}
	t.tight = t.firstToken < g.opts.FirstTokenTimeout || t.idle < g.opts.StreamIdleTimeout ||
		t.attempt < g.opts.AttemptTimeout || t.deadline.Sub(start) < g.opts.RequestTimeout
	return t
}
