package trainer

import (
	"context"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// TestFailDeadLeavesALiveWorkersJob: a job read as dead whose worker beats again before
// it is failed keeps running; once truly stale it fails.
func TestFailDeadLeavesALiveWorkersJob(t *testing.T) {
	st := memstore.New()
	defer st.Close()
	s := newService(t, st, WithQueue(&txOnlyQueue{}))
	ctx := context.Background()
	now := time.Now().UTC()
	j := jobRecord{ID: "tj_slow", Owner: "alice", State: StateRunning, Attempts: 1, HeartbeatAt: now}
	if err := store.PutJSON(ctx, st, store.TrainingJobs, j.ID, j); err != nil {
		t.Fatal(err)
	}
	seen := j
	seen.HeartbeatAt = now.Add(-2 * time.Minute) // txOnlyQueue's StaleAfter is a minute
	if _, err := s.failDead(ctx, &seen, "cancelled", ErrorKindCancelled); err != nil {
		t.Fatal(err)
	}
	if cur, _ := store.GetJSON[jobRecord](ctx, st, store.TrainingJobs, j.ID); cur.State != StateRunning {
		t.Fatalf("a live worker's job was failed: %+v", cur)
	}
	j.HeartbeatAt = seen.HeartbeatAt
	if err := store.PutJSON(ctx, st, store.TrainingJobs, j.ID, j); err != nil {
		t.Fatal(err)
	}
	if _, err := s.failDead(ctx, &seen, "cancelled", ErrorKindCancelled); err != nil {
		t.Fatal(err)
	}
	if cur, _ := store.GetJSON[jobRecord](ctx, st, store.TrainingJobs, j.ID); cur.State != StateFailed || cur.ErrorKind != ErrorKindCancelled {
		t.Fatalf("a dead worker's job: %+v", cur)
	}
}
