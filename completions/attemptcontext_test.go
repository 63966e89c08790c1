package completions

import (
	"context"
	"testing"
	"time"
)

// An attempt whose timeout would end after the request's deadline runs under the
// request's context: no context and timer of its own (context.WithTimeout's 7
// allocations), and the request's deadline still ends it.
func TestAttemptPastDeadlineNeedsNoContextOfItsOwn(t *testing.T) {
	allocs := func(attempt time.Duration) float64 {
		h := newHarness(t, func(o *Options) { o.AttemptTimeout, o.RequestTimeout = attempt, time.Minute })
		req := userReq("hi", "a/m")
		ask := func() {
			if _, err := h.g.Complete(context.Background(), Scope{Owner: "k"}, req); err != nil {
				t.Fatal(err)
			}
		}
		ask() // warm: the gateway's caches
		return testing.AllocsPerRun(200, ask)
	}
	bounded, past := allocs(30*time.Second), allocs(2*time.Minute)
	if bounded-past < 4 {
		t.Fatalf("allocations per request: attempt timeout within the deadline %v, past it %v: want at least 4 fewer past it", bounded, past)
	}
}
