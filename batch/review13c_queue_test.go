package batch_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/batch"
)

// TestReview13cOneKeyStarvesTheOthers: nothing bounds how many unfinished batches one key
// may have (the optimizer has --optimize-jobs-per-key; batches have none), and the queue is
// one FIFO worked by --workers (default 1) batches per process. One key queues 1,000
// batches of one file; another key's batch, created just after, waits behind all of them
// and expires with none of its lines sent.
func TestReview13cOneKeyStarvesTheOthers(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	exec := newScripted()
	exec.onAnswer = func(string) { // each line takes 90 s of (fake) time
		mu.Lock()
		now = now.Add(90 * time.Second)
		mu.Unlock()
	}
	h := newHarness(t, nil, exec, batch.Options{Concurrency: 1, Workers: 1, Clock: clock, SweepInterval: -1})
	f := h.upload(t, "mallory", jsonl("wait"))
	go func() {
		for range exec.started {
		}
	}()
	ctx := context.Background()
	for i := range 1000 {
		if _, err := h.svc.Create(ctx, "mallory", "cred-m", batch.CreateRequest{InputFileID: f.ID, Endpoint: "/v1/chat/completions", CompletionWindow: "24h"}); err != nil {
			t.Logf("batch %d refused: %v", i, err)
			break
		}
	}
	b := h.create(t, "alice", h.upload(t, "alice", jsonl("ok")).ID)
	close(exec.release) // mallory's first line was answering all along
	deadline := time.Now().Add(60 * time.Second)
	for {
		got, err := h.svc.Get(ctx, "alice", b.ID)
		if err != nil {
			t.Fatal(err)
		}
		if ended(got) {
			if got.Status != batch.StatusCompleted {
				t.Fatalf("alice's batch ended %s with %+v: it waited behind mallory's queued batches for its whole window", got.Status, got.RequestCounts)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("alice's batch still %s", got.Status)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
