package routing

import (
	"context"
	"fmt"
	"sync"

	"github.com/switchyard-ai/switchyard/inference"
)

// LocalModels is a CustomModels over trained inference models held in memory, for
// library users who train with inference.Fit themselves (the server uses the trainer's
// stored models instead). The zero value is ready to use and safe for concurrent use.
type LocalModels struct {
	mu     sync.RWMutex
	models map[[2]string]*inference.Model
}

// Add makes m available to owner as modelID (replacing any model under that id).
func (l *LocalModels) Add(owner, modelID string, m *inference.Model) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.models == nil {
		l.models = map[[2]string]*inference.Model{}
	}
	l.models[[2]string{owner, modelID}] = m
}

// Remove forgets owner's modelID.
func (l *LocalModels) Remove(owner, modelID string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.models, [2]string{owner, modelID})
}

// Rank implements CustomModels; an id owner did not Add is ErrNotFound.
func (l *LocalModels) Rank(ctx context.Context, owner, modelID string, texts []string) (*RouterEstimates, error) {
	l.mu.RLock()
	m, ok := l.models[[2]string{owner, modelID}]
	l.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("%w: router model %q", ErrNotFound, modelID)
	}
	res, err := m.Predict(ctx, texts)
	if err != nil {
		return nil, err
	}
	return &RouterEstimates{Texts: fromRanked(res)}, nil
}

// fromRanked converts inference rankings to ModelProb lists.
func fromRanked(res [][]inference.Ranked) [][]ModelProb {
	out := make([][]ModelProb, len(res))
	for i, rk := range res {
		out[i] = make([]ModelProb, len(rk))
		for j, r := range rk {
			out[i][j] = ModelProb{Model: r.Model, Prob: r.Prob, Quality: r.Quality}
		}
	}
	return out
}
