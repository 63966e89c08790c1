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
	if _, err := e.svc.Cancel(ctx, "alice", sub.JobID); err != nil {
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
