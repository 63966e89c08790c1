package routing

import (
	"context"
	"errors"
	"fmt"

	"github.com/switchyard-ai/switchyard/trainer"
)

// TrainerModels serves the router models trained by a trainer.Service (the custom-router
// capability) as CustomModels, so a training job's model_id can be used as preference_id.
// An unknown, archived or other owner's model is ErrNotFound.
func TrainerModels(svc *trainer.Service) CustomModels { return trainerModels{svc} }

type trainerModels struct{ svc *trainer.Service }

func (t trainerModels) Rank(ctx context.Context, owner, modelID string, texts []string) ([][]ModelProb, error) {
	res, err := t.svc.Predict(ctx, owner, modelID, texts)
	if errors.Is(err, trainer.ErrNotFound) {
		return nil, fmt.Errorf("%w: %w", ErrNotFound, err)
	}
	if err != nil {
		return nil, err
	}
	out := make([][]ModelProb, len(res.Predictions))
	for i, p := range res.Predictions {
		out[i] = make([]ModelProb, len(p.Models))
		for j, m := range p.Models {
			out[i][j] = ModelProb{Model: m.Model, Prob: m.Confidence}
		}
	}
	return out, nil
}
