package completions

import (
	"context"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// heldSleeper is an Options.Sleep that reports each wait it is asked for and returns
// only when the test lets it (after moving the clock) or its context ends.
type heldSleeper struct {
	asked chan time.Duration
	go_   chan struct{}
}

func (s *heldSleeper) sleep(ctx context.Context, d time.Duration) error {
	s.asked <- d
	select {
	case <-s.go_:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// A request queued for a member's max_parallel slot goes to another model of the request
// as soon as that one is callable again, rather than waiting for the slot: a member it
// skipped at its rpm (before the one it waits on) once the minute has moved on, and a
// member passed over with its breaker open once the cooldown ends. The request sets a
// timer (Options.Sleep) for that moment and re-plans; counted at the upstreams.
func TestQueuedRequestReplansWhenASkippedModelIsCallable(t *testing.T) {
	for _, c := range []struct {
		name   string
		group  ModelGroup
		before func(t *testing.T, h *harness) // makes the other model b/x uncallable
	}{
		{
			name:  "rpm window frees",
			group: ModelGroup{Models: []string{"b/x", "a/m1"}, Limits: []MemberLimits{{RPM: 1}, {MaxParallel: 1}}},
			before: func(t *testing.T, h *harness) {
				if _, err := h.g.Complete(context.Background(), Scope{}, groupReq("b/x")); err != nil {
					t.Fatal(err) // b/x's one call of the minute
				}
			},
		},
		{
			name:  "breaker cooldown ends",
			group: ModelGroup{Models: []string{"a/m1", "b/x"}, Limits: []MemberLimits{{MaxParallel: 1}, {}}},
			before: func(t *testing.T, h *harness) {
				h.b.on("x", step{err: upstreamErr(providers.KindOverloaded, 503, 0)})
				if _, err := h.g.Complete(context.Background(), Scope{}, groupReq("b/x")); err == nil {
					t.Fatal("b/x's scripted failure answered") // opens its breaker (Failures 1)
				}
			},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			clock := &testClock{t: time.Now()} // request deadlines are on the real clock
			sl := &heldSleeper{asked: make(chan time.Duration, 10), go_: make(chan struct{})}
			h := newHarness(t, func(o *Options) {
				o.ModelGroups = map[string]ModelGroup{"g": c.group}
				o.Now, o.Sleep = clock.now, sl.sleep
				o.Breaker = BreakerOptions{Failures: 1, Cooldown: 10 * time.Second}
				o.AttemptTimeout, o.FirstTokenTimeout, o.StreamIdleTimeout = time.Minute, time.Minute, time.Minute
			})
			gp := newSlotGated(h.a)
			h.g.opts.Providers = fakeRegistry{"a": gp, "b": h.b}
			h.b.on("x", step{text: "from x"})
			c.before(t, h)
			h.b.on("x", step{text: "from x"})

			hc, held, got := queueBehindHeldSlot(h, gp)
			d := replanTimer(t, sl, got)
			if q := queuedOn(h.g, "a/m1"); q != 1 {
				t.Fatalf("%d queued on a/m1 while the timer runs; want the request queued", q)
			}
			if d <= 0 || d > time.Minute {
				t.Fatalf("timer of %s; want until b/x is callable (its minute, its cooldown)", d)
			}
			clock.advance(d)
			close(sl.go_)
			a := <-got
			if a.err != nil {
				t.Fatalf("the queued request: %v; want b/x's answer once callable", a.err)
			}
			if a.resp.Provider != "b" || a.resp.Text() != "from x" {
				t.Fatalf("answered by %s (%q); want b/x", a.resp.Provider, a.resp.Text())
			}
			last := a.resp.Attempts[len(a.resp.Attempts)-1]
			if last.Model != "b/x" || last.Outcome != OutcomeOK {
				t.Fatalf("attempts %+v; want b/x answering last", a.resp.Attempts)
			}
			if n := len(gp.started); n != 0 {
				t.Fatalf("%d more calls started on a/m1; want only the held one", n)
			}
			if f, q := inFlightOf(h.g, "a/m1"), queuedOn(h.g, "a/m1"); f != 1 || q != 0 {
				t.Fatalf("a/m1: %d in flight, %d queued; want the held call only", f, q)
			}
			close(hc.release)
			if err := <-held; err != nil {
				t.Fatal(err)
			}
		})
	}
}

// queuedAnswer is what a request queued for a slot is answered.
type queuedAnswer struct {
	resp *Response
	err  error
}

// queueBehindHeldSlot starts a request of a/m1 that holds its one slot (gp) until hc is
// released (its error on held), then a request of group "g" (bounded by a 5 s timeout,
// the bound of a wait no timer ends), answered on got.
func queueBehindHeldSlot(h *harness, gp *slotGatedProvider) (hc *gatedCall, held chan error, got chan queuedAnswer) {
	held = make(chan error, 1)
	go func() { _, err := h.g.Complete(context.Background(), Scope{}, groupReq("a/m1")); held <- err }()
	hc = <-gp.started
	got = make(chan queuedAnswer, 1)
	go func() {
		req := groupReq("g")
		req.FaultPolicy.Timeout = ptr(5.0)
		resp, err := h.g.Complete(context.Background(), Scope{}, req)
		got <- queuedAnswer{resp, err}
	}()
	return hc, held, got
}

// replanTimer is the wait the queued request asks sl for (the timer until a skipped
// model is callable), failing the test if it is answered first.
func replanTimer(t *testing.T, sl *heldSleeper, got chan queuedAnswer) time.Duration {
	t.Helper()
	select {
	case d := <-sl.asked:
		return d
	case a := <-got:
		t.Fatalf("the queued request set no timer for b/x and ended: %+v, %v", a.resp, a.err)
		return 0
	}
}

// releaseHeldSlot ends the call holding a/m1's slot (hc, whose request answers on held),
// then lets the next call a/m1 gets, the queued request's, answer.
func releaseHeldSlot(t *testing.T, hc *gatedCall, held chan error, gp *slotGatedProvider) {
	t.Helper()
	close(hc.release)
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	select {
	case c := <-gp.started:
		close(c.release)
	case <-time.After(5 * time.Second):
		t.Fatal("a/m1 was not called once its slot freed")
	}
}

// rpmSpentHarness is a gateway whose group "g" is b/x (1 call a minute, spent by a first
// request here) then a/m1 (one slot, gated by gp), on the clock now and sleep, breakers
// off.
func rpmSpentHarness(t *testing.T, now func() time.Time, sleep func(context.Context, time.Duration) error) (*harness, *slotGatedProvider) {
	t.Helper()
	h := newHarness(t, func(o *Options) {
		o.ModelGroups = map[string]ModelGroup{"g": {Models: []string{"b/x", "a/m1"}, Limits: []MemberLimits{{RPM: 1}, {MaxParallel: 1}}}}
		o.Now, o.Sleep = now, sleep
		o.Breaker = BreakerOptions{Failures: -1}
		o.AttemptTimeout, o.FirstTokenTimeout, o.StreamIdleTimeout = time.Minute, time.Minute, time.Minute
	})
	gp := newSlotGated(h.a)
	h.g.opts.Providers = fakeRegistry{"a": gp, "b": h.b}
	h.b.on("x", step{text: "from x"})
	if _, err := h.g.Complete(context.Background(), Scope{}, groupReq("b/x")); err != nil {
		t.Fatal(err) // b/x's one call of the minute
	}
	return h, gp
}
