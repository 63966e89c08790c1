package usagelog

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/boltstore"
)

// BenchmarkRollupSweep measures one Rollup.Sweep over n daily rows on bbolt, all past the
// retention ("expired") or none ("kept": the scan alone).
//
//	go test ./usagelog -run '^$' -bench RollupSweep -benchtime 3x -count 3
func BenchmarkRollupSweep(b *testing.B) {
	for _, n := range []int{10000, 100000} {
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
				now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
				r := NewRollup(st, RollupOptions{Now: func() time.Time { return now }, FlushEvery: time.Hour, Retention: 30 * 24 * time.Hour})
				defer r.Close(ctx)
				day := "2026-05-20"
				if expired {
					day = "2026-01-01"
				}
				fill := func() {
					for i := 0; i < n; i += 1000 {
						err := st.Update(ctx, func(tx store.Tx) error {
							for j := i; j < min(i+1000, n); j++ {
								key := rollupKey(fmt.Sprintf("key%04d", j%1000), day, "m", fmt.Sprintf("provider/model-%d", j/1000))
								if err := tx.Put(ctx, store.SpendRollups, key, []byte(`{"requests":1,"prompt_tokens":10,"completion_tokens":10,"cost_usd":0.01}`)); err != nil {
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
					got, err := r.Sweep(ctx, now)
					if err != nil {
						b.Fatal(err)
					}
					if want := map[bool]int{true: n, false: 0}[expired]; got != want {
						b.Fatalf("swept %d, want %d", got, want)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n)/1000, "µs/row")
			})
		}
	}
}
