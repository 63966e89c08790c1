package usagelog

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// listCountingDriver counts the daily spend rows the driver's List calls return.
type listCountingDriver struct {
	store.Driver
	read atomic.Int64
}

func (d *listCountingDriver) List(ctx context.Context, c store.Collection, opts store.ListOptions) ([]store.Entry, error) {
	page, err := d.Driver.List(ctx, c, opts)
	if c == store.SpendRollups {
		d.read.Add(int64(len(page)))
	}
	return page, err
}

// TestRollupSweepReadsOnlyWhatMayHaveExpired: with 60 days of rows for owners whose
// names are prefixes of one another, a sweep keeping 30 deletes exactly the older rows of
// every owner and reads at most twice those plus one row an owner; the next sweep, with
// nothing to delete, reads one row an owner — not every row kept.
func TestRollupSweepReadsOnlyWhatMayHaveExpired(t *testing.T) {
	ctx := context.Background()
	d := &listCountingDriver{Driver: memstore.NewDriver()}
	st := store.New(d)
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	r := NewRollup(st, RollupOptions{Now: func() time.Time { return now }, FlushEvery: time.Hour, Retention: 30 * 24 * time.Hour})
	defer r.Close(ctx)
	owners := []string{"acme", "acme-eu", "acme/x", "acme0", "acmeeu", "b", "key1", "key10"}
	first, _ := r.firstKeptDay(now)
	wantKept := map[string]bool{}
	expired := 0
	err := st.Update(ctx, func(tx store.Tx) error {
		for _, owner := range owners {
			for day := range 60 {
				date := now.AddDate(0, 0, -day).Format(time.DateOnly)
				for _, model := range []string{"a/one", "b/two", "c/three"} {
					key := rollupKey(owner, date, "m", model)
					if date < first {
						expired++
					} else {
						wantKept[key] = true
					}
					if err := tx.Put(ctx, store.SpendRollups, key, []byte(`{"requests":1}`)); err != nil {
						return err
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	d.read.Store(0)
	n, err := r.Sweep(ctx, now)
	if err != nil || n != expired {
		t.Fatalf("sweep: %d deleted (%v), want %d", n, err, expired)
	}
	if got, most := d.read.Load(), int64(2*expired+len(owners)); got > most {
		t.Errorf("the sweep read %d rows for %d expired of %d, want at most %d", got, expired, expired+len(wantKept), most)
	}
	left, err := st.List(ctx, store.SpendRollups, store.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range left {
		if !wantKept[e.Key] {
			t.Errorf("kept %s, from before %s", e.Key, first)
		}
	}
	if len(left) != len(wantKept) {
		t.Errorf("%d rows left, want %d", len(left), len(wantKept))
	}

	d.read.Store(0)
	if n, err := r.Sweep(ctx, now); err != nil || n != 0 {
		t.Fatalf("second sweep: %d deleted (%v)", n, err)
	}
	if got := d.read.Load(); got != int64(len(owners)) {
		t.Errorf("a sweep with nothing expired read %d rows, want %d (one an owner; %d are kept)", got, len(owners), len(wantKept))
	}
}
