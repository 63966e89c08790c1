package optimizer

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/sandbox"
	"github.com/switchyard-ai/switchyard/store"
)

// TestJobsPerOwnerLimit: one key's queued jobs hit the per-key limit (a JobLimitError
// naming it) while another key still gets in; cancelling or finishing a job frees a slot.
func TestJobsPerOwnerLimit(t *testing.T) {
	e := newEnv(t, &fakeRunner{}, nil, WithJobsPerOwner(2))
	ctx := context.Background()
	var ids []string
	for range 2 {
		sub, err := e.svc.Submit(ctx, "alice", request(e.url, 1))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, sub.JobID)
	}
	_, err := e.svc.Submit(ctx, "alice", request(e.url, 1))
	var le *JobLimitError
	if !errors.As(err, &le) || !errors.Is(err, ErrTooManyJobs) || le.Limit != 2 || !strings.Contains(err.Error(), "limit is 2 per key") {
		t.Fatalf("3rd job of one key: err = %v, want a JobLimitError naming the limit 2", err)
	}
	if _, err := e.svc.Submit(ctx, "bob", request(e.url, 1)); err != nil {
		t.Fatalf("another key was starved: %v", err)
	}
	if _, err := e.svc.Cancel(ctx, "alice", ids[0]); err != nil {
		t.Fatal(err)
	}
	sub, err := e.svc.Submit(ctx, "alice", request(e.url, 1))
	if err != nil {
		t.Fatalf("a cancelled job still counts against the key: %v", err)
	}

	// Once started, jobs that end free their slots.
	e.start(t)
	for _, id := range []string{ids[1], sub.JobID} {
		waitFor(t, e.svc, id)
	}
	deadline := time.Now().Add(20 * time.Second) // guards a hang only
	for {
		_, err := e.svc.Submit(ctx, "alice", request(e.url, 1))
		if err == nil {
			break
		}
		if !errors.Is(err, ErrTooManyJobs) || time.Now().After(deadline) {
			t.Fatalf("after the key's jobs ended: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// syncBuffer is a bytes.Buffer safe for the concurrent writes of a logger.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestShutdownIsNotAnError: closing the service while a job runs and another is queued logs
// no ERROR line; the jobs stay for the next start.
func TestShutdownIsNotAnError(t *testing.T) {
	var logs syncBuffer
	runner := &fakeRunner{block: func(sandbox.Job) bool { return true }}
	e := newEnv(t, runner, nil, WithLogger(slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	if err := e.svc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	a, _ := e.svc.Submit(context.Background(), "alice", request(e.url, 2))
	e.svc.Submit(context.Background(), "alice", request(e.url, 2))
	deadline := time.Now().Add(10 * time.Second)
	for len(runner.allRuns()) == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.svc.Close(ctx); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		if strings.Contains(line, `"level":"ERROR"`) {
			t.Errorf("shutdown logged an error: %s", line)
		}
	}
	if st, err := e.svc.Status(context.Background(), "alice", a.JobID); err != nil || st.Status.Terminal() {
		t.Errorf("the running job after shutdown: %+v, %v", st, err)
	}
	// The cut run does not count against MaxAttempts: restarts are not the job's doing.
	if rec, err := store.GetJSON[job](context.Background(), e.st, store.OptimizationJobs, a.JobID); err != nil || rec.Attempts != 0 {
		t.Errorf("attempts after a graceful stop = %d, %v; want 0", rec.Attempts, err)
	}
}
