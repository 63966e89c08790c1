package usagelog

import (
	"context"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// BenchmarkRollupObserve measures Rollup.ObserveRequest of a request made with a team's
// virtual key naming two tags: "steady" adds to the day's pending rows already there (the
// common case between two flushes), "flushed" includes a Flush (to memstore) every 100
// requests, so each flush starts new pending rows.
//
//	go test ./usagelog -run '^$' -bench RollupObserve -benchmem -count 3
func BenchmarkRollupObserve(b *testing.B) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	rec := record("key_0123456789abcdef", "openai/gpt-4o", completions.RequestOK, time.Second, 0.01, 100)
	rec.Tags = []string{"env:prod", "app:web"}
	rec.KeyID, rec.TeamID, rec.UserID = "vk_0123456789abcdef0123", "team-eng", "u1"
	for _, c := range []struct {
		name  string
		every int
	}{{"steady", 0}, {"flushed", 100}} {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			r := NewRollup(memstore.New(), RollupOptions{Now: func() time.Time { return now }, FlushEvery: time.Hour})
			defer r.Close(ctx)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				r.ObserveRequest(ctx, rec)
				if c.every > 0 && i%c.every == c.every-1 {
					if err := r.Flush(ctx); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
