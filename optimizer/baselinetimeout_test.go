package optimizer

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/sandbox"
)

// TestSlowBaselineLeavesNoIterationsInterrupted: when the baseline alone takes so long that
// no iteration fits before the time kept for the held-out split, the job is cut by
// overall_timeout_seconds (interrupted, the original agent scored on the held-out split),
// not failed as if the proposer never produced a candidate (a CI run on a loaded machine
// ended so).
func TestSlowBaselineLeavesNoIterationsInterrupted(t *testing.T) {
	// Every run takes 700 ms: the held-out reserve (three baselines) outlasts the 2 s limit.
	runner := &fakeRunner{delay: func(sandbox.Job) time.Duration { return 700 * time.Millisecond }}
	e := newEnv(t, runner, nil)
	e.start(t)
	req := request(e.url, 3)
	req.OverallTimeout = 2 * time.Second
	sub, _ := e.svc.Submit(context.Background(), "alice", req)
	st := waitFor(t, e.svc, sub.JobID)
	if st.Status != StatusInterrupted || !strings.Contains(st.ErrorMessage, "overall_timeout_seconds") {
		t.Fatalf("status %+v", st)
	}
	if e.up.proposerCalls != 0 {
		t.Errorf("the proposer was called %d times; no iteration had time", e.up.proposerCalls)
	}
	res, err := e.svc.Results(context.Background(), "alice", sub.JobID)
	if err != nil {
		t.Fatal(err)
	}
	if r := res.Results[0]; r.Complete || r.IterationsRun != 0 || r.TestScore == nil || r.OriginalTestScore == nil {
		t.Fatalf("result %+v", r)
	}
}
