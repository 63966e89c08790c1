package usagelog

import (
	"context"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
)

// An embeddings request answered partly from the response cache (Cache "partial") carries
// what its cached inputs saved (SavedUSD), as the metrics count it (telemetry adds every
// record's SavedUSD); the usage series keeps SavedUSD of full hits only, so the console's
// "saved" leaves out every partial hit's saving.
func TestReview12bPartialHitSavingIsLostFromTheSeries(t *testing.T) {
	c := &clock{t: time.Date(2026, 11, 26, 12, 0, 30, 0, time.UTC)}
	r := New(Options{Now: c.now})
	partial := record("a", "openai/text-embedding-3-small", completions.RequestOK, time.Second, 0.01, 100)
	partial.Operation, partial.Cache, partial.SavedUSD = completions.OperationEmbeddings, completions.CachePartial, 0.02
	r.ObserveRequest(context.Background(), partial)
	s := r.Series("a", time.Hour, time.Minute)
	if len(s.Models) != 1 {
		t.Fatalf("series %+v", s)
	}
	if tot := s.Models[0].Total; tot.Requests != 1 || tot.SavedUSD != 0.02 {
		t.Fatalf("a partial hit: %d requests, saved_usd %v; want 1 request (the model was called) and saved_usd 0.02", tot.Requests, tot.SavedUSD)
	}
}
