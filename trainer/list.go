package trainer

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/switchyard-ai/switchyard/store"
)

// Kinds of this package's records in the store's owner index.
const (
	jobKind   = "training_job"
	modelKind = "router_model"
)

// DeleteWait bounds how long DeleteJob waits for a running job it cancelled to stop; past
// it DeleteJob answers ErrStillRunning and the job finishes stopping on its own.
const DeleteWait = 30 * time.Second

// sharedPoll is how often DeleteJob re-reads a job that runs in another process.
const sharedPoll = 100 * time.Millisecond

// ListOptions selects one page of a listing, newest first by creation time. Status
// values: jobs queued, running, completed, failed; models active, archived.
type ListOptions = store.ListFilter

// JobList is a page of training jobs, newest first.
type JobList struct {
	// Data holds the jobs of the page, each as its status.
	Data []JobStatus `json:"data"`
	// NextCursor, when present, fetches the next page (pass it as cursor); absent on the
	// last page.
	NextCursor string `json:"next_cursor,omitempty"`
}

// ModelSummary is a router model in a listing: its details without the class list and the
// tradeoff frontier (the model details have them).
type ModelSummary struct {
	ModelID        string     `json:"model_id"`
	Version        string     `json:"version"`
	Status         ModelState `json:"status" jsonschema:"enum=active,enum=archived"`
	EmbeddingModel string     `json:"embedding_model"`
	NumClasses     int        `json:"num_classes"`
	CreatedAt      string     `json:"created_at" jsonschema:"format=date-time"`
	LastUsedAt     string     `json:"last_used_at,omitempty" jsonschema:"format=date-time"`
	ArchivedAt     string     `json:"archived_at,omitempty" jsonschema:"format=date-time"`
	TrainingJobID  string     `json:"training_job_id"`
	Metrics        *Metrics   `json:"metrics,omitempty"`
}

// ModelList is a page of router models, newest first.
type ModelList struct {
	// Data holds the models of the page.
	Data []ModelSummary `json:"data"`
	// NextCursor, when present, fetches the next page; absent on the last page.
	NextCursor string `json:"next_cursor,omitempty"`
}

// Deletion is the answer to a delete.
type Deletion struct {
	// ID is the deleted job's or model's id.
	ID string `json:"id"`
	// Object is "training_job" or "router_model".
	Object string `json:"object"`
	// Deleted is always true (a failed delete is an error).
	Deleted bool `json:"deleted"`
	// Cancelled is true when the job was queued or running and was cancelled first.
	Cancelled bool `json:"cancelled,omitempty"`
}

func (j *jobRecord) ref() store.OwnedRef {
	return store.OwnedRef{Kind: jobKind, Owner: j.Owner, Created: j.CreatedAt, ID: j.ID}
}

func (m *modelRecord) ref() store.OwnedRef {
	return store.OwnedRef{Kind: modelKind, Owner: m.Owner, Created: m.CreatedAt, ID: m.ID}
}

func (m *modelRecord) summary() ModelSummary {
	return ModelSummary{
		ModelID: m.ID, Version: m.Version, Status: m.State, EmbeddingModel: m.EmbeddingModel,
		NumClasses: len(m.Classes), CreatedAt: formatTime(m.CreatedAt), LastUsedAt: formatTime(m.LastUsedAt),
		ArchivedAt: formatTime(m.ArchivedAt), TrainingJobID: m.TrainingJobID, Metrics: m.Metrics,
	}
}

// deleteJobTx removes a job record, its uploaded dataset and its index entry.
func deleteJobTx(ctx context.Context, tx store.Tx, j *jobRecord) error {
	if err := dropUploadTx(ctx, tx, j); err != nil {
		return err
	}
	if err := tx.Delete(ctx, store.TrainingJobs, j.ID); err != nil {
		return err
	}
	return store.DeleteOwned(ctx, tx, j.ref())
}

// deleteModelTx removes a model's weights, record and index entry.
func deleteModelTx(ctx context.Context, tx store.Tx, m *modelRecord) error {
	if err := tx.Delete(ctx, store.RouterWeights, m.ID); err != nil {
		return err
	}
	if err := tx.Delete(ctx, store.RouterModels, m.ID); err != nil {
		return err
	}
	return store.DeleteOwned(ctx, tx, m.ref())
}

// statusFilter checks the wanted states against the known ones; nil keeps every state.
func statusFilter[S ~string](want []string, known ...S) (map[string]bool, error) {
	if len(want) == 0 {
		return nil, nil
	}
	names := make([]string, len(known))
	for i, k := range known {
		names[i] = string(k)
	}
	out := map[string]bool{}
	for _, w := range want {
		ok := false
		for _, n := range names {
			ok = ok || n == w
		}
		if !ok {
			return nil, invalid("status", "must be one of %s, got %q", strings.Join(names, ", "), w)
		}
		out[w] = true
	}
	return out, nil
}

// listError turns the owner index's *store.QueryError into a *ValidationError naming the
// same field.
func listError(what string, err error) error {
	var qe *store.QueryError
	if errors.As(err, &qe) {
		return invalid(qe.Field, "%s", qe.Message)
	}
	return fmt.Errorf("trainer: list %s: %w", what, err)
}

// ListJobs returns one page of owner's training jobs, newest first, filtered by
// opts.Status and the creation-time window. A bad option is a *ValidationError naming it
// (status, limit, cursor, created_after).
func (s *Service) ListJobs(ctx context.Context, owner string, opts ListOptions) (JobList, error) {
	states, err := statusFilter(opts.Status, StateQueued, StateRunning, StateCompleted, StateFailed)
	if err != nil {
		return JobList{}, err
	}
	if err := s.ensureJobsIndexed(ctx); err != nil {
		return JobList{}, err
	}
	items, next, err := store.ListOwned(ctx, s.store, opts.Query(jobKind, owner), func(id string) (JobStatus, bool, error) {
		j, err := store.GetJSON[jobRecord](ctx, s.store, store.TrainingJobs, id)
		if errors.Is(err, store.ErrNotFound) {
			return JobStatus{}, false, nil
		}
		if err != nil {
			return JobStatus{}, false, err
		}
		if j.Owner != owner || (states != nil && !states[string(j.State)]) {
			return JobStatus{}, false, nil
		}
		return j.status(s.version), true, nil
	})
	if err != nil {
		return JobList{}, listError("training jobs", err)
	}
	return JobList{Data: items, NextCursor: next}, nil
}

// ensureJobsIndexed indexes, once per store, the jobs stored before the owner index.
func (s *Service) ensureJobsIndexed(ctx context.Context) error {
	err := s.jobsIndexed.Ensure(ctx, s.store, jobKind, store.TrainingJobs, func(e store.Entry) (store.OwnedRef, bool) {
		var j jobRecord
		if decodeJSON(e.Value, &j) != nil || j.ID != e.Key {
			return store.OwnedRef{}, false
		}
		return j.ref(), true
	})
	if err != nil {
		return fmt.Errorf("trainer: %w", err)
	}
	return nil
}

// ListModels returns one page of owner's router models, newest first (by creation, which
// is the end of their training job), filtered by opts.Status (active, archived) and the
// creation-time window. A bad option is a *ValidationError naming it.
func (s *Service) ListModels(ctx context.Context, owner string, opts ListOptions) (ModelList, error) {
	states, err := statusFilter(opts.Status, ModelActive, ModelArchived)
	if err != nil {
		return ModelList{}, err
	}
	if err := s.modelsIndexed.Ensure(ctx, s.store, modelKind, store.RouterModels, func(e store.Entry) (store.OwnedRef, bool) {
		var m modelRecord
		if decodeJSON(e.Value, &m) != nil || m.ID != e.Key {
			return store.OwnedRef{}, false
		}
		return m.ref(), true
	}); err != nil {
		return ModelList{}, fmt.Errorf("trainer: %w", err)
	}
	items, next, err := store.ListOwned(ctx, s.store, opts.Query(modelKind, owner), func(id string) (ModelSummary, bool, error) {
		m, err := store.GetJSON[modelRecord](ctx, s.store, store.RouterModels, id)
		if errors.Is(err, store.ErrNotFound) {
			return ModelSummary{}, false, nil
		}
		if err != nil {
			return ModelSummary{}, false, err
		}
		if m.Owner != owner || (states != nil && !states[string(m.State)]) {
			return ModelSummary{}, false, nil
		}
		return m.summary(), true, nil
	})
	if err != nil {
		return ModelList{}, listError("router models", err)
	}
	return ModelList{Data: items, NextCursor: next}, nil
}

// DeleteJob deletes owner's training job record, with its uploaded dataset if it has one
// (SubmitUpload). A queued job is cancelled and deleted at
// once; a running one is cancelled, and DeleteJob waits (at most DeleteWait, and while ctx
// lasts) for it to stop before deleting it, so a job never outlives its delete and
// nothing it writes afterwards brings it back. Past DeleteWait it answers
// ErrStillRunning (the job stays, cancelled; retry the delete). The router model a
// completed job trained is a resource of its own and is kept (DeleteModel removes it).
// An unknown id, or another owner's, is ErrNotFound.
func (s *Service) DeleteJob(ctx context.Context, owner, jobID string) (Deletion, error) {
	if strings.TrimSpace(jobID) == "" {
		return Deletion{}, invalid("task_id", "is required")
	}
	cancelled := false
	wait := time.NewTimer(DeleteWait)
	defer wait.Stop()
	for {
		s.jobMu.Lock()
		j, err := s.getJob(ctx, jobID)
		if err == nil && j.Owner != owner {
			err = notFound("training job", jobID)
		}
		if err != nil {
			s.jobMu.Unlock()
			return Deletion{}, err
		}
		if done := s.runDone[j.ID]; j.State == StateRunning && done != nil {
			s.running[j.ID](errCancelled)
			s.jobMu.Unlock()
			cancelled = true
			select {
			case <-done:
				continue // read the outcome it wrote, then delete
			case <-ctx.Done():
				return Deletion{}, ctx.Err()
			case <-wait.C:
				return Deletion{}, fmt.Errorf("%w: training job %s was cancelled but has not stopped after %s; retry the delete", ErrStillRunning, j.ID, DeleteWait)
			}
		}
		if j.State == StateRunning && s.q != nil && !s.stale(&j) {
			// Running in another process: cancel it there and wait for its outcome.
			s.jobMu.Unlock()
			if !cancelled {
				if err := s.cancelElsewhere(ctx, &j); err != nil {
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
				return Deletion{}, fmt.Errorf("%w: training job %s was cancelled but has not stopped after %s; retry the delete", ErrStillRunning, j.ID, DeleteWait)
			}
		}
		// Queued, finished, or "running" in a record no live worker runs (the service is
		// not started, and Start would re-queue it; or, with a queue, its worker is dead).
		if j.State == StateQueued || j.State == StateRunning {
			cancelled = true
		}
		err = s.store.Update(ctx, func(tx store.Tx) error { return deleteJobTx(ctx, tx, &j) })
		if err == nil {
			s.mu.Lock()
			delete(s.pending, j.ID) // a queued job no longer counts; the worker skips it
			s.mu.Unlock()
		}
		s.jobMu.Unlock()
		if err != nil {
			return Deletion{}, fmt.Errorf("trainer: delete job %s: %w", j.ID, err)
		}
		s.log.Info("trainer: job deleted", "job", j.ID, "state", j.State)
		return Deletion{ID: j.ID, Object: jobKind, Deleted: true, Cancelled: cancelled}, nil
	}
}

// DeleteModel deletes owner's router model, active or archived: its record and weights in
// one transaction, then its decoded copy in the model cache. From then on it answers
// ErrNotFound everywhere (details, predictions, preference_id). The embedding cache is
// shared by content across models and is left alone. An unknown id, or another owner's,
// is ErrNotFound.
func (s *Service) DeleteModel(ctx context.Context, owner, modelID string) (Deletion, error) {
	if strings.TrimSpace(modelID) == "" {
		return Deletion{}, invalid("model_id", "is required")
	}
	err := s.store.Update(ctx, func(tx store.Tx) error {
		m, err := store.GetJSON[modelRecord](ctx, tx, store.RouterModels, modelID)
		if errors.Is(err, store.ErrNotFound) || (err == nil && m.Owner != owner) {
			return notFound("router model", modelID)
		}
		if err != nil {
			return err
		}
		return deleteModelTx(ctx, tx, &m)
	})
	if errors.Is(err, ErrNotFound) {
		return Deletion{}, err
	}
	if err != nil {
		return Deletion{}, fmt.Errorf("trainer: delete model %s: %w", modelID, err)
	}
	s.models.remove(modelID)
	s.log.Info("trainer: router model deleted", "model", modelID)
	return Deletion{ID: modelID, Object: modelKind, Deleted: true}, nil
}
