package completions

import (
	"context"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// gatedProvider blocks every Complete until release is closed, saying so on entered first.
type gatedProvider struct {
	*fakeProvider
	entered chan struct{}
	release chan struct{}
}

func (p *gatedProvider) Complete(ctx context.Context, req *providers.Request) (*providers.Response, error) {
	p.entered <- struct{}{}
	select {
	case <-p.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return p.fakeProvider.Complete(ctx, req)
}

// TestReview25eHealthBreakerOpensWhenTheCheckFails: with OpenBreakers, a failed check opens
// its model's breaker when that check fails, not when the whole round ends. Opening at the
// round's end acted on news as old as the round is long (many deployments, few at once, slow
// answers): a model that failed its check early and has answered real requests since was
// blocked again for a cooldown by its stale result.
func TestReview25eHealthBreakerOpensWhenTheCheckFails(t *testing.T) {
	gate := &gatedProvider{fakeProvider: newFake("c"), entered: make(chan struct{}), release: make(chan struct{})}
	h := newHarness(t, func(o *Options) {
		o.Providers = fakeRegistry{"a": newFake("a"), "c": gate}
		o.ModelGroups = map[string]ModelGroup{"grp": {Models: []string{"a/down", "c/slow"}}}
	})
	lookup, _ := h.g.opts.Providers.Lookup("a")
	a := lookup.(*fakeProvider)
	// Its check fails as an outage would; afterwards it answers.
	a.on("down", step{err: &providers.Error{Kind: providers.KindOverloaded, StatusCode: 503}}, step{text: "back"})
	m, err := NewHealthMonitor(h.g, HealthMonitorOptions{Interval: time.Hour, Concurrency: 1, OpenBreakers: true})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan HealthRound)
	go func() { done <- m.Check(context.Background()) }()
	<-gate.entered // a/down's check has failed; c/slow's is under way
	if st := h.g.BreakerStates()["a/down"]; st != BreakerOpen {
		t.Errorf("a/down's breaker %q once its check failed, want open", st)
	}
	// a/down answers a real request meanwhile (as the last model left, tried despite its
	// breaker, as a probe): it is healthy.
	if _, err := h.g.Complete(context.Background(), Scope{}, userReq("hi", "a/down")); err != nil {
		t.Fatal(err)
	}
	close(gate.release)
	round := <-done
	if round.Results[0].Err == nil {
		t.Fatalf("round %+v: a/down's check should have failed", round.Results)
	}
	if st, ok := h.g.BreakerStates()["a/down"]; ok {
		t.Errorf("a/down's breaker %q at the round's end, after it answered a request since its check: want closed", st)
	}
}
