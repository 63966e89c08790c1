package usagelog

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/boltstore"
	"github.com/switchyard-ai/switchyard/store/memstore"
	"github.com/switchyard-ai/switchyard/store/pgstore"
)

// rollupBackends are the stores the retention tests run on: memstore, bbolt and, when
// SWITCHYARD_TEST_POSTGRES names a database (scripts/test.sh sets it), PostgreSQL.
func rollupBackends() map[string]func(t *testing.T) *store.Store {
	return map[string]func(t *testing.T) *store.Store{
		"memstore": func(*testing.T) *store.Store { return memstore.New() },
		"boltstore": func(t *testing.T) *store.Store {
			st, err := boltstore.Open(filepath.Join(t.TempDir(), "rollups.db"), boltstore.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		},
		"postgres": func(t *testing.T) *store.Store {
			dsn := os.Getenv("SWITCHYARD_TEST_POSTGRES")
			if dsn == "" {
				t.Skip("SWITCHYARD_TEST_POSTGRES is not set: scripts/test.sh starts a throwaway PostgreSQL cluster and sets it (needs the Debian package postgresql)")
			}
			st, err := pgstore.Open(context.Background(), dsn, pgstore.Options{Schema: fmt.Sprintf("rollups_%d_%d", os.Getpid(), time.Now().UnixNano())})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		},
	}
}

// TestRollupRetention: daily rows older than the retention are not read (before any
// sweep) and are deleted by a sweep, for every owner; the days within it are untouched.
func TestRollupRetention(t *testing.T) {
	for name, open := range rollupBackends() {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			st := open(t)
			clock := &fixedClock{t: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)}
			r := NewRollup(st, RollupOptions{Now: clock.now, FlushEvery: time.Hour, Retention: 10 * 24 * time.Hour})
			defer r.Close(ctx)
			for day := range 20 { // 2026-01-01 … 2026-01-20, two owners, a tag, a model, a key (the owner's own, "") and a user, key and model row each
				clock.set(time.Date(2026, 1, 1+day, 12, 0, 0, 0, time.UTC))
				for _, owner := range []string{"k1", "k2"} {
					rec := record(owner, "p/m", completions.RequestOK, time.Second, 0.01, 10)
					rec.Tags = []string{"team:a"}
					r.ObserveRequest(ctx, rec)
				}
			}
			if err := r.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			// Now 2026-01-20 12:00: kept are the days from 2026-01-10 on (now - 10 days).
			from, to := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 1, 20, 0, 0, 0, 0, time.UTC)
			rows, err := r.Spend(ctx, "k1", from, to, SpendByModel)
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != 11 || rows[0].Day != "2026-01-10" {
				t.Fatalf("before the sweep, read %d rows from %v, want the 11 days from 2026-01-10", len(rows), rows[0].Day)
			}
			n, err := r.Sweep(ctx, clock.now())
			if err != nil {
				t.Fatal(err)
			}
			if n != 9*2*4 { // 9 days, 2 owners, a tag row, a model row, a key row and a user, key and model row
				t.Errorf("swept %d rows, want 72", n)
			}
			all, err := st.List(ctx, store.SpendRollups, store.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(all) != 11*2*4 {
				t.Errorf("%d rows left, want 88", len(all))
			}
			for _, owner := range []string{"k1", "k2"} {
				for _, by := range []string{SpendByTag, SpendByModel, SpendByKey} {
					rows, err := r.Spend(ctx, owner, from, to, by)
					if err != nil || len(rows) != 11 || rows[0].Requests != 1 {
						t.Errorf("%s by %s after the sweep: %d rows %v", owner, by, len(rows), err)
					}
				}
			}
			if n, err := r.Sweep(ctx, clock.now()); err != nil || n != 0 {
				t.Errorf("second sweep: %d %v, want 0", n, err)
			}
		})
	}
}

// TestRollupRetentionForever: the default (0) and a negative retention keep every day.
func TestRollupRetentionForever(t *testing.T) {
	for _, keep := range []time.Duration{0, -1} {
		ctx := context.Background()
		st := memstore.New()
		clock := &fixedClock{t: time.Date(2020, 1, 1, 12, 0, 0, 0, time.UTC)}
		r := NewRollup(st, RollupOptions{Now: clock.now, FlushEvery: time.Hour, Retention: keep})
		r.ObserveRequest(ctx, record("k1", "p/m", completions.RequestOK, time.Second, 0.01, 10))
		if err := r.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		clock.set(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
		if n, err := r.Sweep(ctx, clock.now()); err != nil || n != 0 {
			t.Errorf("retention %v: swept %d (%v)", keep, n, err)
		}
		day := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
		if rows, err := r.Spend(ctx, "k1", day, day, SpendByModel); err != nil || len(rows) != 1 {
			t.Errorf("retention %v: read %d rows (%v), want 1", keep, len(rows), err)
		}
		r.Close(ctx)
	}
}

// TestRollupSweepStopsOnCancel: a cancelled sweep deletes nothing and says why.
func TestRollupSweepStopsOnCancel(t *testing.T) {
	st := memstore.New()
	clock := &fixedClock{t: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)}
	r := NewRollup(st, RollupOptions{Now: clock.now, FlushEvery: time.Hour, Retention: 24 * time.Hour})
	defer r.Close(context.Background())
	r.ObserveRequest(context.Background(), record("k1", "p/m", completions.RequestOK, time.Second, 0.01, 10))
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	before, _ := st.List(context.Background(), store.SpendRollups, store.ListOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	n, err := r.Sweep(ctx, time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC))
	if !errors.Is(err, context.Canceled) || n != 0 {
		t.Fatalf("cancelled sweep: %d %v, want 0 and context.Canceled", n, err)
	}
	if all, _ := st.List(context.Background(), store.SpendRollups, store.ListOptions{}); len(before) == 0 || len(all) != len(before) {
		t.Errorf("%d rows left of %d", len(all), len(before))
	}
}
