package routing

import (
	"context"
	"errors"
	"fmt"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/trainer"
)

// TrainerModels serves the router models trained by a trainer.Service (the custom-router
// capability) as CustomModels, so a training job's model_id can be used as preference_id.
// An unknown, archived or other owner's model is ErrNotFound.
func TrainerModels(svc *trainer.Service) CustomModels { return trainerModels{svc} }

type trainerModels struct{ svc *trainer.Service }

func (t trainerModels) Rank(ctx context.Context, owner, modelID string, texts []string) (*RouterEstimates, error) {
	res, err := t.svc.Estimate(ctx, owner, modelID, texts)
	if errors.Is(err, trainer.ErrNotFound) {
		return nil, fmt.Errorf("%w: %w", ErrNotFound, err)
	}
	if err != nil {
		return nil, err
	}
	return &RouterEstimates{Texts: fromRanked(res.Rankings), Tolerance: res.Tolerance}, nil
}

// CheckModel implements ModelChecker: the owner's router model is described (no weights
// loaded); an unknown, archived or other owner's model is ErrNotFound.
func (t trainerModels) CheckModel(ctx context.Context, owner, modelID string) error {
	d, err := t.svc.Model(ctx, owner, modelID)
	if errors.Is(err, trainer.ErrNotFound) {
		return fmt.Errorf("%w: %w", ErrNotFound, err)
	}
	if err != nil {
		return err
	}
	if d.Status != trainer.ModelActive {
		return fmt.Errorf("%w: router model %s is %s", ErrNotFound, modelID, d.Status)
	}
	return nil
}

// JobModel implements TrainingJobModels: the model id of the owner's job once it
// completed, "" before or when it failed. A job record deleted after it completed still
// answers the router model it trained (trainer.Service.DeleteJob keeps the model, whose
// record names its training job); a job that is gone without one is ErrNotFound.
func (t trainerModels) JobModel(ctx context.Context, owner, jobID string) (string, error) {
	return t.jobModelIndexed(ctx, owner, jobID, nil)
}

// jobModelIndexed implements jobModelIndexer: JobModel, finding a job whose record is gone
// in byJob's answer (nil: among the owner's models, paged for this job alone).
func (t trainerModels) jobModelIndexed(ctx context.Context, owner, jobID string, byJob func() (map[string]string, error)) (string, error) {
	st, err := t.svc.Status(ctx, owner, jobID)
	if errors.Is(err, trainer.ErrNotFound) {
		var id string
		var lerr error
		if byJob == nil {
			id, lerr = t.modelOfJob(ctx, owner, jobID)
		} else {
			var index map[string]string
			index, lerr = byJob()
			id = index[jobID]
		}
		if lerr != nil || id != "" {
			return id, lerr
		}
		return "", fmt.Errorf("%w: %w", ErrNotFound, err)
	}
	if err != nil {
		return "", err
	}
	if st.Status != trainer.StateCompleted {
		return "", nil
	}
	return st.ModelID, nil
}

// modelsByJob implements jobModelIndexer: the owner's router models by the training job
// that trained them, paged once (the newest model of a job, as modelOfJob finds it).
func (t trainerModels) modelsByJob(ctx context.Context, owner string) (map[string]string, error) {
	out := map[string]string{}
	opts := trainer.ListOptions{Limit: store.MaxPageLimit}
	for {
		page, err := t.svc.ListModels(ctx, owner, opts)
		if err != nil {
			return nil, fmt.Errorf("routing: router models by training job: %w", err)
		}
		for _, m := range page.Data {
			if _, seen := out[m.TrainingJobID]; !seen && m.TrainingJobID != "" {
				out[m.TrainingJobID] = m.ModelID
			}
		}
		if page.NextCursor == "" {
			return out, nil
		}
		opts.Cursor = page.NextCursor
	}
}

// modelOfJob finds the owner's router model trained by jobID among its models; "" when
// none was.
func (t trainerModels) modelOfJob(ctx context.Context, owner, jobID string) (string, error) {
	opts := trainer.ListOptions{Limit: store.MaxPageLimit}
	for {
		page, err := t.svc.ListModels(ctx, owner, opts)
		if err != nil {
			return "", fmt.Errorf("routing: router model of training job %s: %w", jobID, err)
		}
		for _, m := range page.Data {
			if m.TrainingJobID == jobID {
				return m.ModelID, nil
			}
		}
		if page.NextCursor == "" {
			return "", nil
		}
		opts.Cursor = page.NextCursor
	}
}
