package completions

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// countingSleep is an Options.Sleep that returns at once, as one disabling backoff does:
// it counts its calls and closes third at the third.
type countingSleep struct {
	n     atomic.Int64
	third chan struct{}
}

func (s *countingSleep) sleep(ctx context.Context, d time.Duration) error {
	if s.n.Add(1) == 3 {
		close(s.third)
	}
	return ctx.Err()
}

// A request queued for a max_parallel slot, with a re-plan timer for a model it skipped
// at its rpm (b/x), does not spin when Options.Sleep returns at once and Options.Now does
// not move: the timer fires before b/x's minute has moved on, so the request sets no new
// timer and waits for the slot, which answers it once freed. Counted at the Sleep calls
// (one per re-plan pass) and the upstreams.
func TestQueuedRequestDoesNotSpinOnASleepThatReturnsAtOnce(t *testing.T) {
	clock := &testClock{t: time.Now()} // never moved
	sl := &countingSleep{third: make(chan struct{})}
	h, gp := rpmSpentHarness(t, clock.now, sl.sleep)
	h.a.on("m1", step{text: "from m1"})

	hc, held, got := queueBehindHeldSlot(h, gp)
	for queuedOn(h.g, "a/m1") == 0 || sl.n.Load() == 0 {
		select {
		case a := <-got:
			t.Fatalf("the request ended while a/m1's slot was held: %v; attempts %+v", a.err, attemptsOf(a.resp, a.err))
		case <-time.After(time.Millisecond):
		}
	}
	// The timer has been set (and has fired at once): a request that re-plans on it and
	// sets it again loops, Sleep after Sleep, while the slot is held.
	select {
	case <-sl.third:
		t.Fatalf("Options.Sleep called %d times while the request waited for a held slot; want it waiting without re-planning again", sl.n.Load())
	case a := <-got:
		t.Fatalf("the request ended while a/m1's slot was held: %v; attempts %+v", a.err, attemptsOf(a.resp, a.err))
	case <-time.After(100 * time.Millisecond): // how long it is watched, not a bound checked
	}
	if q := queuedOn(h.g, "a/m1"); q != 1 {
		t.Fatalf("%d queued on a/m1; want the request still queued", q)
	}

	releaseHeldSlot(t, hc, held, gp)
	a := <-got
	if a.err != nil {
		t.Fatalf("the queued request: %v; want a/m1's answer once its slot freed", a.err)
	}
	if a.resp.Provider != "a" || a.resp.Text() != "from m1" {
		t.Fatalf("answered by %s (%q); want a/m1", a.resp.Provider, a.resp.Text())
	}
	if n := sl.n.Load(); n > 2 {
		t.Fatalf("Options.Sleep called %d times; want at most 2 (no busy re-planning)", n)
	}
	if n := h.b.callCount("x"); n != 1 {
		t.Fatalf("b/x called %d times; want its one call of the minute only (still at its rpm)", n)
	}
}
