package completions_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/completions/cachetest"
	"github.com/switchyard-ai/switchyard/store/boltstore"
	"github.com/switchyard-ai/switchyard/store/memstore"
	"github.com/switchyard-ai/switchyard/store/pgstore"
)

// Every CacheDriver of the package passes the one conformance suite.
func TestCacheDriversConform(t *testing.T) {
	t.Run("memory", func(t *testing.T) {
		cachetest.RunConformance(t, func(*testing.T) completions.CacheDriver { return &completions.MemoryCache{} })
	})
	t.Run("store/memstore", func(t *testing.T) {
		cachetest.RunConformance(t, func(*testing.T) completions.CacheDriver { return completions.NewStoreCache(memstore.New()) })
	})
	t.Run("store/postgres", func(t *testing.T) {
		dsn := os.Getenv("SWITCHYARD_TEST_POSTGRES")
		if dsn == "" {
			t.Skip("SWITCHYARD_TEST_POSTGRES is not set: scripts/test.sh starts a throwaway PostgreSQL cluster and sets it (needs the Debian package postgresql)")
		}
		n := 0
		cachetest.RunConformance(t, func(t *testing.T) completions.CacheDriver {
			n++ // a schema per driver: each starts empty
			st, err := pgstore.Open(context.Background(), dsn, pgstore.Options{Schema: fmt.Sprintf("cache_%d_%d", os.Getpid(), n)})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return completions.NewStoreCache(st)
		})
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
