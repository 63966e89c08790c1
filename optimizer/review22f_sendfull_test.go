package optimizer

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/sandbox"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// holdPutOf holds the first committed Update that stores a job of owner until release is
// closed; entered is closed when it is held.
func holdPutOf(d *hookDriver, owner string) (entered, release chan struct{}) {
	entered, release = make(chan struct{}), make(chan struct{})
	var once sync.Once
	d.mu.Lock()
	d.afterPut = func(c store.Collection, value []byte) {
		if c == store.OptimizationJobs && bytes.Contains(value, []byte(`"owner":"`+owner+`"`)) {
			once.Do(func() { close(entered); <-release })
		}
	}
	d.mu.Unlock()
	return entered, release
}

// waitRunningOf polls until owner's job runs (the deadline only guards a hang).
func waitRunningOf(t *testing.T, svc *Service, owner, id string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		st, _ := svc.Status(context.Background(), owner, id)
		if st != nil && st.Status == StatusRunning {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s never started", id)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// A Submit that finds the queue filled by another Submit while it stored its job drops
// the dead ids (jobs cancelled or deleted while queued) before refusing: it dropped them
// only when the queue was full before storing, so two submissions racing for the last free
// slot refused one with ErrQueueFull while a cancelled job's id held a slot.
func TestReview22fSubmitDropsDeadIDsBeforeRefusingAtSend(t *testing.T) {
	d := &hookDriver{Driver: memstore.NewDriver()}
	runner := &fakeRunner{block: func(sandbox.Job) bool { return true }}
	e := newHookedEnv(t, d, runner, WithQueueSize(3), WithJobsPerOwner(1))
	e.start(t)
	ctx := context.Background()
	busy, err := e.svc.Submit(ctx, "carol", request(e.url, 1)) // holds the only worker
	if err != nil {
		t.Fatal(err)
	}
	waitRunningOf(t, e.svc, "carol", busy.JobID)
	if _, err := e.svc.Submit(ctx, "alice", request(e.url, 1)); err != nil {
		t.Fatal(err)
	}
	dead, err := e.svc.Submit(ctx, "bob", request(e.url, 1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Cancel(ctx, "bob", dead.JobID); err != nil {
		t.Fatal(err)
	}
	// The queue holds alice's live job and bob's dead one: one free slot, two takers.
	entered, release := holdPutOf(d, "dave")
	daveErr := make(chan error, 1)
	go func() {
		_, err := e.svc.Submit(ctx, "dave", request(e.url, 1))
		daveErr <- err
	}()
	<-entered // dave's job is stored, not yet sent
	if _, err := e.svc.Submit(ctx, "erin", request(e.url, 1)); err != nil {
		t.Fatal(err)
	}
	close(release)
	if err := <-daveErr; err != nil {
		t.Fatalf("submission refused while a cancelled job held a queue slot: %v", err)
	}
	if _, err := e.svc.Cancel(ctx, "carol", busy.JobID); err != nil {
		t.Fatal(err)
	}
}
