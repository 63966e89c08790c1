package completions

import (
	"context"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestReview25eHealthBreakerChangeCause: a breaker a failed health check opens tells
// BreakerOptions.OnChange (and so the breaker's deployment_down alert, its error_class and
// failures) the failure's kind, as documented for Cause, and counts that failure: not "health
// check: overloaded" after 0 failures.
func TestReview25eHealthBreakerChangeCause(t *testing.T) {
	var changes []BreakerChange
	h := newHarness(t, func(o *Options) {
		o.ModelGroups = map[string]ModelGroup{"grp": {Models: []string{"a/down"}}}
		o.Breaker.OnChange = func(c BreakerChange) { changes = append(changes, c) }
	})
	h.a.on("down", step{err: &providers.Error{Kind: providers.KindOverloaded, StatusCode: 503}})
	m, err := NewHealthMonitor(h.g, HealthMonitorOptions{Interval: time.Hour, OpenBreakers: true})
	if err != nil {
		t.Fatal(err)
	}
	m.Check(context.Background())
	if len(changes) != 1 {
		t.Fatalf("breaker changes %+v, want one", changes)
	}
	c := changes[0]
	if c.From != BreakerClosed || c.To != BreakerOpen || c.Cause != providers.KindOverloaded.String() || c.Failures != 1 {
		t.Errorf("change %+v, want closed to open, cause %q, 1 failure", c, providers.KindOverloaded.String())
	}
}
