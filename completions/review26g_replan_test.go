package completions

import (
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// A queued request that re-plans onto a model it skipped earlier (b/x, at its rpm, before
// the member a/m1 it waits on) keeps a/m1 as the next model: when b/x then fails, the
// request goes back to a/m1 (waiting for its slot again) rather than ending with a/m1
// neither tried nor recorded.
func TestReplanOntoAnEarlierModelKeepsTheWaitedForMember(t *testing.T) {
	clock := &testClock{t: time.Now()}
	sl := &heldSleeper{asked: make(chan time.Duration, 10), go_: make(chan struct{})}
	h, gp := rpmSpentHarness(t, clock.now, sl.sleep)
	h.b.on("x", step{err: upstreamErr(providers.KindAuth, 401, 0)}) // b/x fails once callable
	h.a.on("m1", step{text: "from m1"})

	hc, held, got := queueBehindHeldSlot(h, gp)
	d := replanTimer(t, sl, got)
	clock.advance(d)
	close(sl.go_) // b/x is callable: the request goes there, and b/x fails

	// b/x is called and fails; the request should then wait for a/m1's slot again.
	deadline := time.After(5 * time.Second)
	for h.b.callCount("x") < 2 || queuedOn(h.g, "a/m1") == 0 {
		select {
		case a := <-got:
			t.Fatalf("after b/x failed the request ended without trying a/m1 (the member it waited on): %v; attempts %+v", a.err, attemptsOf(a.resp, a.err))
		case <-deadline:
			t.Fatalf("the request neither queued on a/m1 again nor ended (b/x called %d times)", h.b.callCount("x"))
		case <-time.After(time.Millisecond):
		}
	}
	releaseHeldSlot(t, hc, held, gp)
	a := <-got
	if a.err != nil {
		t.Fatalf("the queued request: %v; want a/m1's answer after b/x failed", a.err)
	}
	if a.resp.Text() != "from m1" {
		t.Fatalf("answered %q; want a/m1's", a.resp.Text())
	}
	var models []string
	for _, at := range a.resp.Attempts {
		models = append(models, at.Model+":"+at.Outcome)
	}
	if want := []string{"b/x:skipped", "b/x:error", "a/m1:ok"}; len(models) != len(want) || models[0] != want[0] || models[1] != want[1] || models[2] != want[2] {
		t.Fatalf("attempts %v; want %v", models, want)
	}
}

// attemptsOf is the attempts a Complete call reports, answered or failed.
func attemptsOf(resp *Response, err error) []Attempt {
	if resp != nil {
		return resp.Attempts
	}
	if e, ok := err.(*AllFailedError); ok {
		return e.Attempts
	}
	return nil
}
