package optimizer

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/fetch"
	"github.com/switchyard-ai/switchyard/sandbox"
)

// TestCancelSurvivesRestart: a running job is cancelled (the call answers 200) and the
// server dies before the run has stopped. The next Start used to find the record still
// "running" and start the job over, running (and billing) the job its owner had cancelled;
// it now ends it interrupted with the cancel's message and runs nothing.
func TestCancelSurvivesRestart(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	stuck := &fakeRunner{block: func(sandbox.Job) bool {
		once.Do(func() { close(entered) })
		<-release // the run does not stop before the "crash"
		return true
	}}
	e := newEnv(t, stuck, nil)
	e.start(t)
	defer close(release)
	ctx := context.Background()
	sub, err := e.svc.Submit(ctx, "alice", request(e.url, 3))
	if err != nil {
		t.Fatal(err)
	}
	<-entered
	// The run does not stop, so Cancel's wait for it ends with this context.
	cctx, stopWaiting := context.WithTimeout(ctx, 50*time.Millisecond)
	defer stopWaiting()
	if _, err := e.svc.Cancel(cctx, "alice", sub.JobID); err != nil {
		t.Fatal(err)
	}

	// The process dies here; a new one starts on the same store.
	after := &fakeRunner{}
	svc2, err := New(e.st, after, e.proposer,
		WithFetcher(&fetch.Fetcher{AllowLocal: true}), WithGateway(e.up.URL+"/v1", StaticKey("job-key")),
		WithPublicURL("https://sy.example"), WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	if err := svc2.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = svc2.Close(cctx)
	})
	st := waitFor(t, svc2, sub.JobID)
	if st.Status != StatusInterrupted || !strings.Contains(st.ErrorMessage, "cancelled by the caller") {
		t.Fatalf("after the restart the cancelled job is %s (%q); want interrupted, cancelled by the caller", st.Status, st.ErrorMessage)
	}
	after.mu.Lock()
	runs := len(after.runs)
	after.mu.Unlock()
	if runs != 0 {
		t.Errorf("the restarted server ran the cancelled job again (%d sandbox runs)", runs)
	}
}

// TestCancelAnswersTheEnd: cancelling a running job answered its status of the moment,
// "running", so a caller (and `switchyard optimize --job ID --cancel`, which printed "job
// ID running") could not tell the cancel had worked, and results still answered 409. Cancel
// now waits for the run to stop and answers "interrupted" with the cancel's message, the
// best result so far readable at once.
func TestCancelAnswersTheEnd(t *testing.T) {
	runner := &fakeRunner{block: func(j sandbox.Job) bool {
		return strings.Contains(string(j.Files["agent.py"]), "Be careful")
	}}
	e := newEnv(t, runner, nil)
	e.start(t)
	ctx := context.Background()
	sub, err := e.svc.Submit(ctx, "alice", request(e.url, 5))
	if err != nil {
		t.Fatal(err)
	}
	waitIteration(t, e.svc, sub.JobID, 0)
	st, err := e.svc.Cancel(ctx, "alice", sub.JobID)
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != StatusInterrupted || !strings.Contains(st.ErrorMessage, "cancelled by the caller") || st.FinishedAt == nil {
		t.Fatalf("Cancel answered %s (%q); want interrupted, cancelled by the caller", st.Status, st.ErrorMessage)
	}
	res, err := e.svc.Results(ctx, "alice", sub.JobID)
	if err != nil {
		t.Fatalf("results right after the cancel: %v", err)
	}
	if len(res.Results) != 1 || res.Results[0].Complete || res.Results[0].AgentCodeURL == "" {
		t.Errorf("results after the cancel: %+v", res.Results)
	}
}
