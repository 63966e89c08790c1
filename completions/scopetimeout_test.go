package completions

import (
	"testing"
	"time"
)

// TestScopeAttemptTimeoutBoundsEachCall: a scope's AttemptTimeout (a virtual key's
// router_settings.timeout, LiteLLM's router timeout) bounds each call and a stream's wait
// for its first chunk, not the request: the request keeps the gateway's deadline for its
// retries and fallbacks (at least one call long), a background run (CallTimeout) keeps its
// own, and a request's own timeout wins.
func TestScopeAttemptTimeoutBoundsEachCall(t *testing.T) {
	g := &Gateway{opts: Options{RequestTimeout: 120 * time.Second, AttemptTimeout: 60 * time.Second,
		FirstTokenTimeout: 30 * time.Second, StreamIdleTimeout: 30 * time.Second}}
	start := time.Unix(1e9, 0)
	for _, c := range []struct {
		name                        string
		scope                       Scope
		reqTimeout                  *float64
		deadline, attempt, firstTok time.Duration
	}{
		{"short", Scope{AttemptTimeout: 5 * time.Second}, nil, 120 * time.Second, 5 * time.Second, 5 * time.Second},
		{"longer than the request", Scope{AttemptTimeout: 600 * time.Second}, nil, 600 * time.Second, 600 * time.Second, 30 * time.Second},
		{"background run", Scope{AttemptTimeout: 5 * time.Second, CallTimeout: 900 * time.Second}, nil, 900 * time.Second, 5 * time.Second, 5 * time.Second},
		{"request's own timeout", Scope{AttemptTimeout: 5 * time.Second}, new(float64(90)), 90 * time.Second, 90 * time.Second, 30 * time.Second},
	} {
		req := &Request{}
		req.FaultPolicy.Timeout = c.reqTimeout
		tm := g.timingFor(start, c.scope, req)
		if got := tm.deadline.Sub(start); got != c.deadline || tm.attempt != c.attempt || tm.firstToken != c.firstTok {
			t.Errorf("%s: deadline %v attempt %v first token %v, want %v %v %v", c.name, got, tm.attempt, tm.firstToken, c.deadline, c.attempt, c.firstTok)
		}
	}
}
