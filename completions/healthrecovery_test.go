package completions

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// With OpenBreakers, a passing check of a model whose breaker is open closes it at once
// (not after the cooldown), telling the same BreakerChange to closed a probe's success
// does; without OpenBreakers the check leaves the breaker alone.
func TestHealthCheckPassingClosesOpenBreaker(t *testing.T) {
	for _, openBreakers := range []bool{true, false} {
		var mu sync.Mutex
		var changes []BreakerChange
		h := newHarness(t, func(o *Options) {
			o.ModelGroups = map[string]ModelGroup{"grp": {Models: []string{"a/m1"}}}
			o.Breaker = BreakerOptions{Failures: 2, Cooldown: time.Hour, OnChange: func(c BreakerChange) {
				mu.Lock()
				changes = append(changes, c)
				mu.Unlock()
			}}
		})
		// Real traffic opens the breaker: two failures in a row.
		h.a.on("m1", step{err: upstreamErr(providers.KindOverloaded, 503, 0)})
		for range 2 {
			h.g.Complete(context.Background(), Scope{}, groupReq("a/m1"))
		}
		if st := h.g.BreakerStates()["a/m1"]; st != BreakerOpen {
			t.Fatalf("breaker %q after two failures, want open", st)
		}
		h.a.on("m1", step{text: "back"})
		m, err := NewHealthMonitor(h.g, HealthMonitorOptions{Interval: time.Hour, OpenBreakers: openBreakers})
		if err != nil {
			t.Fatal(err)
		}
		if round := m.Check(context.Background()); round.Results[0].Err != nil {
			t.Fatalf("check: %v", round.Results[0].Err)
		}
		st, open := h.g.BreakerStates()["a/m1"]
		mu.Lock()
		last := changes[len(changes)-1]
		mu.Unlock()
		if openBreakers {
			if open {
				t.Fatalf("OpenBreakers: breaker %q after a passing check, want closed (the cooldown is an hour)", st)
			}
			if last.From != BreakerOpen || last.To != BreakerClosed || last.Model != "a/m1" {
				t.Fatalf("OpenBreakers: last change %+v, want a/m1 open -> closed", last)
			}
			// Closed for real: requests go to it without a probe being held back.
			if resp, err := h.g.Complete(context.Background(), Scope{}, groupReq("a/m1")); err != nil || resp.Message.Content[0].Text != "back" {
				t.Fatalf("after the check closed it: %v, %v", resp, err)
			}
		} else if st != BreakerOpen || last.To != BreakerOpen {
			t.Fatalf("without OpenBreakers: breaker %q, last change %+v; want it left open", st, last)
		}
	}
}

// HealthChange.Breaker says which changes the breaker reports itself: a check failing as
// an outage (it opens the breaker) and the recovery ending that outage; not a failure the
// breaker does not count (a bad key), nor anything without OpenBreakers.
func TestHealthChangeSaysWhenTheBreakerReportsIt(t *testing.T) {
	for _, openBreakers := range []bool{true, false} {
		h := newHarness(t, func(o *Options) {
			o.ModelGroups = map[string]ModelGroup{"grp": {Models: []string{"a/down", "a/denied"}}}
		})
		h.a.on("down", step{err: upstreamErr(providers.KindOverloaded, 503, 0)}, step{text: "ok"})
		h.a.on("denied", step{err: &providers.Error{Kind: providers.KindAuth, StatusCode: 401}}, step{text: "ok"})
		var got []HealthChange
		m, err := NewHealthMonitor(h.g, HealthMonitorOptions{Interval: time.Hour, OpenBreakers: openBreakers,
			OnChange: func(c HealthChange) { got = append(got, c) }})
		if err != nil {
			t.Fatal(err)
		}
		m.Check(context.Background()) // both fail
		m.Check(context.Background()) // both pass
		by := map[string][]bool{}
		for _, c := range got {
			by[c.Model] = append(by[c.Model], c.Breaker)
		}
		wantDown := openBreakers
		if len(by["a/down"]) != 2 || by["a/down"][0] != wantDown || by["a/down"][1] != wantDown {
			t.Errorf("OpenBreakers %v: a/down's changes say Breaker %v, want %v twice (down, recovered)", openBreakers, by["a/down"], wantDown)
		}
		if len(by["a/denied"]) != 2 || by["a/denied"][0] || by["a/denied"][1] {
			t.Errorf("OpenBreakers %v: a/denied's changes say Breaker %v, want false twice (a bad key opens no breaker)", openBreakers, by["a/denied"])
		}
	}
}
