package completions

import (
	"context"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// A request that skipped a model at the key's own rpm for it (the key's entry "x" of
// Models, 1 a minute) and then waits for a member's max_parallel slot (a/m1, held) goes
// back to that model once the key's minute moves on: the wait sets a timer for that
// moment and re-plans, as it does for a member skipped at its own rpm. Two ways the
// model is skipped: its minute was used up before the request (set aside when it
// began), or by the request's own earlier attempt of another model held to the same
// entry (b/x, which failed). Counted at the upstreams: c/x answers the queued request,
// and a/m1, whose slot is held, gets no other call.
func TestLaterKeyModelRateFreedDuringAWaitIsTriedAgain(t *testing.T) {
	for _, c := range []struct {
		name   string
		before func(t *testing.T, h *harness, key Scope) // uses the key's minute of x up, or not
		models []string                                  // the queued request's: model, then fallbacks
		want   []string                                  // its attempts: model:outcome:kind
		bCalls int
	}{
		{
			name: "used up before the request",
			before: func(t *testing.T, h *harness, key Scope) {
				h.b.on("x", step{text: "earlier"})
				if _, err := h.g.Complete(context.Background(), key, groupReq("b/x")); err != nil {
					t.Fatal(err) // the key's one call of x this minute
				}
			},
			models: []string{"c/x", "g"},
			want:   []string{"c/x:skipped:" + modelRateKind, "c/x:ok:"},
			bCalls: 1,
		},
		{
			name: "used up by the request's failed attempt",
			before: func(t *testing.T, h *harness, key Scope) {
				h.b.on("x", step{err: upstreamErr(providers.KindOverloaded, 503, 0)})
			},
			models: []string{"b/x", "c/x", "g"},
			want:   []string{"b/x:error:" + providers.KindOverloaded.String(), "c/x:skipped:" + modelRateKind, "c/x:ok:"},
			bCalls: 1,
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			clock := &testClock{t: time.Now()} // request deadlines are on the real clock
			sl := &heldSleeper{asked: make(chan time.Duration, 10), go_: make(chan struct{})}
			h := newHarness(t, func(o *Options) {
				o.ModelGroups = map[string]ModelGroup{"g": {Models: []string{"a/m1"}, Limits: []MemberLimits{{MaxParallel: 1}}}}
				o.Now, o.Sleep = clock.now, sl.sleep
				o.Breaker = BreakerOptions{Failures: -1}
				o.AttemptTimeout, o.FirstTokenTimeout, o.StreamIdleTimeout = time.Minute, time.Minute, time.Minute
			})
			gp, cx := newSlotGated(h.a), newFake("c")
			h.g.opts.Providers = fakeRegistry{"a": gp, "b": h.b, "c": cx}
			cx.on("x", step{text: "from x"})
			rpm := int64(1)
			// "b/x" and "c/x" are both held to the key's entry "x" (the name without its provider).
			key := Scope{Budget: NewBudget(BudgetLimits{Models: map[string]ModelLimits{"x": {RequestsPerMinute: &rpm}}}), KeyID: "k"}
			c.before(t, h, key)

			held := make(chan error, 1)
			go func() { _, err := h.g.Complete(context.Background(), Scope{}, groupReq("a/m1")); held <- err }()
			hc := <-gp.started // a/m1's one slot is held
			got := make(chan queuedAnswer, 1)
			go func() {
				req := groupReq(c.models[0])
				req.FallbackModels = c.models[1:]
				req.FaultPolicy.Timeout = ptr(5.0) // the bound of a wait no timer ends
				resp, err := h.g.Complete(context.Background(), key, req)
				got <- queuedAnswer{resp, err}
			}()

			d := replanTimer(t, sl, got)
			if q := queuedOn(h.g, "a/m1"); q != 1 {
				t.Fatalf("%d queued on a/m1 while the timer runs; want the request queued", q)
			}
			if d <= 0 || d > time.Minute {
				t.Fatalf("timer of %s; want until the key's minute of x moves on", d)
			}
			clock.advance(d)
			close(sl.go_)
			a := <-got
			if a.err != nil {
				t.Fatalf("the queued request: %v (attempts %+v); want c/x's answer once the key's minute moved on", a.err, attemptsOf(a.resp, a.err))
			}
			if a.resp.Provider != "c" || a.resp.Text() != "from x" {
				t.Fatalf("answered by %s (%q); want c/x", a.resp.Provider, a.resp.Text())
			}
			var outcomes []string
			for _, at := range a.resp.Attempts {
				outcomes = append(outcomes, at.Model+":"+at.Outcome+":"+at.Kind)
			}
			if len(outcomes) != len(c.want) {
				t.Fatalf("attempts %v; want %v", outcomes, c.want)
			}
			for i := range c.want {
				if outcomes[i] != c.want[i] {
					t.Fatalf("attempts %v; want %v", outcomes, c.want)
				}
			}
			if n := cx.callCount("x"); n != 1 {
				t.Fatalf("c/x called %d times; want 1 (once the key's minute moved on)", n)
			}
			if n := h.b.callCount("x"); n != c.bCalls {
				t.Fatalf("b/x called %d times; want %d", n, c.bCalls)
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
