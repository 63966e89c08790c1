package routing

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/switchyard-ai/switchyard/store"
)

// ModelProb is a trained router's view of one model for a text.
type ModelProb struct {
	// Model is a "provider/model" name the router was trained on.
	Model string
	// Prob is the router's ranking score in [0,1] (its prediction confidence).
	Prob float64
	// Quality is the estimated probability, 0-1, that Model answers the text well.
	Quality float64
}

// RouterEstimates is a trained router's answer for a list of texts.
type RouterEstimates struct {
	// Texts holds, per text, every model the router knows.
	Texts [][]ModelProb
	// Tolerance is the router's learned default tradeoff tolerance; 0 means it has none
	// and the selector's default applies.
	Tolerance float64
}

// CustomModels gives access to an owner's trained router models (the custom-router
// capability implements it; see the server wiring).
type CustomModels interface {
	// Rank returns, for each text, the scores and quality estimates of the model modelID of
	// owner for the models it was trained on. An unknown model id, or one of another
	// owner, returns an error matching ErrNotFound (or store.ErrNotFound).
	Rank(ctx context.Context, owner, modelID string, texts []string) (*RouterEstimates, error)
}

// CustomRouter ranks with a trained router model. The texts it asks the model about are the
// conversation's last user turn and, when there is more than one message, the whole
// rendered conversation; their scores and estimates are mixed w·x(last user) + (1−w)·x(all)
// with w = LastTurnWeight (default 0.7). Candidates the model knows (matched by
// "provider/model" name, case-insensitively, or by the model part for candidates named
// without a provider) are ranked first by the router's score (tier 0), with its quality
// estimates for the tradeoff; the others follow, ranked by Fallback (tier 1).
type CustomRouter struct {
	// Models loads and runs the owner's trained routers.
	Models CustomModels
	// Owner and ModelID select the trained router (the request's preference_id).
	Owner, ModelID string
	// Fallback ranks the candidates the router does not know; nil means DefaultScorer{}.
	Fallback Router
	// LastTurnWeight is w above; 0 means DefaultLastTurnWeight.
	LastTurnWeight float64

	// learned is the router's default tolerance, set by Rank.
	learned float64
}

// LearnedTolerance returns the trained router's default tradeoff tolerance seen by the
// last Rank (0 when it has none).
func (r *CustomRouter) LearnedTolerance() float64 { return r.learned }

// Rank implements Router.
func (r *CustomRouter) Rank(ctx context.Context, conv *Conversation, cands []Candidate) ([]Scored, error) {
	if r.Models == nil {
		return nil, &NotFoundError{Field: "preference_id", ID: r.ModelID, Err: errors.New("no custom router models are configured")}
	}
	texts := []string{conv.LastUser}
	if !conv.Single && conv.Text != conv.LastUser {
		texts = append(texts, conv.Text)
	}
	res, err := r.Models.Rank(ctx, r.Owner, r.ModelID, texts)
	if err != nil {
		if errors.Is(err, ErrNotFound) || errors.Is(err, store.ErrNotFound) {
			return nil, &NotFoundError{Field: "preference_id", ID: r.ModelID, Err: err}
		}
		return nil, fmt.Errorf("routing: custom router %q: %w", r.ModelID, err)
	}
	if res == nil || len(res.Texts) != len(texts) {
		return nil, fmt.Errorf("routing: custom router %q returned no result for each of %d texts", r.ModelID, len(texts))
	}
	r.learned = res.Tolerance
	w := r.LastTurnWeight
	if w <= 0 || w > 1 {
		w = DefaultLastTurnWeight
	}
	probs, quals := map[string]float64{}, map[string]float64{}
	byModelPart := map[string][]string{}
	for ti, list := range res.Texts {
		weight := 1.0
		if len(texts) > 1 {
			weight = w
			if ti == 1 {
				weight = 1 - w
			}
		}
		for _, mp := range list {
			k := strings.ToLower(mp.Model)
			if _, seen := probs[k]; !seen && ti == 0 {
				if _, m, ok := strings.Cut(k, "/"); ok {
					byModelPart[m] = append(byModelPart[m], k)
				}
			}
			probs[k] += weight * mp.Prob
			quals[k] += weight * mp.Quality
		}
	}
	var unknown []Candidate
	out := make([]Scored, 0, len(cands))
	for _, c := range cands {
		k := strings.ToLower(c.Name)
		p, ok := probs[k]
		if !ok && c.Provider == "" {
			if ks := byModelPart[strings.ToLower(c.Model)]; len(ks) == 1 {
				k = ks[0]
				p, ok = probs[k]
			}
		}
		if ok {
			out = append(out, Scored{Candidate: c, Score: p, Quality: quals[k], Source: SourceRouter})
		} else {
			unknown = append(unknown, c)
		}
	}
	sortScored(out)
	if len(unknown) > 0 {
		fb := r.Fallback
		if fb == nil {
			fb = DefaultScorer{}
		}
		rest, err := fb.Rank(ctx, conv, unknown)
		if err != nil {
			return nil, err
		}
		for _, s := range rest {
			s.Tier = 1
			out = append(out, s)
		}
	}
	return out, nil
}
