package optimizer

import (
	"context"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/jobqueue"
	"github.com/switchyard-ai/switchyard/store"
)

// minuteQueue is a shared queue that only answers StaleAfter (a minute); failDead needs no
// more of it.
type minuteQueue struct{}

func (minuteQueue) Register(string, jobqueue.Kind) error          { return nil }
func (minuteQueue) Enqueue(context.Context, string, string) error { return nil }
func (minuteQueue) Cancel(context.Context, string, string) error  { return nil }
func (minuteQueue) StaleAfter() time.Duration                     { return time.Minute }

// TestFailDeadLeavesALiveWorkersJob: a job read as dead (stale heartbeat) whose worker
// beats again before it is ended — slow, not dead — keeps running and keeps its keys; once
// truly stale it ends, and only then are its keys reclaimed and their spend recorded.
func TestFailDeadLeavesALiveWorkersJob(t *testing.T) {
	m := &reclaimingMinter{spent: map[string]Usage{"live-1": {Tokens: 300, CostUSD: 0.3}}}
	e := newEnv(t, &fakeRunner{}, m, WithQueue(minuteQueue{}))
	ctx := context.Background()
	now := time.Now().UTC()
	j := job{ID: "opt_slow", Owner: "alice", Version: "v1", Optimizer: "agentopt", InputURL: e.url,
		TargetModels: []string{"scripted/task"}, NIterations: 1, Status: StatusRunning, Attempts: 1, CreatedAt: now, StartedAt: &now,
		HeartbeatAt: now, Results: []storedRes{{ModelResult: ModelResult{Model: "scripted/task"}}},
		OpenKeys: []openKey{{Ref: "live-1", Model: "scripted/task"}}}
	if err := store.PutJSON(ctx, e.st, store.OptimizationJobs, j.ID, j); err != nil {
		t.Fatal(err)
	}
	seen := j
	seen.HeartbeatAt = now.Add(-2 * time.Minute) // what a replica read a moment ago
	if _, err := e.svc.failDead(ctx, &seen, StatusInterrupted, "cancelled"); err != nil {
		t.Fatal(err)
	}
	cur, _ := store.GetJSON[job](ctx, e.st, store.OptimizationJobs, j.ID)
	if cur.Status != StatusRunning || len(cur.OpenKeys) != 1 || len(m.reclaimed) != 0 {
		t.Fatalf("a live worker's job was ended: status %s, open keys %v, reclaimed %v", cur.Status, cur.OpenKeys, m.reclaimed)
	}

	j.HeartbeatAt = now.Add(-2 * time.Minute)
	if err := store.PutJSON(ctx, e.st, store.OptimizationJobs, j.ID, j); err != nil {
		t.Fatal(err)
	}
	seen = j
	if _, err := e.svc.failDead(ctx, &seen, StatusInterrupted, "cancelled"); err != nil {
		t.Fatal(err)
	}
	cur, _ = store.GetJSON[job](ctx, e.st, store.OptimizationJobs, j.ID)
	if cur.Status != StatusInterrupted || len(cur.OpenKeys) != 0 || len(m.reclaimed) != 1 || cur.Results[0].Usage.Task.Tokens != 300 {
		t.Fatalf("a dead worker's job: status %s, open keys %v, reclaimed %v, result %+v", cur.Status, cur.OpenKeys, m.reclaimed, cur.Results[0])
	}
}

// TestKeysLeftOpenOnEndedJobsAreReclaimedAtStart: a crash between ending a dead worker's
// job and reclaiming its keys leaves them open on an ended job; a process that starts on
// the shared queue reclaims them and records their spend in the job's results.
func TestKeysLeftOpenOnEndedJobsAreReclaimedAtStart(t *testing.T) {
	m := &reclaimingMinter{spent: map[string]Usage{"left-1": {Tokens: 250, CostUSD: 0.25}}}
	e := newEnv(t, &fakeRunner{}, m, WithQueue(minuteQueue{}))
	ctx := context.Background()
	now := time.Now().UTC()
	j := job{ID: "opt_crashed", Owner: "alice", Version: "v1", Optimizer: "agentopt", InputURL: e.url,
		TargetModels: []string{"scripted/task"}, NIterations: 1, Status: StatusInterrupted, Attempts: 1, CreatedAt: now, StartedAt: &now, FinishedAt: &now,
		Results:  []storedRes{{ModelResult: ModelResult{Model: "scripted/task"}}},
		OpenKeys: []openKey{{Ref: "left-1", Model: "scripted/task"}}}
	if err := store.PutJSON(ctx, e.st, store.OptimizationJobs, j.ID, j); err != nil {
		t.Fatal(err)
	}
	e.start(t)
	deadline := time.Now().Add(5 * time.Second)
	for {
		cur, _ := store.GetJSON[job](ctx, e.st, store.OptimizationJobs, j.ID)
		if len(cur.OpenKeys) == 0 {
			if cur.Results[0].Usage.Task.Tokens != 250 || cur.Status != StatusInterrupted {
				t.Fatalf("reclaimed job %+v", cur)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("keys still open: %+v", cur.OpenKeys)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
