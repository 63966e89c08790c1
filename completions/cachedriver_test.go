package completions_test

import (
	"path/filepath"
	"testing"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/completions/cachetest"
	"github.com/switchyard-ai/switchyard/store/boltstore"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// Every CacheDriver of the package passes the one conformance suite.
func TestCacheDriversConform(t *testing.T) {
	t.Run("memory", func(t *testing.T) {
		cachetest.RunConformance(t, func(*testing.T) completions.CacheDriver { return &completions.MemoryCache{} })
	})
	t.Run("store/memstore", func(t *testing.T) {
		cachetest.RunConformance(t, func(*testing.T) completions.CacheDriver { return completions.NewStoreCache(memstore.New()) })
	})
	t.Run("store/bbolt", func(t *testing.T) {
		cachetest.RunConformance(t, func(t *testing.T) completions.CacheDriver {
			st, err := boltstore.Open(filepath.Join(t.TempDir(), "cache.db"), boltstore.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return completions.NewStoreCache(st)
		})
	})
}
