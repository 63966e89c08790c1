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
	svc2, id := cancelThenCrash(t, func(sandbox.Job) bool { return true })
	st := waitFor(t, svc2, id)
	if st.Status != StatusInterrupted || !strings.Contains(st.ErrorMessage, "cancelled by the caller") {
		t.Fatalf("after the restart the cancelled job is %s (%q); want interrupted, cancelled by the caller", st.Status, st.ErrorMessage)
	}
	r := svc2.runner.(*fakeRunner)
	r.mu.Lock()
	runs := len(r.runs)
	r.mu.Unlock()
	if runs != 0 {
		t.Errorf("the restarted server ran the cancelled job again (%d sandbox runs)", runs)
	}
}

// TestCancelSurvivesRestartKeepsTheAgent: a job cancelled after its baseline whose server
// died before the run stopped ended interrupted with its optimized_prompt but no
// agent_code_url (the run that would have saved agent.py was lost); the best agent.py found
// is now kept with the job's progress and saved when the restart ends the job.
func TestCancelSurvivesRestartKeepsTheAgent(t *testing.T) {
	svc2, id := cancelThenCrash(t, func(j sandbox.Job) bool {
		return strings.Contains(string(j.Files["agent.py"]), "Be careful") // a variant: the baseline ran
	})
	st := waitFor(t, svc2, id)
	if st.Status != StatusInterrupted {
		t.Fatalf("after the restart the cancelled job is %s (%q)", st.Status, st.ErrorMessage)
	}
	res, err := svc2.Results(context.Background(), "alice", id)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Results) != 1 || res.Results[0].AgentCodeURL == "" {
		t.Fatalf("results after the restart: %+v; want an agent_code_url", res.Results)
	}
	tok := strings.TrimSuffix(strings.TrimPrefix(res.Results[0].AgentCodeURL, "https://sy.example/api/v1/artifacts/"), "/agent.py")
	code, err := svc2.Artifact(context.Background(), tok)
	if err != nil || !strings.Contains(string(code), res.Results[0].OptimizedPrompt) {
		t.Fatalf("the kept agent.py (%v): %s; want one carrying the optimized prompt %q", err, code, res.Results[0].OptimizedPrompt)
	}
}

func cancelThenCrash(t *testing.T, blocks func(sandbox.Job) bool) (*Service, string) {
	t.Helper()
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	stuck := &fakeRunner{block: func(j sandbox.Job) bool {
		if !blocks(j) {
			return false
		}
		once.Do(func() { close(entered) })
		<-release // the run does not stop before the "crash"
		return true
	}}
	e := newEnv(t, stuck, nil)
	e.start(t)
	t.Cleanup(func() { close(release) })
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
	return svc2, sub.JobID
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
