package completions_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/store/boltstore"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

func review12dStoreCaches(t *testing.T) map[string]func(t *testing.T) *completions.StoreCache {
	return map[string]func(t *testing.T) *completions.StoreCache{
		"memstore": func(*testing.T) *completions.StoreCache { return completions.NewStoreCache(memstore.New()) },
		"bbolt": func(t *testing.T) *completions.StoreCache {
			st, err := boltstore.Open(filepath.Join(t.TempDir(), "c.db"), boltstore.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return completions.NewStoreCache(st)
		},
	}
}

// Paging: more than a page (64) under the prefix, interleaved with keys outside it, all
// of the prefix's deleted and none of the others.
func TestReview12dStoreCacheDeletePrefixPages(t *testing.T) {
	ctx := context.Background()
	t0 := time.Unix(1e9, 0)
	for name, mk := range review12dStoreCaches(t) {
		t.Run(name, func(t *testing.T) {
			c := mk(t)
			for i := range 300 {
				for _, p := range []string{"a.", "ab.", "b."} {
					if err := c.Put(ctx, fmt.Sprintf("%s%04d", p, i), []byte("v"), t0, t0.Add(time.Hour)); err != nil {
						t.Fatal(err)
					}
				}
			}
			if n, err := c.DeletePrefix(ctx, "a."); err != nil || n != 300 {
				t.Fatalf("DeletePrefix(a.) = %d, %v", n, err)
			}
			for _, k := range []string{"ab.0000", "ab.0299", "b.0150"} {
				if _, _, err := c.Get(ctx, k, t0); err != nil {
					t.Fatalf("%s: %v", k, err)
				}
			}
		})
	}
}

// Two purges of the same entries at once (two replicas, or a retried DELETE) report
// together more deletions than there were entries: the count is of what was listed,
// outside the transaction that deletes.
func TestReview12dStoreCacheDeletePrefixCountsOnlyWhatItDeleted(t *testing.T) {
	ctx := context.Background()
	t0 := time.Unix(1e9, 0)
	for name, mk := range review12dStoreCaches(t) {
		t.Run(name, func(t *testing.T) {
			c := mk(t)
			const total = 640
			for i := range total {
				_ = c.Put(ctx, fmt.Sprintf("a.%04d", i), []byte("v"), t0, t0.Add(time.Hour))
			}
			for round := 0; round < 20; round++ {
				var wg sync.WaitGroup
				counts := make([]int, 4)
				for w := range counts {
					wg.Add(1)
					go func() {
						defer wg.Done()
						n, err := c.DeletePrefix(ctx, "a.")
						if err != nil {
							t.Error(err)
						}
						counts[w] = n
					}()
				}
				wg.Wait()
				sum := 0
				for _, n := range counts {
					sum += n
				}
				if sum > total {
					t.Fatalf("round %d: concurrent purges of %d entries report %v deleted (%d)", round, total, counts, sum)
				}
				for i := range total {
					_ = c.Put(ctx, fmt.Sprintf("a.%04d", i), []byte("v"), t0, t0.Add(time.Hour))
				}
			}
		})
	}
}
