package telemetry

import (
	"context"
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// fakeLockingDriver is a fake store.RecordLocker: a memory store recording the locks its
// UpdateLocked was given.
type fakeLockingDriver struct {
	*memstore.Driver
	locks []store.Ref
}

func (d *fakeLockingDriver) UpdateLocked(ctx context.Context, locks []store.Ref, fn func(tx store.Tx) error) error {
	d.locks = append(d.locks, locks...)
	return d.Update(ctx, fn)
}

// TestTimedStoreForwardsLocks: the metrics' store wrapper passes UpdateLocked's locks on
// to its driver (on PostgreSQL, so that the writers of a budget account wait for each
// other rather than abort each other with metrics on), and times it as an update.
func TestTimedStoreForwardsLocks(t *testing.T) {
	m := New(Options{})
	d := &fakeLockingDriver{Driver: memstore.NewDriver()}
	st := store.New(m.Store(d))
	ctx := context.Background()
	locks := []store.Ref{{Collection: store.Budgets, Key: "key/vk"}}
	if err := st.UpdateLocked(ctx, locks, func(tx store.Tx) error { return tx.Put(ctx, store.Budgets, "key/vk", []byte("{}")) }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d.locks, locks) {
		t.Errorf("driver's locks = %v, want %v", d.locks, locks)
	}
	if n := testutil.CollectAndCount(m.storeOps); n != 1 {
		t.Errorf("store operation series = %d, want 1 (the update)", n)
	}
}
