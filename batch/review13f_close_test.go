package batch_test

import (
	"context"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/batch"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// TestReview13fSignalCutsLinesBeforeDrain: serve starts the batch service with its
// signal context (wiring.start(ctx)) and calls Close only after that context ends. The
// service's own Local queue stops on that context (Local.Start's AfterFunc), which ends
// the handlers' contexts and (handle's stopWatch) cuts the lines in flight at once — so
// Close's drain never lets them finish.
func TestReview13fSignalCutsLinesBeforeDrain(t *testing.T) {
	st := memstore.New()
	defer st.Close()
	files, err := batch.NewFiles(st, batch.FilesOptions{Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	exec := newScripted()
	svc, err := batch.New(st, files, batch.Options{Concurrency: 2, Executor: exec, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	sig, signal := context.WithCancel(context.Background())
	if err := svc.Start(sig); err != nil {
		t.Fatal(err)
	}
	h := &harness{st: st, files: files, svc: svc, exec: exec}
	f := h.upload(t, "alice", jsonl("wait", "wait", "ok", "ok"))
	h.create(t, "alice", f.ID)
	<-exec.started
	<-exec.started
	signal() // SIGTERM: serve's ctx ends; Close comes later (after the HTTP shutdown)
	time.Sleep(50 * time.Millisecond)
	go func() { time.Sleep(200 * time.Millisecond); close(exec.release) }()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := svc.Close(ctx); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"r0", "r1"} {
		if exec.answers(id) != 1 {
			t.Errorf("%s, in flight at the signal, was cut (answered %d times) instead of finishing within Close's drain", id, exec.answers(id))
		}
	}
}
