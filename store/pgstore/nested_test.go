package pgstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/store"
)

// TestNestedUpdateIsRefused: an Update, UpdateLocked, Put or Delete called from inside
// another Update's function on the same goroutine (which store.Driver forbids) waited for
// ever — on the advisory lock of a record the outer run held (one it named, or at a run
// again one it touched) or on a row the outer transaction wrote — while the outer run
// waited for it to return. It now fails at once with an error matching store.ErrNested,
// the outer transaction goes on, and the goroutine's later Updates (after one whose
// function failed, too) run as before. The context's deadline only keeps a regression
// from hanging the test: it fails then with the deadline's error, not ErrNested.
func TestNestedUpdateIsRefused(t *testing.T) {
	sts := hotReplicas(t, 1, 1)
	st, replica := sts[0], sts[1]
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	hot := []store.Ref{{Collection: store.Budgets, Key: "hot"}}
	nested := map[string]func() error{
		"UpdateLocked of the record the outer names": func() error {
			return st.UpdateLocked(ctx, hot, func(tx store.Tx) error { return increment(ctx, tx, store.Budgets, "hot") })
		},
		"Update writing the row the outer wrote": func() error {
			return st.Update(ctx, func(tx store.Tx) error { return increment(ctx, tx, store.Budgets, "hot") })
		},
		"another process's store": func() error {
			return replica.UpdateLocked(ctx, hot, func(tx store.Tx) error { return increment(ctx, tx, store.Budgets, "hot") })
		},
		"Put":    func() error { return st.Put(ctx, store.Budgets, "hot", []byte("7")) },
		"Delete": func() error { return st.Delete(ctx, store.Budgets, "hot") },
	}
	want := 0
	for name, inner := range nested {
		var innerErr error
		err := st.UpdateLocked(ctx, hot, func(tx store.Tx) error {
			if err := increment(ctx, tx, store.Budgets, "hot"); err != nil {
				return err
			}
			innerErr = inner()
			return nil
		})
		if err != nil {
			t.Fatalf("%s: the outer UpdateLocked: %v", name, err)
		}
		want++
		if !errors.Is(innerErr, store.ErrNested) {
			t.Errorf("%s nested in an UpdateLocked's function: %v, want an error matching store.ErrNested", name, innerErr)
		}
	}
	// The marks end with the outer call, also when its function failed.
	boom := errors.New("boom")
	if err := st.Update(ctx, func(tx store.Tx) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("Update whose function failed: %v", err)
	}
	if err := st.UpdateLocked(ctx, hot, func(tx store.Tx) error { return increment(ctx, tx, store.Budgets, "hot") }); err != nil {
		t.Fatalf("UpdateLocked after the nested ones: %v", err)
	}
	if err := st.Put(ctx, store.Budgets, "other", []byte("1")); err != nil {
		t.Fatalf("Put after the nested ones: %v", err)
	}
	if got := readCount(t, st, store.Budgets, "hot"); got != want+1 {
		t.Errorf("hot = %d, want %d: the outer transactions' increments only", got, want+1)
	}
}
