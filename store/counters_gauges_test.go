package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// TestCountersGaugesExpireWithTheirProcess: a process's holds (Hold) are seen by the
// others after their Syncs, whole and as they change (not as deltas), never by the
// process itself; once a process stops publishing, its holds stop counting when its lease
// has passed (a replica that died with requests in flight frees them), and a process
// whose own Syncs stopped sees none of the others' (each then bounds only its own).
func TestCountersGaugesExpireWithTheirProcess(t *testing.T) {
	st := memstore.New()
	ctx := context.Background()
	now := time.Now()
	a, b := store.NewCounters(st, "limits"), store.NewCounters(st, "limits")
	sync := func(at time.Time, cs ...*store.Counters) {
		t.Helper()
		for _, c := range cs {
			if err := c.Sync(ctx, at); err != nil {
				t.Fatal(err)
			}
		}
	}
	a.Hold("par/k", 2)
	b.Hold("par/k", 1)
	b.Hold("par/other", 1)
	sync(now, a, b, a) // a's second Sync reads b's first record
	if got := b.Others("par/k", now); got != 2 {
		t.Errorf("b sees a's holds of par/k: %d, want 2", got)
	}
	if got := a.Others("par/k", now); got != 1 {
		t.Errorf("a sees b's holds of par/k: %d, want 1 (not its own 2)", got)
	}
	a.Hold("par/k", -1)
	b.Hold("par/other", -1)
	now = now.Add(time.Second)
	sync(now, a, b, a)
	if got, other := b.Others("par/k", now), a.Others("par/other", now); got != 1 || other != 0 {
		t.Errorf("after a gave one back and b its other: b sees %d of par/k (want 1), a sees %d of par/other (want 0)", got, other)
	}
	// a stops publishing (dies); b syncs on past a's lease (15 s without Run).
	now = now.Add(10 * time.Second)
	sync(now, b)
	if got := b.Others("par/k", now); got != 1 {
		t.Errorf("10 s after a's last record, within its lease: b sees %d, want 1", got)
	}
	now = now.Add(10 * time.Second)
	sync(now, b)
	if got := b.Others("par/k", now); got != 0 {
		t.Errorf("20 s after a's last record, past its lease: b sees %d, want 0 (a's holds expired with it)", got)
	}
	// a's own view: not synced for 20 s, past twice its lease later: it sees none of b's.
	if got := a.Others("par/k", now.Add(20*time.Second)); got != 0 {
		t.Errorf("a, not synced for 40 s: sees %d of b's holds, want 0", got)
	}
	var nilC *store.Counters
	nilC.Hold("par/k", 1)
	if nilC.Others("par/k", now) != 0 {
		t.Error("a nil Counters has holds")
	}
}
