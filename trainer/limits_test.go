package trainer

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/fetch"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// TestJobsPerOwnerLimit: one key fills its share of the queue and gets a JobLimitError
// naming the limit; another key still gets in; cancelling a job frees a slot.
func TestJobsPerOwnerLimit(t *testing.T) {
	// Not started: submitted jobs stay queued.
	s, err := New(memstore.New(), WithLogger(quietLogger()), WithJobsPerOwner(3), WithFetcher(&fetch.Fetcher{AllowLocal: true}))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	var ids []string
	for range 3 {
		j, err := s.Submit(ctx, "greedy", []string{"https://example.com/a.json"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, j.TrainingJobID)
	}
	_, err = s.Submit(ctx, "greedy", []string{"https://example.com/a.json"})
	var le *JobLimitError
	if !errors.As(err, &le) || !errors.Is(err, ErrTooManyJobs) || le.Limit != 3 || !strings.Contains(err.Error(), "limit is 3 per key") {
		t.Fatalf("4th job of one key: err = %v, want a JobLimitError naming the limit 3", err)
	}
	if _, err := s.Submit(ctx, "other", []string{"https://example.com/a.json"}); err != nil {
		t.Fatalf("another key was starved: %v", err)
	}
	st, err := s.Cancel(ctx, "greedy", ids[0])
	if err != nil || st.Status != StateFailed || !strings.Contains(st.ErrorMessage, "cancelled") || st.ErrorKind != ErrorKindCancelled {
		t.Fatalf("cancel queued job: %+v, %v", st, err)
	}
	if _, err := s.Submit(ctx, "greedy", []string{"https://example.com/a.json"}); err != nil {
		t.Fatalf("a cancelled job still counts against the key: %v", err)
	}
}

// TestCancelTrainingJob cancels a queued and a running job (one stalled on its download)
// and checks both end failed with a message saying so, no model is saved, a finished job
// answers ErrFinished and another key's job is not found.
func TestCancelTrainingJob(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	s := newService(t, nil, WithFetcher(&fetch.Fetcher{AllowLocal: true, IdleTimeout: time.Minute}))
	ctx := context.Background()
	running, err := s.Submit(ctx, "k", []string{srv.URL + "/stalls.json"})
	if err != nil {
		t.Fatal(err)
	}
	queued, err := s.Submit(ctx, "k", []string{srv.URL + "/never.json"})
	if err != nil {
		t.Fatal(err)
	}
	<-started // the single worker is now stuck in the first job's download

	if _, err := s.Cancel(ctx, "someone-else", running.TrainingJobID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("cancel by another key: err = %v, want ErrNotFound", err)
	}
	if st, err := s.Cancel(ctx, "k", queued.TrainingJobID); err != nil || st.Status != StateFailed {
		t.Fatalf("cancel queued: %+v %v", st, err)
	}
	if st, err := s.Cancel(ctx, "k", running.TrainingJobID); err != nil || st.Status != StateRunning {
		t.Fatalf("cancel running: %+v %v", st, err)
	}
	for _, id := range []string{running.TrainingJobID, queued.TrainingJobID} {
		st := waitDone(t, s, "k", id)
		if st.Status != StateFailed || !strings.Contains(st.ErrorMessage, "cancelled by the caller") || st.ModelID != "" || st.ErrorKind != ErrorKindCancelled {
			t.Fatalf("job %s: %+v, want failed as cancelled", id, st)
		}
	}
	if _, err := s.Cancel(ctx, "k", running.TrainingJobID); !errors.Is(err, ErrFinished) {
		t.Fatalf("cancel of a finished job: err = %v, want ErrFinished", err)
	}
	select {
	case <-started:
		t.Fatal("the cancelled queued job was still run")
	default:
	}
}
