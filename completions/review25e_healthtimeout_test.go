package completions

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// deadlineProvider answers every call at once and records whether its context had a
// deadline, and how far away it was.
type deadlineProvider struct {
	*fakeProvider
	mu       sync.Mutex
	deadline []time.Duration // -1: none
}

func (p *deadlineProvider) Complete(ctx context.Context, req *providers.Request) (*providers.Response, error) {
	p.mu.Lock()
	left := time.Duration(-1)
	if d, ok := ctx.Deadline(); ok {
		left = time.Until(d)
	}
	p.deadline = append(p.deadline, left)
	p.mu.Unlock()
	return p.fakeProvider.Complete(ctx, req)
}

// TestReview25eHealthMonitorBoundsChecksWithoutTimeout: with no Timeout (serve
// --model-health-timeout 0, "no bound but the request's own"), a background check has no
// request to bound it: an upstream that never answers would hold the round, and every later
// one, until shutdown (GET /health answering an ever older round, no alert). Each check is
// bounded by the Interval instead.
func TestReview25eHealthMonitorBoundsChecksWithoutTimeout(t *testing.T) {
	p := &deadlineProvider{fakeProvider: newFake("c")}
	h := newHarness(t, func(o *Options) {
		o.Providers = fakeRegistry{"c": p}
		o.ModelGroups = map[string]ModelGroup{"grp": {Models: []string{"c/m"}}}
	})
	m, err := NewHealthMonitor(h.g, HealthMonitorOptions{Interval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	m.Check(context.Background())
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.deadline) != 1 {
		t.Fatalf("%d checks, want 1", len(p.deadline))
	}
	if left := p.deadline[0]; left < 0 || left > time.Hour {
		t.Errorf("check's deadline %s away (-1: none), want one within the interval", left)
	}
}
