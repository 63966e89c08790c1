package jobqueue_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/jobqueue"
)

// TestLocalQueue: jobs run once each on the kind's workers; an id enqueued while it waits
// or runs is not queued twice; RetryLater and a failure run a job again; Cancel ends a
// running job's context with ErrCancelled and drops a waiting one; Stop ends running
// handlers with ErrShutdown.
func TestLocalQueue(t *testing.T) {
	q := jobqueue.NewLocal(10 * time.Millisecond)
	var mu sync.Mutex
	runs := map[string]int{}
	release := make(chan struct{})
	started := make(chan string, 16)
	causes := make(chan error, 4)
	err := q.Register("k", jobqueue.Kind{Workers: 2, Run: func(ctx context.Context, id string) error {
		mu.Lock()
		runs[id]++
		n := runs[id]
		mu.Unlock()
		started <- id
		switch id {
		case "later":
			if n == 1 {
				return jobqueue.RetryLater(time.Millisecond)
			}
		case "fail":
			if n == 1 {
				return errors.New("transient")
			}
		case "block", "stuck":
			select {
			case <-release:
			case <-ctx.Done():
				causes <- context.Cause(ctx)
				return ctx.Err()
			}
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if q.StaleAfter() != 0 {
		t.Fatalf("StaleAfter = %s", q.StaleAfter())
	}
	for _, id := range []string{"a", "a", "later", "fail"} {
		if err := q.Enqueue(ctx, "k", id); err != nil {
			t.Fatal(err)
		}
	}
	if err := q.Enqueue(ctx, "nokind", "x"); err == nil {
		t.Fatal("a kind never registered was accepted")
	}
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"a": 1, "later": 2, "fail": 2}
	for range 5 {
		select {
		case <-started:
		case <-time.After(10 * time.Second):
			t.Fatalf("runs so far: %v", runs)
		}
	}
	mu.Lock()
	for id, n := range want {
		if runs[id] != n {
			t.Errorf("%s ran %d times, want %d", id, runs[id], n)
		}
	}
	mu.Unlock()

	// Cancel reaches a running job; a waiting one is dropped.
	q.Enqueue(ctx, "k", "block")
	q.Enqueue(ctx, "k", "stuck")
	<-started
	<-started
	q.Enqueue(ctx, "k", "block") // running: not queued again
	q.Cancel(ctx, "k", "block")
	if c := <-causes; !errors.Is(c, jobqueue.ErrCancelled) {
		t.Fatalf("cancelled job's cause = %v", c)
	}
	// Stop ends the other with ErrShutdown.
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := q.Stop(sctx); err != nil {
		t.Fatal(err)
	}
	if c := <-causes; !errors.Is(c, jobqueue.ErrShutdown) {
		t.Fatalf("running job's cause at Stop = %v", c)
	}
	mu.Lock()
	defer mu.Unlock()
	if runs["block"] != 1 {
		t.Fatalf("block ran %d times", runs["block"])
	}
	if err := q.Enqueue(ctx, "k", "after-stop"); !errors.Is(err, jobqueue.ErrShutdown) {
		t.Fatalf("enqueue after Stop: %v", err)
	}
}
