package telemetry

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/switchyard-ai/switchyard/completions"
)

// A response cache hit calls no model: it is counted with the cache's series and what it
// saved, not as a request of the model (its near-zero latency would flatter the model).
func TestCacheHitsAreNotTheModelsRequests(t *testing.T) {
	m := New(Options{})
	ctx := context.Background()
	ok := completions.Attempt{Model: "openai/gpt-4o-mini", Outcome: completions.OutcomeOK}
	miss := record(completions.RequestOK, ok)
	miss.Cache = completions.CacheMiss
	m.ObserveRequest(ctx, miss)
	hit := record(completions.RequestOK, ok)
	hit.Attempts, hit.Cache, hit.SavedUSD = nil, completions.CacheHit, 0.002
	hit.Usage.Costs = completions.Costs{PriceKnown: true}
	m.ObserveRequest(ctx, hit)
	m.ObserveRequest(ctx, hit)
	if n := testutil.ToFloat64(m.requests.WithLabelValues("", "chat", "openai", "openai/gpt-4o-mini", "ok", "false", "")); n != 1 {
		t.Fatalf("the model's requests = %v, want 1 (the miss)", n)
	}
	if h, mi := testutil.ToFloat64(m.cacheLookups.WithLabelValues("hit")), testutil.ToFloat64(m.cacheLookups.WithLabelValues("miss")); h != 2 || mi != 1 {
		t.Fatalf("cache requests: %v hits, %v misses; want 2 and 1", h, mi)
	}
	if s := testutil.ToFloat64(m.cacheSaved); s < 0.0039 || s > 0.0041 {
		t.Fatalf("saved %v, want 0.004", s)
	}
}
