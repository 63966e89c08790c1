package optimizer

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/store/memstore"
)

// After Start's context ends (SIGTERM while the server drains its HTTP requests) no worker
// runs a new job, so Submit refuses with ErrClosed (503), as the trainer's does; it answered
// 202 and kept the job queued until a restart.
func TestReview22fSubmitAfterStartContextEndsIsRefused(t *testing.T) {
	e := newEnv(t, &fakeRunner{}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	if err := e.svc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cctx, ccancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer ccancel()
		if err := e.svc.Close(cctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	cancel()
	sub, err := e.svc.Submit(context.Background(), "alice", request(e.url, 1))
	if !errors.Is(err, ErrClosed) {
		t.Fatalf("Submit after Start's context ended: %+v, %v; want ErrClosed", sub, err)
	}
	list, err := e.svc.ListJobs(context.Background(), "alice", ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Data) != 0 {
		t.Errorf("a refused submission left jobs: %+v", list.Data)
	}
}

// A Submit that stored its job while Close ran refuses it (and drops it) rather than
// sending it to a queue no worker reads and answering 202.
func TestReview22fSubmitRacingCloseIsRefused(t *testing.T) {
	d := &hookDriver{Driver: memstore.NewDriver()}
	e := newHookedEnv(t, d, &fakeRunner{})
	if err := e.svc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	entered, release := holdPutOf(d, "alice")
	subErr := make(chan error, 1)
	go func() {
		_, err := e.svc.Submit(context.Background(), "alice", request(e.url, 1))
		subErr <- err
	}()
	<-entered
	cctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := e.svc.Close(cctx); err != nil {
		t.Fatal(err)
	}
	close(release)
	if err := <-subErr; !errors.Is(err, ErrClosed) {
		t.Fatalf("Submit racing Close: %v; want ErrClosed", err)
	}
	list, err := e.svc.ListJobs(context.Background(), "alice", ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Data) != 0 {
		t.Errorf("a refused submission left jobs: %+v", list.Data)
	}
}
