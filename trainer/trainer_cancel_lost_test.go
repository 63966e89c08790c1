package trainer

import (
	"context"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// TestReview10CancelOfSlowWorkersJobIsNotLost: see the optimizer test of the same name.
func TestReview10CancelOfSlowWorkersJobIsNotLost(t *testing.T) {
	st := memstore.New()
	defer st.Close()
	s := newService(t, st, WithQueue(&txOnlyQueue{}))
	ctx := context.Background()
	now := time.Now().UTC()
	j := jobRecord{ID: "tj_cancel", Owner: "alice", State: StateRunning, Attempts: 1, HeartbeatAt: now}
	if err := store.PutJSON(ctx, st, store.TrainingJobs, j.ID, j); err != nil {
		t.Fatal(err)
	}
	seen := j
	seen.HeartbeatAt = now.Add(-2 * time.Minute)
	if err := s.cancelElsewhere(ctx, &seen); err != nil {
		t.Fatal(err)
	}
	cur, _ := store.GetJSON[jobRecord](ctx, st, store.TrainingJobs, j.ID)
	if cur.State == StateRunning && !cur.CancelRequested {
		t.Fatalf("cancel lost: job still running without a cancel mark: %+v", cur)
	}
}
