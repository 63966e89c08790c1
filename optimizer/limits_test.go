package optimizer

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
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
