package optimizer

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/fetch"
	"github.com/switchyard-ai/switchyard/sandbox"
	"github.com/switchyard-ai/switchyard/store"
)

// TestReview11CutRunArtifactsDeletedWithTheJob: a shutdown cuts a running job after its
// baseline; the cut run saves its best agent.py as an artifact and records its token in the
// job's results. The next Start drops the cut run's results (dropCutRun) and with them the
// only reference to that artifact: after the job completes and is deleted, the artifact
// (the owner's agent code) is still stored, and nothing will ever delete it.
func TestReview11CutRunArtifactsDeletedWithTheJob(t *testing.T) {
	original := bundleFiles(t)["agent.py"]
	runner := &fakeRunner{block: func(job sandbox.Job) bool {
		return !bytes.Equal(job.Files["agent.py"], original) // candidates hang until cut
	}}
	e := newEnv(t, runner, nil)
	if err := e.svc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sub, err := e.svc.Submit(ctx, "alice", request(e.url, 2))
	if err != nil {
		t.Fatal(err)
	}
	// Wait until iteration 1's candidate is running (blocked).
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, _ := e.svc.Status(ctx, "alice", sub.JobID)
		if st != nil && st.BaselineScore != nil && len(runner.allRuns()) > 4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the job never reached its first candidate")
		}
		time.Sleep(5 * time.Millisecond)
	}
	cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := e.svc.Close(cctx); err != nil { // a deploy: the job is cut, left for the next Start
		t.Fatal(err)
	}
	before, _ := e.st.List(ctx, store.Artifacts, store.ListOptions{})
	if len(before) == 0 {
		t.Fatal("the cut run saved no artifact (test premise)")
	}

	// The next process.
	svc2, err := New(e.st, &fakeRunner{}, e.proposer, WithFetcher(&fetch.Fetcher{AllowLocal: true}),
		WithGateway(e.up.URL+"/v1", StaticKey("job-key")), WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	if err := svc2.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer svc2.Close(context.Background())
	if st := waitFor(t, svc2, sub.JobID); st.Status != StatusCompleted {
		t.Fatalf("re-run: %+v", st)
	}
	d, err := svc2.DeleteJob(ctx, "alice", sub.JobID)
	if err != nil {
		t.Fatal(err)
	}
	left, _ := e.st.List(ctx, store.Artifacts, store.ListOptions{})
	if len(left) != 0 {
		var tokens []string
		for _, a := range left {
			tokens = append(tokens, a.Key)
		}
		t.Fatalf("job deleted (%d artifacts deleted with it) but %d artifact(s) of its cut run remain: %v", d.Artifacts, len(left), tokens)
	}
}
