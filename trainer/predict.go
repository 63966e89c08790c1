package trainer

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/switchyard-ai/switchyard/inference"
	"github.com/switchyard-ai/switchyard/store"
)

// touchEvery is how stale last_used_at may get before Predict writes it again; it keeps
// predictions from writing to the store on every call while staying far finer than the
// one-year archiving horizon.
const touchEvery = time.Hour

// Predict ranks the candidate models for each input with owner's router modelID, one
// prediction per input in input order. inputs must hold 1..MaxInputs non-empty strings
// (a *ValidationError naming inputs or inputs[i] otherwise). An unknown model, or another
// owner's, is ErrNotFound; an archived one is ErrArchived (which matches ErrNotFound).
func (s *Service) Predict(ctx context.Context, owner, modelID string, inputs []string) (PredictResponse, error) {
	est, err := s.Estimate(ctx, owner, modelID, inputs)
	if err != nil {
		return PredictResponse{}, err
	}
	out := PredictResponse{Predictions: make([]Prediction, len(est.Rankings)), Version: est.Version}
	for i, rk := range est.Rankings {
		p := Prediction{Models: make([]RankedModel, len(rk))}
		for k, r := range rk {
			p.Models[k] = RankedModel{Model: r.Model, Confidence: r.Prob, Rank: k + 1}
		}
		if len(rk) > 0 {
			p.TopModel, p.TopProb = rk[0].Model, rk[0].Prob
		}
		out.Predictions[i] = p
	}
	return out, nil
}

// Estimates are a router's rankings with per-model quality estimates, for model selection.
type Estimates struct {
	// Rankings holds one ranked list per input: Prob is the ranking score (a prediction's
	// confidence), Quality the estimated probability that the model answers well.
	Rankings [][]inference.Ranked
	// Tolerance is the router's default tradeoff tolerance (TradeoffDetails); 0 for a
	// router trained before it was measured.
	Tolerance float64
	// Version is the router's version label.
	Version string
}

// Estimate is Predict with the quality estimates and the router's default tradeoff
// tolerance; the same rules and errors apply.
func (s *Service) Estimate(ctx context.Context, owner, modelID string, inputs []string) (Estimates, error) {
	if strings.TrimSpace(modelID) == "" {
		return Estimates{}, invalid("model_id", "is required")
	}
	if err := checkInputs(inputs); err != nil {
		return Estimates{}, err
	}
	rec, err := s.getModel(ctx, owner, modelID)
	if err != nil {
		return Estimates{}, err
	}
	if rec.State != ModelActive {
		return Estimates{}, &archivedError{modelID: modelID}
	}
	model, release, err := s.loadModel(ctx, modelID)
	if err != nil {
		return Estimates{}, err
	}
	defer release()
	ranked, err := model.Predict(ctx, inputs)
	if err != nil {
		if errors.Is(err, inference.ErrInvalid) {
			return Estimates{}, invalid("inputs", "%v", err)
		}
		return Estimates{}, fmt.Errorf("trainer: predict with %s: %w", modelID, err)
	}
	out := Estimates{Rankings: ranked, Version: rec.Version}
	if rec.Tradeoff != nil {
		out.Tolerance = rec.Tradeoff.DefaultTolerance
	}
	if now := s.now(); now.Sub(rec.LastUsedAt) >= touchEvery {
		if err := s.touch(ctx, modelID, now); err != nil {
			s.log.Warn("trainer: record model use", "model", modelID, "err", err)
		}
	}
	return out, nil
}

func checkInputs(inputs []string) error {
	if len(inputs) == 0 {
		return invalid("inputs", "must hold at least one input")
	}
	if len(inputs) > MaxInputs {
		return invalid("inputs", "must hold at most %d inputs per request, got %d; split larger sets", MaxInputs, len(inputs))
	}
	for i, in := range inputs {
		if strings.TrimSpace(in) == "" {
			return invalid(fmt.Sprintf("inputs[%d]", i), "must not be empty")
		}
	}
	return nil
}

// loadModel returns the decoded router, from the cache or the store.
func (s *Service) loadModel(ctx context.Context, id string) (*inference.Model, func(), error) {
	if m, release, ok := s.models.acquire(id); ok {
		return m, release, nil
	}
	data, err := s.store.Get(ctx, store.RouterWeights, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, notFound("router model weights", id)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("trainer: read weights of %s: %w", id, err)
	}
	m, err := inference.LoadModel(data, inference.LoadOptions{ONNXModelDir: s.onnxDir})
	if err != nil {
		return nil, nil, fmt.Errorf("trainer: decode router model %s: %w", id, err)
	}
	m, release := s.models.add(id, m)
	return m, release, nil
}

// touch records that modelID was used at now.
func (s *Service) touch(ctx context.Context, id string, now time.Time) error {
	return s.store.Update(ctx, func(tx store.Tx) error {
		m, err := store.GetJSON[modelRecord](ctx, tx, store.RouterModels, id)
		if err != nil {
			return err
		}
		if m.State != ModelActive || !now.After(m.LastUsedAt) {
			return nil
		}
		m.LastUsedAt = now
		return store.PutJSON(ctx, tx, store.RouterModels, id, m)
	})
}
