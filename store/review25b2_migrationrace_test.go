package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/storetest/drivertest"
)

// Two replicas that found a migration due run its first run at once; the one that ends
// second does not record the second run (due a day after the first, for the records the
// replicas of the earlier build write meanwhile): it is still due a day later, once.
func TestReview25b2ConcurrentFirstRunsLeaveTheSecondDue(t *testing.T) {
	drivertest.ForEach(t, func(t *testing.T, d store.Driver) {
		ctx := context.Background()
		a, b := store.New(d), store.New(d)
		t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
		for _, st := range []*store.Store{a, b} {
			if due, err := store.MigrationDue(ctx, st, "m", t0); err != nil || !due {
				t.Fatalf("due %v, %v; want due", due, err)
			}
		}
		if err := store.MigrationRan(ctx, a, "m", t0.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		if err := store.MigrationRan(ctx, b, "m", t0.Add(10*time.Minute)); err != nil {
			t.Fatal(err)
		}
		if done, err := store.MigrationDone(ctx, a, "m"); err != nil || done {
			t.Fatalf("after two first runs: done %v, %v; want not done", done, err)
		}
		if due, err := store.MigrationDue(ctx, a, "m", t0.Add(time.Minute+store.MigrationRescanAfter)); err != nil || !due {
			t.Fatalf("a day after the first runs: due %v, %v; want the second run due", due, err)
		}
		if err := store.MigrationRan(ctx, a, "m", t0.Add(time.Minute+store.MigrationRescanAfter)); err != nil {
			t.Fatal(err)
		}
		if done, err := store.MigrationDone(ctx, a, "m"); err != nil || !done {
			t.Fatalf("after the second run: done %v, %v; want done", done, err)
		}
	})
}
