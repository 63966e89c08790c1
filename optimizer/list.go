package optimizer

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/switchyard-ai/switchyard/store"
)

// jobKind names optimization jobs in the store's owner index.
const jobKind = "optimization_job"

// DeleteWait bounds how long DeleteJob waits for a running job it cancelled to stop; past
// it DeleteJob answers ErrStillRunning and the job finishes stopping on its own.
const DeleteWait = 30 * time.Second

// sharedPoll is how often DeleteJob re-reads a job that runs in another process.
const sharedPoll = 100 * time.Millisecond

// ListOptions selects one page of a listing, newest first by creation time. Status
// values: queued, running, completed, interrupted, failed.
type ListOptions = store.ListFilter

// JobList is a page of optimization jobs, newest first.
type JobList struct {
	// Data holds the jobs of the page, each as its status.
	Data []JobStatus `json:"data"`
	// NextCursor, when present, fetches the next page (pass it as cursor); absent on the
	// last page.
	NextCursor string `json:"next_cursor,omitempty"`
}

// Deletion is the answer to a delete.
type Deletion struct {
	// ID is the deleted job's id.
	ID string `json:"id"`
	// Object is "optimization_job".
	Object string `json:"object"`
	// Deleted is always true (a failed delete is an error).
	Deleted bool `json:"deleted"`
	// Cancelled is true when the job was queued or running and was cancelled first.
	Cancelled bool `json:"cancelled,omitempty"`
	// Artifacts counts the best-agent files deleted with the job (their URLs answer 404).
	Artifacts int `json:"artifacts"`
}

func (j *job) ref() store.OwnedRef {
	return store.OwnedRef{Kind: jobKind, Owner: j.Owner, Created: j.CreatedAt, ID: j.ID}
}

// ensureIndexed indexes, once per store, the jobs stored before the owner index existed.
func (s *Service) ensureIndexed(ctx context.Context) error {
	err := s.indexed.Ensure(ctx, s.store, jobKind, store.OptimizationJobs, func(e store.Entry) (store.OwnedRef, bool) {
		j, err := decodeJob(e)
		if err != nil || j.ID != e.Key {
			return store.OwnedRef{}, false
		}
		return j.ref(), true
	})
	if err != nil {
		return fmt.Errorf("optimizer: %w", err)
	}
	return nil
}

// ListJobs returns one page of owner's optimization jobs, newest first, filtered by
// opts.Status and the creation-time window. A bad option is a *ValidationError naming it
// (status, limit, cursor, created_after).
func (s *Service) ListJobs(ctx context.Context, owner string, opts ListOptions) (JobList, error) {
	states := map[string]bool{}
	for _, w := range opts.Status {
		switch Status(w) {
		case StatusQueued, StatusRunning, StatusCompleted, StatusInterrupted, StatusFailed:
			states[w] = true
		default:
			return JobList{}, invalid("status", "status must be one of queued, running, completed, interrupted, failed, got %q", w)
		}
	}
	if err := s.ensureIndexed(ctx); err != nil {
		return JobList{}, err
	}
	items, next, err := store.ListOwned(ctx, s.store, opts.Query(jobKind, owner), func(id string) (JobStatus, bool, error) {
		j, err := store.GetJSON[job](ctx, s.store, store.OptimizationJobs, id)
		if errors.Is(err, store.ErrNotFound) {
			return JobStatus{}, false, nil
		}
		if err != nil {
			return JobStatus{}, false, err
		}
		if j.Owner != owner || (len(states) > 0 && !states[string(j.Status)]) {
			return JobStatus{}, false, nil
		}
		return j.status(), true, nil
	})
	var qe *store.QueryError
	if errors.As(err, &qe) {
		return JobList{}, invalid(qe.Field, "%s %s", qe.Field, qe.Message)
	}
	if err != nil {
		return JobList{}, fmt.Errorf("optimizer: list jobs: %w", err)
	}
	return JobList{Data: items, NextCursor: next}, nil
}

// DeleteJob deletes owner's optimization job with everything derived from it: its record,
// its owner-index entry and the stored best agent.py of each target model (their URLs
// answer 404 afterwards), in one transaction. A queued job is cancelled and deleted at
// once; a running one is cancelled, and DeleteJob waits (at most DeleteWait, and while
// ctx lasts) for it to stop before deleting it, so nothing it writes afterwards brings it
// back. Past DeleteWait it answers ErrStillRunning (the job stays, cancelled; retry the
// delete). An unknown id, or another owner's, is ErrNotFound.
func (s *Service) DeleteJob(ctx context.Context, owner, id string) (Deletion, error) {
	if strings.TrimSpace(id) == "" {
		return Deletion{}, invalid("job_id", "job_id is required")
	}
	cancelled := false
	wait := time.NewTimer(DeleteWait)
	defer wait.Stop()
	for {
		s.recMu.Lock()
		j, err := s.get(ctx, owner, id)
		if err != nil {
			s.recMu.Unlock()
			return Deletion{}, err
		}
		s.mu.Lock()
		stop, done := s.running[id], s.runDone[id]
		s.mu.Unlock()
		if done != nil {
			stop(errCancelled)
			s.recMu.Unlock()
			cancelled = true
			select {
			case <-done:
				continue // read what it saved (its artifacts too), then delete
			case <-ctx.Done():
				return Deletion{}, ctx.Err()
			case <-wait.C:
				return Deletion{}, fmt.Errorf("%w: optimization job %s was cancelled but has not stopped after %s; retry the delete", ErrStillRunning, id, DeleteWait)
			}
		}
		if j.Status == StatusRunning && s.q != nil && !s.stale(j) {
			// Running in another process: cancel it there and wait for its outcome.
			s.recMu.Unlock()
			if !cancelled {
				if err := s.cancelElsewhere(ctx, j); err != nil {
					return Deletion{}, err
				}
				cancelled = true
			}
			select {
			case <-time.After(sharedPoll):
				continue
			case <-ctx.Done():
				return Deletion{}, ctx.Err()
			case <-wait.C:
				return Deletion{}, fmt.Errorf("%w: optimization job %s was cancelled but has not stopped after %s; retry the delete", ErrStillRunning, id, DeleteWait)
			}
		}
		if !j.Status.Terminal() {
			cancelled = true
		}
		artifacts := 0
		err = s.store.Update(ctx, func(tx store.Tx) error {
			artifacts = 0 // a driver may run this more than once
			for _, r := range j.Results {
				if r.ArtifactToken == "" {
					continue
				}
				if err := tx.Delete(ctx, store.Artifacts, artifactKey(r.ArtifactToken)); err != nil {
					return err
				}
				artifacts++
			}
			if err := tx.Delete(ctx, store.OptimizationJobs, j.ID); err != nil {
				return err
			}
			if err := dropBundleTx(ctx, tx, j); err != nil {
				return err
			}
			return store.DeleteOwned(ctx, tx, j.ref())
		})
		s.recMu.Unlock()
		if err != nil {
			return Deletion{}, fmt.Errorf("optimizer: delete job %s: %w", id, err)
		}
		for _, k := range j.OpenKeys { // keys a cut run left valid: the job is gone, so are they
			s.reclaimKey(ctx, id, k)
		}
		s.release(id) // a queued job no longer counts; the worker finds no record and skips it
		s.log.Info("optimizer: job deleted", "job", id, "status", j.Status, "artifacts", artifacts)
		return Deletion{ID: id, Object: jobKind, Deleted: true, Cancelled: cancelled, Artifacts: artifacts}, nil
	}
}
