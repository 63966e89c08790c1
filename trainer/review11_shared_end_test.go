package trainer

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/jobqueue"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// review11Queue is a fake shared queue: jobs are run by calling the service's handle
// directly; StaleAfter is a minute.
type review11Queue struct{}

func (review11Queue) Register(string, jobqueue.Kind) error          { return nil }
func (review11Queue) Enqueue(context.Context, string, string) error { return nil }
func (review11Queue) Cancel(context.Context, string, string) error  { return nil }
func (review11Queue) StaleAfter() time.Duration                     { return time.Minute }

// review11Blocking serves a valid dataset, but holds the first request until release is
// closed; fetching is closed when that request arrived.
func review11Blocking(t *testing.T) (srv *httptest.Server, fetching, release chan struct{}) {
	fetching, release = make(chan struct{}), make(chan struct{})
	body := asJSON(syntheticRecords(60, 7))
	var once sync.Once
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { close(fetching) })
		<-release
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv, fetching, release
}

// review11StaleWorker starts job id on s1 (as the queue's handler would), waits for it to
// be fetching, then makes its heartbeat stale, as when the worker's process is paused or
// cut off from the database for longer than StaleAfter while the job keeps computing.
func review11StaleWorker(t *testing.T, st *store.Store, s1 *Service, id string, fetching chan struct{}) chan error {
	t.Helper()
	ctx := context.Background()
	handled := make(chan error, 1)
	go func() { handled <- s1.handle(ctx, id) }()
	select {
	case <-fetching:
	case <-time.After(10 * time.Second):
		t.Fatal("job never started fetching")
	}
	err := st.Update(ctx, func(tx store.Tx) error {
		j, err := store.GetJSON[jobRecord](ctx, tx, store.TrainingJobs, id)
		if err != nil {
			return err
		}
		if j.State != StateRunning {
			t.Errorf("job is %s, want running", j.State)
		}
		j.HeartbeatAt = time.Now().Add(-2 * time.Minute)
		return store.PutJSON(ctx, tx, store.TrainingJobs, id, j)
	})
	if err != nil {
		t.Fatal(err)
	}
	return handled
}

// TestReview11CancelledJobIsNotCompletedLater: another process cancels a running job whose
// worker looks dead (stale heartbeat): the job ends failed (cancelled) and the caller is told
// so. The worker was only slow; when it finishes, its blind write turns the failed job into
// a completed one with a router model: the job ends twice and the cancel is lost.
func TestReview11CancelledJobIsNotCompletedLater(t *testing.T) {
	st := memstore.New()
	defer st.Close()
	q := review11Queue{}
	s1 := newService(t, st, WithQueue(q)) // the worker's process
	s2 := newService(t, st, WithQueue(q)) // another replica
	srv, fetching, release := review11Blocking(t)
	ctx := context.Background()
	job, err := s1.Submit(ctx, "alice", []string{srv.URL + "/d.json"})
	if err != nil {
		t.Fatal(err)
	}
	handled := review11StaleWorker(t, st, s1, job.TrainingJobID, fetching)

	if _, err := s2.Cancel(ctx, "alice", job.TrainingJobID); err != nil {
		t.Fatal(err)
	}
	st1, _ := s2.Status(ctx, "alice", job.TrainingJobID)
	if st1.Status != StateFailed || st1.ErrorKind != ErrorKindCancelled {
		t.Fatalf("after cancel: %+v, want failed/cancelled", st1)
	}
	close(release)
	select {
	case <-handled:
	case <-time.After(60 * time.Second):
		t.Fatal("worker did not finish")
	}
	final, _ := s2.Status(ctx, "alice", job.TrainingJobID)
	if final.Status != StateFailed || final.ModelID != "" {
		t.Fatalf("cancelled job ended a second time: was failed/cancelled, now %s (model %q, error_kind %q)",
			final.Status, final.ModelID, final.ErrorKind)
	}
}

// TestReview11DeletedJobStaysDeleted: another process deletes a running job whose worker
// looks dead (stale heartbeat). The worker was only slow; its final write brings the
// deleted record back (without its owner-index entry: it is readable by id but never
// listed), with a router model nobody asked for.
func TestReview11DeletedJobStaysDeleted(t *testing.T) {
	st := memstore.New()
	defer st.Close()
	q := review11Queue{}
	s1 := newService(t, st, WithQueue(q))
	s2 := newService(t, st, WithQueue(q))
	srv, fetching, release := review11Blocking(t)
	ctx := context.Background()
	job, err := s1.Submit(ctx, "alice", []string{srv.URL + "/d.json"})
	if err != nil {
		t.Fatal(err)
	}
	handled := review11StaleWorker(t, st, s1, job.TrainingJobID, fetching)

	if _, err := s2.DeleteJob(ctx, "alice", job.TrainingJobID); err != nil {
		t.Fatal(err)
	}
	close(release)
	select {
	case <-handled:
	case <-time.After(60 * time.Second):
		t.Fatal("worker did not finish")
	}
	st2, err := s2.Status(ctx, "alice", job.TrainingJobID)
	if !errors.Is(err, ErrNotFound) {
		list, _ := s2.ListJobs(ctx, "alice", ListOptions{})
		t.Fatalf("deleted job came back: status %s, model %q; listed jobs: %d", st2.Status, st2.ModelID, len(list.Data))
	}
}
