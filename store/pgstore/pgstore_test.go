package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
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

// TestReadOnlyIsUnwritable: a write refused by a read-only database (a standby reached after
// a failover; here default_transaction_read_only on the session) was an error the server
// answered 500; it now matches store.ErrUnwritable (the server's 503 with Retry-After, as a
// full disk under bbolt), on Put, Delete and Update alike, and reads still work.
func TestReadOnlyIsUnwritable(t *testing.T) {
	addr := dsn(t)
	ctx := context.Background()
	schema := freshSchema()
	rw, err := pgstore.Open(ctx, addr, pgstore.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	defer rw.Close()
	if err := rw.Put(ctx, store.TrainingJobs, "j1", []byte(`{"a":1}`)); err != nil {
		t.Fatal(err)
	}
	sep := "?"
	if strings.Contains(addr, "?") {
		sep = "&"
	}
	ro, err := pgstore.Open(ctx, addr+sep+"default_transaction_read_only=on", pgstore.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if err := ro.Put(ctx, store.TrainingJobs, "j2", []byte(`{}`)); !errors.Is(err, store.ErrUnwritable) {
		t.Errorf("Put on a read-only database: %v, want ErrUnwritable", err)
	}
	if err := ro.Delete(ctx, store.TrainingJobs, "j1"); !errors.Is(err, store.ErrUnwritable) {
		t.Errorf("Delete on a read-only database: %v, want ErrUnwritable", err)
	}
	err = ro.Update(ctx, func(tx store.Tx) error { return tx.Put(ctx, store.TrainingJobs, "j3", []byte(`{}`)) })
	if !errors.Is(err, store.ErrUnwritable) {
		t.Errorf("Update on a read-only database: %v, want ErrUnwritable", err)
	}
	if v, err := ro.Get(ctx, store.TrainingJobs, "j1"); err != nil || string(v) != `{"a":1}` {
		t.Errorf("read on a read-only database: %s, %v", v, err)
	}
}

func BenchmarkDriver(b *testing.B) {
	addr := os.Getenv("SWITCHYARD_TEST_POSTGRES")
	if addr == "" {
		b.Skip("SWITCHYARD_TEST_POSTGRES is not set: scripts/pg-test-cluster.sh start prints it")
	}
	storetest.Bench(b, func(b *testing.B) *store.Store {
		s, err := pgstore.Open(context.Background(), addr, pgstore.Options{Schema: freshSchema()})
		if err != nil {
			b.Fatal(err)
		}
		return s
	})
}
