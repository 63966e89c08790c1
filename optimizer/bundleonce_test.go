package optimizer

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/fetch"
	"github.com/switchyard-ai/switchyard/store"
)

// serveOnce serves data once, as a presigned URL that expires after its first download;
// later requests get S3's 403 for an expired signature. fetches counts the requests.
func serveOnce(t *testing.T, data []byte) (url string, fetches *atomic.Int32) {
	t.Helper()
	fetches = new(atomic.Int32)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if fetches.Add(1) > 1 {
			http.Error(w, "<Error><Code>AccessDenied</Code><Message>Request has expired</Message></Error>", http.StatusForbidden)
			return
		}
		w.Write(data)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/bundle.zip?X-Amz-Expires=60", fetches
}

// storedBundleKeys lists the keys of store.OptimizationBundles.
func storedBundleKeys(t *testing.T, st *store.Store) []string {
	t.Helper()
	es, err := st.List(context.Background(), store.OptimizationBundles, store.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, e := range es {
		keys = append(keys, e.Key)
	}
	return keys
}

// storedBundlesLeft waits up to 10 s for store.OptimizationBundles to be empty (an ended
// job's bundle goes just after its ended status is saved) and returns the keys left.
func storedBundlesLeft(t *testing.T, st *store.Store) []string {
	t.Helper()
	keys := storedBundleKeys(t, st)
	for deadline := time.Now().Add(10 * time.Second); len(keys) != 0 && time.Now().Before(deadline); keys = storedBundleKeys(t, st) {
		time.Sleep(10 * time.Millisecond)
	}
	return keys
}

// TestJobRunsTheBundleCheckedAtSubmit: the bundle was downloaded at submit (to check it)
// and again when the job started, so a presigned input_url that expired while the job was
// queued failed it. The job now runs the copy downloaded at submit: one download in all,
// and the copy is deleted once the job ends.
func TestJobRunsTheBundleCheckedAtSubmit(t *testing.T) {
	e := newEnv(t, &fakeRunner{}, nil) // not started: the job waits in the queue
	u, fetches := serveOnce(t, zipFiles(t, bundleFiles(t)))
	sub, err := e.svc.Submit(context.Background(), "alice", request(u, 2))
	if err != nil {
		t.Fatal(err)
	}
	if keys := storedBundleKeys(t, e.st); len(keys) != 2 || keys[0] != bundleIndexKey(sub.JobID) || keys[1] != sub.JobID+"/000000" {
		t.Fatalf("stored bundle keys %v, want the job's index entry and one piece", keys)
	}
	e.start(t)
	if st := waitFor(t, e.svc, sub.JobID); st.Status != StatusCompleted {
		t.Fatalf("status %s (%q), want completed", st.Status, st.ErrorMessage)
	}
	if n := fetches.Load(); n != 1 {
		t.Errorf("the bundle was downloaded %d times, want once (at submit)", n)
	}
	if keys := storedBundlesLeft(t, e.st); len(keys) != 0 {
		t.Errorf("the ended job's bundle is still stored: %v", keys)
	}
}

// TestStoredBundleSurvivesRestart: a job queued when the server stops runs, after the
// restart, the copy stored at submit, not the expired URL; the restart sweeps away the
// copies of jobs ended or deleted without theirs deleted.
func TestStoredBundleSurvivesRestart(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, &fakeRunner{}, nil) // never started: the "crash" leaves the job queued
	u, fetches := serveOnce(t, zipFiles(t, bundleFiles(t)))
	sub, err := e.svc.Submit(ctx, "alice", request(u, 1))
	if err != nil {
		t.Fatal(err)
	}
	// Left behind by an earlier build's process that stopped between a job's end and its
	// copy's deletion (two transactions then).
	ended := job{ID: "opt_ended", Owner: "alice", Status: StatusCompleted, Bundle: newBundleCopy([]byte("zip")), CreatedAt: time.Now()}
	if err := store.PutJSON(ctx, e.st, store.OptimizationJobs, ended.ID, ended); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"opt_ended", "opt_gone"} {
		if err := putBundleTx(ctx, e.st, id, []byte("zip")); err != nil {
			t.Fatal(err)
		}
	}
	_ = e.svc.Close(ctx)

	svc2, err := New(e.st, &fakeRunner{}, e.proposer,
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
	if st := waitFor(t, svc2, sub.JobID); st.Status != StatusCompleted {
		t.Fatalf("after the restart: %s (%q), want completed", st.Status, st.ErrorMessage)
	}
	if n := fetches.Load(); n != 1 {
		t.Errorf("the bundle was downloaded %d times, want once (at submit)", n)
	}
	if keys := storedBundlesLeft(t, e.st); len(keys) != 0 {
		t.Errorf("stored bundles left after the restart and the job's end: %v", keys)
	}
}

// TestStoredBundleGoesWithTheJob: cancelling or deleting a queued job deletes its stored
// bundle; a damaged copy fails the job rather than running other bytes than were checked.
func TestStoredBundleGoesWithTheJob(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, &fakeRunner{}, nil) // not started: jobs stay queued
	a, err := e.svc.Submit(ctx, "alice", request(e.url, 1))
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.svc.Submit(ctx, "alice", request(e.url, 1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Cancel(ctx, "alice", a.JobID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.DeleteJob(ctx, "alice", b.JobID); err != nil {
		t.Fatal(err)
	}
	if keys := storedBundleKeys(t, e.st); len(keys) != 0 {
		t.Fatalf("stored bundles of a cancelled and a deleted job: %v", keys)
	}

	c, err := e.svc.Submit(ctx, "alice", request(e.url, 1))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.st.Put(ctx, store.OptimizationBundles, bundleKey(c.JobID, 0), []byte("PK damaged")); err != nil {
		t.Fatal(err)
	}
	e.start(t)
	if st := waitFor(t, e.svc, c.JobID); st.Status != StatusFailed || !strings.Contains(st.ErrorMessage, "do not match") {
		t.Fatalf("a damaged copy: %s (%q), want failed", st.Status, st.ErrorMessage)
	}
}
