package optimizer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/fetch"
	"github.com/switchyard-ai/switchyard/jobqueue/riverqueue"
	"github.com/switchyard-ai/switchyard/sandbox"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/pgstore"
)

// TestSharedQueue runs optimization jobs on River between two services that share one
// PostgreSQL database as two processes would (each with its own pool and River client): a
// replica without workers accepts jobs that the worker runs once each, cancels and
// deletes a job running on the worker, and a worker shutting down mid-job hands the job to
// another. (The trainer's TestSharedQueue runs separate OS
// processes and kills one.)
func TestSharedQueue(t *testing.T) {
	dsn := os.Getenv("SWITCHYARD_TEST_POSTGRES")
	if dsn == "" {
		t.Skip("SWITCHYARD_TEST_POSTGRES is not set: scripts/pg-test-cluster.sh starts a throwaway PostgreSQL cluster and prints it (needs the Debian package postgresql)")
	}
	ctx := context.Background()
	schema := fmt.Sprintf("optimizer_queue_%d_%d", os.Getpid(), time.Now().UnixNano())
	var blocking atomic.Bool
	runner := &fakeRunner{block: func(sandbox.Job) bool { return blocking.Load() }}
	e := newEnv(t, runner, nil)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))

	open := func(workers int) (*Service, func()) {
		t.Helper()
		d, err := pgstore.OpenDriver(ctx, dsn, pgstore.Options{Schema: schema})
		if err != nil {
			t.Fatal(err)
		}
		st := store.New(d)
		t.Cleanup(func() { st.Close() })
		q, err := riverqueue.Open(ctx, d.Pool(), riverqueue.Options{Schema: schema, StaleAfter: 2 * time.Second,
			RetryDelay: 100 * time.Millisecond, PollInterval: 200 * time.Millisecond, Logger: log})
		if err != nil {
			t.Fatal(err)
		}
		svc, err := New(st, runner, e.proposer, WithQueue(q), WithWorkers(workers),
			WithFetcher(&fetch.Fetcher{AllowLocal: true}), WithGateway(e.up.URL+"/v1", StaticKey("job-key")),
			WithPublicURL("https://sy.example"), WithLogger(log))
		if err != nil {
			t.Fatal(err)
		}
		if err := svc.Start(ctx); err != nil {
			t.Fatal(err)
		}
		if err := q.Start(ctx); err != nil {
			t.Fatal(err)
		}
		stop := func() {
			cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			defer cancel()
			if err := svc.Close(cctx); err != nil {
				t.Errorf("Close: %v", err)
			}
			q.Stop(cctx)
		}
		t.Cleanup(stop)
		return svc, stop
	}
	worker, stopWorker := open(1)
	replica, _ := open(0)

	running := func(id string) bool {
		st, err := replica.Status(ctx, "alice", id)
		if err != nil {
			t.Fatal(err)
		}
		return st.Status == StatusRunning && len(runner.allRuns()) > 0
	}
	waitRunning := func(id string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for !running(id) {
			if time.Now().After(deadline) {
				t.Fatalf("job %s did not start", id)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	// Accepted by the replica, run once by the worker, from the copy of the bundle the
	// replica downloaded (the URL serves it once, as a presigned URL that expires).
	once, fetches := serveOnce(t, zipFiles(t, bundleFiles(t)))
	sub, err := replica.Submit(ctx, "alice", request(once, 1))
	if err != nil {
		t.Fatal(err)
	}
	if got := waitFor(t, replica, sub.JobID); got.Status != StatusCompleted {
		t.Fatalf("job run by the worker: %+v", got)
	}
	if n := fetches.Load(); n != 1 {
		t.Errorf("the bundle was downloaded %d times, want once (by the replica, at submit)", n)
	}
	rec, err := store.GetJSON[job](ctx, worker.store, store.OptimizationJobs, sub.JobID)
	if err != nil || rec.Attempts != 1 {
		t.Fatalf("record: attempts %d, %v", rec.Attempts, err)
	}

	// Cancelled from the replica while it runs on the worker: interrupted, as a local cancel.
	blocking.Store(true)
	sub, err = replica.Submit(ctx, "alice", request(e.url, 2))
	if err != nil {
		t.Fatal(err)
	}
	waitRunning(sub.JobID)
	if _, err := replica.Cancel(ctx, "alice", sub.JobID); err != nil {
		t.Fatal(err)
	}
	got := waitFor(t, replica, sub.JobID)
	if got.Status != StatusInterrupted || !strings.Contains(got.ErrorMessage, "cancelled by the caller") {
		t.Fatalf("cancelled job: %+v", got)
	}

	// Deleted from the replica while it runs on the worker: cancelled there, then deleted.
	sub, err = replica.Submit(ctx, "alice", request(e.url, 2))
	if err != nil {
		t.Fatal(err)
	}
	waitRunning(sub.JobID)
	del, err := replica.DeleteJob(ctx, "alice", sub.JobID)
	if err != nil || !del.Cancelled {
		t.Fatalf("DeleteJob = %+v, %v", del, err)
	}
	if _, err := worker.Status(ctx, "alice", sub.JobID); err == nil {
		t.Errorf("the deleted job still answers on the worker")
	}

	// A worker that shuts down mid-job hands it over: another worker starts it over at
	// once (no wait for a stale heartbeat); the cut run does not count against MaxAttempts.
	sub, err = replica.Submit(ctx, "alice", request(e.url, 1))
	if err != nil {
		t.Fatal(err)
	}
	waitRunning(sub.JobID)
	open(1)
	stopWorker()
	blocking.Store(false)
	start := time.Now()
	if got := waitFor(t, replica, sub.JobID); got.Status != StatusCompleted {
		t.Fatalf("job handed over at shutdown: %+v", got)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the hand-over took %s", took)
	}
	rec, err = store.GetJSON[job](ctx, replica.store, store.OptimizationJobs, sub.JobID)
	if err != nil || rec.Attempts != 1 {
		t.Fatalf("handed-over job: attempts %d, %v; want 1 (the graceful stop is not counted)", rec.Attempts, err)
	}
	// Every job ended or was deleted: no stored bundle is left.
	if keys := storedBundlesLeft(t, replica.store); len(keys) != 0 {
		t.Errorf("stored bundles left: %v", keys)
	}
}

// TestSharedJobLimit: with a shared queue the per-owner limit counts the owner's
// unfinished jobs in the store, whichever process accepted them.
func TestSharedJobLimit(t *testing.T) {
	dsn := os.Getenv("SWITCHYARD_TEST_POSTGRES")
	if dsn == "" {
		t.Skip("SWITCHYARD_TEST_POSTGRES is not set: scripts/pg-test-cluster.sh starts a throwaway PostgreSQL cluster and prints it (needs the Debian package postgresql)")
	}
	ctx := context.Background()
	schema := fmt.Sprintf("optimizer_limit_%d_%d", os.Getpid(), time.Now().UnixNano())
	e := newEnv(t, &fakeRunner{}, nil)
	replica := func() *Service {
		d, err := pgstore.OpenDriver(ctx, dsn, pgstore.Options{Schema: schema})
		if err != nil {
			t.Fatal(err)
		}
		st := store.New(d)
		t.Cleanup(func() { st.Close() })
		q, err := riverqueue.Open(ctx, d.Pool(), riverqueue.Options{Schema: schema, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		svc, err := New(st, e.runner, e.proposer, WithQueue(q), WithWorkers(0), WithJobsPerOwner(2),
			WithFetcher(&fetch.Fetcher{AllowLocal: true}), WithLogger(slog.New(slog.DiscardHandler)))
		if err != nil {
			t.Fatal(err)
		}
		if err := svc.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { svc.Close(ctx) })
		return svc
	}
	a, b := replica(), replica()
	first, err := a.Submit(ctx, "alice", request(e.url, 1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Submit(ctx, "alice", request(e.url, 1)); err != nil {
		t.Fatal(err)
	}
	_, err = a.Submit(ctx, "alice", request(e.url, 1))
	var limit *JobLimitError
	if !errors.As(err, &limit) || limit.Active != 2 {
		t.Fatalf("third job of one owner across two processes: %v", err)
	}
	if _, err := b.Cancel(ctx, "alice", first.JobID); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Submit(ctx, "alice", request(e.url, 1)); err != nil {
		t.Fatalf("after a cancel freed a slot: %v", err)
	}
}
