package batch_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/batch"
)

// TestReview16bCancelOverdueRunningAnswersConflict: a batch past its completion window
// whose run is live in this process cannot be cancelled (it ends expired): Cancel must
// answer a *ConflictError as documented, not 200 "cancelling" for a batch that then ends
// expired.
func TestReview16bCancelOverdueRunningAnswersConflict(t *testing.T) {
	clock := newFakeClock()
	exec := newScripted()
	h := newHarness(t, nil, exec, batch.Options{Concurrency: 1, Clock: clock.Now, ExpireInterval: -1})
	b := h.create(t, "alice", h.upload(t, "alice", jsonl("wait", "ok")).ID)
	<-exec.started // r0 in flight: the run is live here
	clock.Add(25 * time.Hour)
	got, err := h.svc.Cancel(context.Background(), "alice", b.ID)
	close(exec.release)
	var ce *batch.ConflictError
	if !errors.As(err, &ce) {
		t.Errorf("cancel of a running batch past its window: %v, status %s; want a ConflictError", err, got.Status)
	}
	end := h.wait(t, "alice", b.ID, func(b batch.Batch) bool {
		return b.Status == batch.StatusExpired || b.Status == batch.StatusCancelled || b.Status == batch.StatusCompleted || b.Status == batch.StatusFailed
	})
	if end.Status != batch.StatusExpired {
		t.Fatalf("ended %s, want expired", end.Status)
	}
}
