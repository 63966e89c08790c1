package completions

import (
	"context"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestHealthMonitorOpensBreakers: with OpenBreakers, a check failing as an outage would (an
// overloaded upstream) opens the model's breaker at once; one failing for a bad key does not,
// and without OpenBreakers nothing opens.
func TestHealthMonitorOpensBreakers(t *testing.T) {
	for _, open := range []bool{true, false} {
		h := newHarness(t, func(o *Options) {
			o.ModelGroups = map[string]ModelGroup{"grp": {Models: []string{"a/down", "a/denied", "a/fine"}}}
		})
		h.a.on("down", step{err: &providers.Error{Kind: providers.KindOverloaded, StatusCode: 503}})
		h.a.on("denied", step{err: &providers.Error{Kind: providers.KindAuth, StatusCode: 401}})
		m, err := NewHealthMonitor(h.g, HealthMonitorOptions{Interval: time.Hour, OpenBreakers: open})
		if err != nil {
			t.Fatal(err)
		}
		round := m.Check(context.Background())
		if len(round.Results) != 3 || round.Results[0].Err == nil || round.Results[1].Err == nil || round.Results[2].Err != nil {
			t.Fatalf("round %+v", round.Results)
		}
		states := h.g.BreakerStates()
		if open && (states["a/down"] != BreakerOpen || len(states) != 1) {
			t.Errorf("OpenBreakers: breaker states %v, want a/down open only", states)
		}
		if !open && len(states) != 0 {
			t.Errorf("without OpenBreakers: breaker states %v, want none", states)
		}
	}
}

// TestHealthMonitorWaitsWithJitter: Run checks at once, then waits Interval ±HealthJitter
// before each next round; a healthy first round is no change.
func TestHealthMonitorWaitsWithJitter(t *testing.T) {
	h := newHarness(t, func(o *Options) {
		o.ModelGroups = map[string]ModelGroup{"grp": {Models: []string{"a/fine"}}}
	})
	ticks := make(chan time.Time)
	waits := make(chan time.Duration, 16)
	changes := 0
	m, err := NewHealthMonitor(h.g, HealthMonitorOptions{Interval: time.Minute,
		After:    func(d time.Duration) <-chan time.Time { waits <- d; return ticks },
		OnChange: func(HealthChange) { changes++ }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		m.Run(ctx)
	}()
	for i := range 5 {
		d := <-waits
		if d < 54*time.Second || d > 66*time.Second {
			t.Errorf("wait %s, want 1m ±10%%", d)
		}
		if n := h.a.callCount("fine"); n != i+1 {
			t.Errorf("%d checks before wait %d, want %d", n, i+1, i+1)
		}
		if i < 4 {
			ticks <- time.Now()
		}
	}
	cancel()
	<-done
	if changes != 0 {
		t.Errorf("%d changes for a model healthy throughout", changes)
	}
	if _, err := NewHealthMonitor(h.g, HealthMonitorOptions{}); err == nil {
		t.Error("a monitor without an interval was made")
	}
}
