package batch_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/switchyard-ai/switchyard/batch"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// failFirstResultPut is a memstore driver whose first Put of a batch's line result fails
// (a store hiccup: a deadline, a lost connection).
type failFirstResultPut struct {
	*memstore.Driver
	failed atomic.Bool
}

func (d *failFirstResultPut) Put(ctx context.Context, c store.Collection, key string, v []byte) error {
	if c == store.BatchResults && d.failed.CompareAndSwap(false, true) {
		return errors.New("store unavailable")
	}
	return d.Driver.Put(ctx, c, key, v)
}

// TestReview13cLineLostWhenItsResultIsNotStored: runLine logs "it will be sent again" when
// it cannot store an answered line, but the run goes on and ends completed, and finalize
// (unrun == nil for a completed batch) writes only the stored results: the line is in
// neither file, and request_counts do not add up to total.
func TestReview13cLineLostWhenItsResultIsNotStored(t *testing.T) {
	st := store.New(&failFirstResultPut{Driver: memstore.NewDriver()})
	exec := newScripted()
	h := newHarness(t, st, exec, batch.Options{Concurrency: 1})
	f := h.upload(t, "alice", jsonl("ok", "ok", "ok"))
	b := h.create(t, "alice", f.ID)
	b = h.wait(t, "alice", b.ID, ended)
	c := b.RequestCounts
	out := len(h.lines(t, "alice", b.OutputFileID)) + len(h.lines(t, "alice", b.ErrorFileID))
	if c.Completed+c.Failed != c.Total || out != c.Total {
		t.Fatalf("status %s counts %+v, %d lines in the output and error files: a line vanished (answers r0=%d)",
			b.Status, c, out, exec.answers("r0"))
	}
}
