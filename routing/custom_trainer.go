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
	st, err := t.svc.Status(ctx, owner, jobID)
	if errors.Is(err, trainer.ErrNotFound) {
		if id, lerr := t.modelOfJob(ctx, owner, jobID); lerr != nil || id != "" {
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
