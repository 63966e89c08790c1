package trainer

import (
	"context"
	"fmt"

	"github.com/switchyard-ai/switchyard/store"
)

// ModelStates returns the state (active or archived) of each of owner's router models
// among ids, by id; an unknown or removed id, or another owner's model, is absent. The
// models are read together (store.GetMany: one query on PostgreSQL), for a listing that
// names many (a page of preferences, each following a router).
func (s *Service) ModelStates(ctx context.Context, owner string, ids []string) (map[string]ModelState, error) {
	recs, err := store.GetManyJSON[modelRecord](ctx, s.store, store.RouterModels, ids)
	if err != nil {
		return nil, fmt.Errorf("trainer: read %d router models: %w", len(ids), err)
	}
	out := make(map[string]ModelState, len(recs))
	for id, m := range recs {
		if m.Owner == owner {
			out[id] = m.State
		}
	}
	return out, nil
}

// JobStatuses returns the status of each of owner's training jobs among ids, by id, as
// Status answers it; an unknown or deleted id, or another owner's job, is absent. The
// jobs are read together, as ModelStates reads models.
func (s *Service) JobStatuses(ctx context.Context, owner string, ids []string) (map[string]JobStatus, error) {
	recs, err := store.GetManyJSON[jobRecord](ctx, s.store, store.TrainingJobs, ids)
	if err != nil {
		return nil, fmt.Errorf("trainer: read %d training jobs: %w", len(ids), err)
	}
	out := make(map[string]JobStatus, len(recs))
	for id, j := range recs {
		if j.Owner == owner {
			out[id] = j.status(s.version)
		}
	}
	return out, nil
}
