package store_test

import (
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// A data migration is due until it ran, then again once a day after its first run (for
// records replicas of the earlier build wrote meanwhile), then never.
func TestMigrationRunsTwiceADayApart(t *testing.T) {
	st := memstore.New()
	t.Cleanup(func() { st.Close() })
	ctx := t.Context()
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	due := func(at time.Time) bool {
		t.Helper()
		d, err := store.MigrationDue(ctx, st, "m", at)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	if !due(t0) {
		t.Fatal("a migration that never ran is not due")
	}
	if err := store.MigrationRan(ctx, st, "m", t0); err != nil {
		t.Fatal(err)
	}
	if due(t0.Add(time.Hour)) || due(t0.Add(store.MigrationRescanAfter-time.Second)) {
		t.Fatal("due again within a day of its first run")
	}
	if !due(t0.Add(store.MigrationRescanAfter)) {
		t.Fatal("not due a day after its first run")
	}
	if err := store.MigrationRan(ctx, st, "m", t0.Add(store.MigrationRescanAfter)); err != nil {
		t.Fatal(err)
	}
	if due(t0.Add(30 * 24 * time.Hour)) {
		t.Fatal("due a third time")
	}
	if err := st.Put(ctx, store.Migrations, "bad", []byte("not a time")); err != nil {
		t.Fatal(err)
	}
	if d, err := store.MigrationDue(ctx, st, "bad", t0); err != nil || !d {
		t.Fatalf("a record that is no time: due %v, %v; want due (long ago)", d, err)
	}
}
