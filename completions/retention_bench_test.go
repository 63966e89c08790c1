package completions

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/boltstore"
)

// BenchmarkSweepConversations measures one SweepConversations over n conversations of 4
// messages each on bbolt: all expired ("expired"), or none ("kept": the scan alone, what an
// hourly sweep costs when there is nothing to delete).
//
//	go test ./completions -run '^$' -bench SweepConversations -benchtime 5x -count 5
func BenchmarkSweepConversations(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		for _, expired := range []bool{true, false} {
			name := fmt.Sprintf("n=%d/kept", n)
			if expired {
				name = fmt.Sprintf("n=%d/expired", n)
			}
			b.Run(name, func(b *testing.B) {
				ctx := context.Background()
				st, err := boltstore.Open(filepath.Join(b.TempDir(), "sweep.db"), boltstore.Options{})
				if err != nil {
					b.Fatal(err)
				}
				defer st.Close()
				base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
				now := base.Add(100 * 24 * time.Hour)
				g, err := New(Options{Providers: fakeRegistry{}, Store: st, Now: func() time.Time { return now }, ConversationRetention: 90 * 24 * time.Hour})
				if err != nil {
					b.Fatal(err)
				}
				fill := func() {
					last := base
					if !expired {
						last = now
					}
					for i := 0; i < n; i += 500 {
						err := st.Update(ctx, func(tx store.Tx) error {
							for j := i; j < min(i+500, n); j++ {
								c := Conversation{ID: newConversationID(), Owner: "k", Title: "t", Created: base, Updated: last, MessageCount: 4}
								for seq := range 4 {
									m := StoredMessage{Seq: seq, Role: "user", Content: []ContentBlock{{Type: "text", Text: "a message of a few words, as a chat turn has"}}, Created: last}
									if err := store.PutJSON(ctx, tx, store.Messages, messageKey(c.ID, seq), m); err != nil {
										return err
									}
								}
								if err := store.PutOwned(ctx, tx, c.ref()); err != nil {
									return err
								}
								if err := store.PutJSON(ctx, tx, store.Conversations, c.ID, c); err != nil {
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
				if !expired {
					fill()
				}
				b.ResetTimer()
				for range b.N {
					if expired {
						b.StopTimer()
						fill()
						b.StartTimer()
					}
					got, err := g.SweepConversations(ctx, now)
					if err != nil {
						b.Fatal(err)
					}
					if want := map[bool]int{true: n, false: 0}[expired]; got != want {
						b.Fatalf("swept %d, want %d", got, want)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*n), "µs/conversation")
			})
		}
	}
}
