//go:build linux

package process_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/sandbox"
	"github.com/switchyard-ai/switchyard/sandbox/process"
	"github.com/switchyard-ai/switchyard/sandbox/sandboxtest"
)

// TestReview11RunHonoursCancelWhileAnotherVenvBuilds: one run is installing its
// DEPENDENCIES from a slow package index (up to venvBuildTimeout, 10 minutes); another run
// (another job, other dependencies) whose context ends meanwhile does not return: it waits
// on the runner-wide venvMu without looking at its context, so a cancelled or timed-out
// optimization job cannot stop (DeleteJob answers 409 after 30 s, Close waits) until the
// unrelated build ends.
func TestReview11RunHonoursCancelWhileAnotherVenvBuilds(t *testing.T) {
	asked := make(chan struct{})
	unblock := make(chan struct{})
	var once sync.Once
	idx := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { close(asked) })
		select { // a slow index
		case <-unblock:
		case <-r.Context().Done():
		}
		http.NotFound(w, r)
	}))
	defer idx.Close()
	defer close(unblock)
	r := newRunner(t, process.Options{WorkDir: workDir(t), CacheDir: workDir(t), PackageIndex: idx.URL + "/simple"})

	ctxA, cancelA := context.WithCancel(context.Background())
	defer cancelA()
	doneA := make(chan struct{})
	go func() {
		defer close(doneA)
		job := sandbox.Job{Files: sandboxtest.Bundle("DEPENDENCIES = ['swyslow==1.0']\n"+sandboxtest.EmptyAgent, sandboxtest.ExactEval),
			Rows: sandboxtest.Rows(1)}
		r.Run(ctxA, job)
	}()
	select {
	case <-asked: // run A holds the venv lock and pip is waiting on the index
	case <-time.After(60 * time.Second):
		t.Fatal("run A never asked the index")
	}

	ctxB, cancelB := context.WithTimeout(context.Background(), time.Second)
	defer cancelB()
	doneB := make(chan error, 1)
	start := time.Now()
	go func() {
		job := sandbox.Job{Files: sandboxtest.Bundle("DEPENDENCIES = ['swyother==1.0']\n"+sandboxtest.EmptyAgent, sandboxtest.ExactEval),
			Rows: sandboxtest.Rows(1)}
		_, err := r.Run(ctxB, job)
		doneB <- err
	}()
	select {
	case err := <-doneB:
		t.Logf("run B returned after %s: %v", time.Since(start).Round(time.Millisecond), err)
	case <-time.After(10 * time.Second):
		cancelA() // let it go
		<-doneA
		err := <-doneB
		t.Fatalf("run B's context ended after 1s but Run returned only after run A's build was cancelled, %s later (err %v)",
			time.Since(start).Round(time.Second), err)
	}
}
