package completions

import (
	"context"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/boltstore"
)

// BenchmarkStoreCacheSweep measures one StoreCache.Sweep on bbolt over 100,000 entries
// not expired and 0 or 1,000 expired (made again, outside the timer, before each sweep).
// The entries are written directly in the store, with their expiry index keys.
//
//	go test ./completions -run '^$' -bench StoreCacheSweep -benchtime 3x -count 3
func BenchmarkStoreCacheSweep(b *testing.B) {
	const kept = 100000
	for _, expired := range []int{0, 1000} {
		b.Run(fmt.Sprintf("kept=%d/expired=%d", kept, expired), func(b *testing.B) {
			ctx := context.Background()
			st, err := boltstore.Open(filepath.Join(b.TempDir(), "cache.db"), boltstore.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			c := NewStoreCache(st)
			t0 := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
			if _, err := c.Sweep(ctx, t0); err != nil { // an empty store: nothing to migrate
				b.Fatal(err)
			}
			value := make([]byte, 2048) // a small answer
			fill := func(from, n int, expires time.Time) {
				for i := from; i < from+n; i += 1000 {
					err := st.Update(ctx, func(tx store.Tx) error {
						for j := i; j < min(i+1000, from+n); j++ {
							key := fmt.Sprintf("scope/%064d", j)
							v := make([]byte, storeCacheHeader+len(value))
							binary.BigEndian.PutUint64(v, uint64(t0.UnixNano()))
							binary.BigEndian.PutUint64(v[8:], uint64(expires.UnixNano()))
							copy(v[storeCacheHeader:], value)
							if err := tx.Put(ctx, store.ResponseCache, key, v); err != nil {
								return err
							}
							if err := tx.Put(ctx, store.ResponseCacheExpiry, fmt.Sprintf("%019d/%s", expires.UnixNano(), key), nil); err != nil {
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
			fill(0, kept, t0.Add(24*time.Hour))
			now := t0.Add(time.Hour)
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				fill(kept, expired, t0.Add(time.Minute))
				b.StartTimer()
				got, err := c.Sweep(ctx, now)
				if err != nil {
					b.Fatal(err)
				}
				if got != expired {
					b.Fatalf("swept %d, want %d", got, expired)
				}
			}
		})
	}
}
