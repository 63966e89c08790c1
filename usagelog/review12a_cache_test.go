package usagelog

import (
	"context"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
)

// A response cache hit calls no model (the metrics leave its tokens out), yet the usage
// series counts it as a request of the model with the answer's tokens and its
// sub-millisecond latency: the console's per-model mean latency and tokens are skewed.
func TestReview12aCacheHitsSkewThePerModelSeries(t *testing.T) {
	c := &clock{t: time.Date(2026, 11, 26, 12, 0, 30, 0, time.UTC)}
	r := New(Options{Now: c.now})
	ctx := context.Background()
	r.ObserveRequest(ctx, record("a", "up/m", completions.RequestOK, time.Second, 0.01, 100))
	hit := record("a", "up/m", completions.RequestOK, time.Millisecond, 0, 100)
	hit.Attempts, hit.Cache, hit.SavedUSD = nil, completions.CacheHit, 0.01
	hit.Usage.Costs = completions.Costs{PriceKnown: true}
	for range 9 {
		r.ObserveRequest(ctx, hit)
	}
	s := r.Series("a", time.Hour, time.Minute)
	if len(s.Models) != 1 {
		t.Fatalf("series %+v", s)
	}
	tot := s.Models[0].Total
	if tot.PromptTokens != 100 || tot.LatencyMSSum/float64(tot.Requests) < 500 {
		t.Fatalf("model up/m: %d prompt tokens over %d requests, mean latency %.1f ms; want the model's own 100 tokens and ~1000 ms (hits called no model)",
			tot.PromptTokens, tot.Requests, tot.LatencyMSSum/float64(tot.Requests))
	}
}
