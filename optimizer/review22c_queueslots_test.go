package optimizer

import (
	"context"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/sandbox"
)

// Jobs cancelled (or deleted) while queued give their queue slots back: one key cycling
// submit and cancel while the only worker is busy filled the bounded queue with dead ids,
// and every key's submission was refused with ErrQueueFull until the worker drained them
// (for as long as the running job took, up to two hours).
func TestReview22cCancelledQueuedJobsFreeTheQueue(t *testing.T) {
	runner := &fakeRunner{block: func(sandbox.Job) bool { return true }}
	e := newEnv(t, runner, nil, WithQueueSize(2), WithJobsPerOwner(1))
	e.start(t)
	ctx := context.Background()
	first, err := e.svc.Submit(ctx, "alice", request(e.url, 1))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second) // guards a hang only
	for {
		st, _ := e.svc.Status(ctx, "alice", first.JobID)
		if st != nil && st.Status == StatusRunning {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first job never started")
		}
		time.Sleep(2 * time.Millisecond)
	}
	if _, err := e.svc.Cancel(ctx, "alice", first.JobID); err != nil {
		t.Fatal(err)
	}
	waitFor(t, e.svc, first.JobID)
	// A job that never ends holds the worker.
	busy, err := e.svc.Submit(ctx, "carol", request(e.url, 1))
	if err != nil {
		t.Fatal(err)
	}
	for {
		st, _ := e.svc.Status(ctx, "carol", busy.JobID)
		if st != nil && st.Status == StatusRunning {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the busy job never started")
		}
		time.Sleep(2 * time.Millisecond)
	}
	for i := range 5 {
		sub, err := e.svc.Submit(ctx, "alice", request(e.url, 1))
		if err != nil {
			t.Fatalf("submission %d after %d cancelled queued jobs: %v", i+1, i, err)
		}
		if i%2 == 0 {
			if _, err := e.svc.Cancel(ctx, "alice", sub.JobID); err != nil {
				t.Fatal(err)
			}
		} else if _, err := e.svc.DeleteJob(ctx, "alice", sub.JobID); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.svc.Submit(ctx, "bob", request(e.url, 1)); err != nil {
		t.Fatalf("another key after cancelled queued jobs: %v", err)
	}
	if _, err := e.svc.Cancel(ctx, "carol", busy.JobID); err != nil {
		t.Fatal(err)
	}
}
