package optimizer

import (
	"context"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/store"
)

// TestReview10CancelOfSlowWorkersJobIsNotLost: Cancel read the running job with a stale
// heartbeat (worker in another process, slow), so cancelElsewhere takes the failDead
// branch; by the time failDead's transaction runs, the worker has beaten again, so
// failDead now leaves the job alone and returns nil. The cancel must not be dropped: the
// job should be ended or at least carry CancelRequested for the live worker to read.
func TestReview10CancelOfSlowWorkersJobIsNotLost(t *testing.T) {
	e := newEnv(t, &fakeRunner{}, nil, WithQueue(minuteQueue{}))
	ctx := context.Background()
	now := time.Now().UTC()
	j := job{ID: "opt_cancel", Owner: "alice", Version: "v1", Optimizer: "agentopt", InputURL: e.url,
		TargetModels: []string{"scripted/task"}, NIterations: 1, Status: StatusRunning, Attempts: 1, CreatedAt: now, StartedAt: &now,
		HeartbeatAt: now}
	if err := store.PutJSON(ctx, e.st, store.OptimizationJobs, j.ID, j); err != nil {
		t.Fatal(err)
	}
	seen := j
	seen.HeartbeatAt = now.Add(-2 * time.Minute) // what Cancel read a moment before the worker beat
	if err := e.svc.cancelElsewhere(ctx, &seen); err != nil {
		t.Fatal(err)
	}
	cur, _ := store.GetJSON[job](ctx, e.st, store.OptimizationJobs, j.ID)
	if cur.Status == StatusRunning && !cur.CancelRequested {
		t.Fatalf("cancel lost: job still running without a cancel mark (status %s, cancel_requested %v); Cancel returned success", cur.Status, cur.CancelRequested)
	}
}
