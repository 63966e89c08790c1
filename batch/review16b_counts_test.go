package batch_test

import (
	"context"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/batch"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// TestReview16bCountsWhileExpiring: while an expiry finalizes a batch whose stopped run
// answered some lines, a read shows the answered lines' counts (the record's), not the
// expiry's run's zeros (overlay puts the counts of a run of this process on the record).
func TestReview16bCountsWhileExpiring(t *testing.T) {
	d := &gatedResults{Driver: memstore.NewDriver(), gate: make(chan struct{})}
	st := store.New(d)
	defer st.Close()
	clock := newFakeClock()
	first := newScripted()
	first.limit = 3
	h := newHarness(t, st, first, batch.Options{Concurrency: 1, Clock: clock.Now, ExpireInterval: -1})
	b := h.create(t, "alice", h.upload(t, "alice", jsonl(okModels(6)...)).ID)
	<-first.blocked // r3 in flight when the service stops: r0-r2 answered
	if err := h.svc.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	clock.Add(25 * time.Hour)
	h2, _ := parked(t, st, newScripted(), batch.Options{Concurrency: 1, Clock: clock.Now})
	d.gated.Store(true)
	defer close(d.gate)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	got, err := h2.svc.Get(ctx, "alice", b.ID) // the expiry is stuck in its finalization
	if err != nil {
		t.Fatal(err)
	}
	if got.RequestCounts.Completed != 3 {
		t.Fatalf("read while the expiry finalizes: %s %+v, want 3 completed", got.Status, got.RequestCounts)
	}
}
