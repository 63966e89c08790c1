package routing_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/routing"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/boltstore"
)

// BenchmarkExpireSessions measures one Selector.ExpireSessions on bbolt over 100,000
// sessions within the retention and 0 or 1,000 past it (made again, outside the timer,
// before each run). The sessions are written directly in the store, with their index keys.
//
//	go test ./routing -run '^$' -bench ExpireSessions -benchtime 3x -count 3
func BenchmarkExpireSessions(b *testing.B) {
	const kept = 100000
	for _, expired := range []int{0, 1000} {
		b.Run(fmt.Sprintf("kept=%d/expired=%d", kept, expired), func(b *testing.B) {
			ctx := context.Background()
			st, err := boltstore.Open(filepath.Join(b.TempDir(), "sessions.db"), boltstore.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			s := routing.NewSelector(routing.Options{Store: st, Now: func() time.Time { return now }, SessionRetention: 24 * time.Hour, Scorer: routing.DefaultScorer{}})
			if _, err := s.ExpireSessions(ctx); err != nil { // an empty store: nothing to migrate
				b.Fatal(err)
			}
			fill := func(from, n int, created time.Time) {
				for i := from; i < from+n; i += 1000 {
					err := st.Update(ctx, func(tx store.Tx) error {
						for j := i; j < min(i+1000, from+n); j++ {
							sess := routing.Session{ID: fmt.Sprintf("sess_%024x", j), Owner: "owner", CreatedAt: created, Chosen: "openai/gpt-4o",
								Ranked: []routing.SessionCandidate{{Label: "openai/gpt-4o", Score: 0.8, Source: "router"}, {Label: "openai/gpt-4o-mini", Score: 0.7, Source: "router"}}}
							v, err := json.Marshal(sess)
							if err != nil {
								return err
							}
							if err := tx.Put(ctx, store.Sessions, sess.ID, v); err != nil {
								return err
							}
							if err := tx.Put(ctx, store.SessionExpiry, fmt.Sprintf("%019d/%s", created.UnixNano(), sess.ID), nil); err != nil {
								return err
							}
						}
						return nil
					})
					if err != nil {
						b.Fatal(err)
					}
				}
			}
			fill(0, kept, now.Add(-time.Hour))
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				fill(kept, expired, now.Add(-48*time.Hour))
				b.StartTimer()
				got, err := s.ExpireSessions(ctx)
				if err != nil {
					b.Fatal(err)
				}
				if got != expired {
					b.Fatalf("expired %d, want %d", got, expired)
				}
			}
		})
	}
}
