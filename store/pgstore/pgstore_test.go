package pgstore_test

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/pgstore"
	"github.com/switchyard-ai/switchyard/store/storetest"
)

// dsn returns the test cluster's address, or skips saying how to get one.
func dsn(t *testing.T) string {
	t.Helper()
	d := os.Getenv("SWITCHYARD_TEST_POSTGRES")
	if d == "" {
		t.Skip("SWITCHYARD_TEST_POSTGRES is not set: scripts/test.sh starts a throwaway PostgreSQL cluster and sets it (needs the Debian package postgresql)")
	}
	return d
}

var schemas atomic.Int64

// freshSchema names a schema no other test of this run uses.
func freshSchema() string {
	return fmt.Sprintf("storetest_%d_%d", os.Getpid(), schemas.Add(1))
}

func TestConformance(t *testing.T) {
	addr := dsn(t)
	schemaOf := map[*store.Store]string{}
	storetest.Run(t, storetest.Harness{
		Open: func(t *testing.T) *store.Store {
			schema := freshSchema()
			s, err := pgstore.Open(context.Background(), addr, pgstore.Options{Schema: schema})
			if err != nil {
				t.Fatal(err)
			}
			schemaOf[s] = schema
			return s
		},
		Reopen: func(t *testing.T, s *store.Store) *store.Store {
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s2, err := pgstore.Open(context.Background(), addr, pgstore.Options{Schema: schemaOf[s]})
			if err != nil {
				t.Fatal(err)
			}
			return s2
		},
	})
}
