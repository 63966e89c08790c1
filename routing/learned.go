package routing

import (
	"cmp"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/switchyard-ai/switchyard/inference"
	"github.com/switchyard-ai/switchyard/routing/internal/modelid"
)

// The learned default router, built by routing/internal/buildrouter from public per-prompt
// evaluation data (see router.json for sources, split, classes, prices and held-out
// figures).
var (
	//go:embed defaultrouter/router.bin
	learnedModelBytes []byte
	//go:embed defaultrouter/router.json
	learnedMetaBytes []byte
)

// LearnedModel is one model the learned default router has measured estimates for.
type LearnedModel struct {
	// ID is the router's name for the model ("openai/gpt-4o").
	ID string `json:"id"`
	// Key is the normalised id candidates are matched by ("gpt-4o").
	Key string `json:"key"`
	// MeasuredAs are the ids the evaluation data used for it.
	MeasuredAs []string `json:"measured_as"`
	// Rows is how many training prompts measured it; Sources names the data sets.
	Rows    int      `json:"rows"`
	Sources []string `json:"sources"`
}

type learnedMeta struct {
	Classes          []LearnedModel `json:"classes"`
	DefaultTolerance float64        `json:"default_tolerance"`
}

// LearnedRouter is the learned default router: per-model quality heads (n-gram TF-IDF
// features, one logistic regression per model) trained on about 17,500 public prompts with
// per-model scores, shipped inside the binary. It is what model selection uses without a
// preference_id. It is immutable and safe for concurrent use.
//
// A candidate is matched to a measured model by its normalised id (provider prefixes,
// dates, version stamps and -latest dropped: "openai/gpt-4o-2024-08-06" and "gpt-4o" are
// both "gpt-4o"), scored SourceLearned; failing that, by its nearest measured relative
// (serving-variant suffixes such as -turbo or -instruct dropped or added), scored
// SourceLearnedRelative with EstimatedFrom naming the relative. A candidate with an
// explicit "quality" attribute, or that no measured model matches, is scored by the prior
// of [DefaultScorer]; when some candidates have both a learned estimate and a built-in
// benchmark prior, the prior-scored ones are rescaled by the ratio of the learned
// estimates to those priors on this prompt, so that an unmeasured model is compared on the
// same footing (a hard prompt lowers everyone's estimate). Every candidate is in tier 0.
type LearnedRouter struct {
	model *inference.Model
	meta  learnedMeta
	byKey map[string]string // normalised key → class id
	// Prior scores the candidates the router has not measured; the zero value is used.
	Prior DefaultScorer
	// LastTurnWeight mixes the estimates of the last user turn and of the whole
	// conversation, as in CustomRouter; 0 means DefaultLastTurnWeight.
	LastTurnWeight float64
}

var learnedOnce = sync.OnceValues(func() (*LearnedRouter, error) {
	return LoadLearnedRouter(learnedModelBytes, learnedMetaBytes)
})

// DefaultRouter returns the learned default router embedded in the binary, decoding it on
// first use (about 6 MiB; its weights are stored as half-precision floats).
func DefaultRouter() (*LearnedRouter, error) { return learnedOnce() }

// LoadLearnedRouter decodes a router written by routing/internal/buildrouter
// (router.bin, router.json).
func LoadLearnedRouter(modelBytes, metaJSON []byte) (*LearnedRouter, error) {
	m, err := inference.LoadModel(modelBytes, inference.LoadOptions{})
	if err != nil {
		return nil, fmt.Errorf("routing: learned default router: %w", err)
	}
	if m.Quality() == nil {
		return nil, fmt.Errorf("routing: learned default router has no quality heads")
	}
	var meta learnedMeta
	if err := json.Unmarshal(metaJSON, &meta); err != nil {
		return nil, fmt.Errorf("routing: learned default router metadata: %w", err)
	}
	l := &LearnedRouter{model: m, meta: meta, byKey: map[string]string{}}
	known := map[string]bool{}
	for _, c := range m.Classes() {
		known[c] = true
	}
	for _, c := range meta.Classes {
		if !known[c.ID] {
			return nil, fmt.Errorf("routing: learned default router metadata names %q, which the model lacks", c.ID)
		}
		l.byKey[c.Key] = c.ID
	}
	return l, nil
}

// Models lists the models the router has measured estimates for.
func (l *LearnedRouter) Models() []LearnedModel {
	return append([]LearnedModel(nil), l.meta.Classes...)
}

// LearnedTolerance returns the tradeoff tolerance chosen when the router was built: the
// largest whose validation mean score stayed within one point of the no-tradeoff score.
func (l *LearnedRouter) LearnedTolerance() float64 { return l.meta.DefaultTolerance }

// Tasks returns the task labels of the evaluation data the router recognises (such as
// "zeroeval/gsm8k") and the weight λ of their per-model mean scores in its estimates
// (estimate = (1−λ)·head + λ·task prior); nil and 0 for a router built without them.
func (l *LearnedRouter) Tasks() ([]string, float64) { return l.model.Quality().Tasks() }

// Match returns the measured model a candidate name is estimated from and whether it is
// the model itself (false: its nearest relative); ok is false when none matches.
func (l *LearnedRouter) Match(name string) (id string, exact, ok bool) {
	k := modelid.Key(name)
	if id, ok := l.byKey[k]; ok {
		return id, true, true
	}
	for _, r := range modelid.Relatives(k) {
		if id, ok := l.byKey[r]; ok {
			return id, false, true
		}
	}
	return "", false, false
}

// learnedMatch is the measured model a candidate is estimated from ("" for none).
type learnedMatch struct {
	id    string
	exact bool
}

// Rank implements Router.
func (l *LearnedRouter) Rank(ctx context.Context, conv *Conversation, cands []Candidate) ([]Scored, error) {
	out, _, err := l.rank(ctx, conv, cands, 0)
	return out, err
}

// TaskWeight is one task of the learned default router's task head (see
// [LearnedRouter.Tasks]) and its probability for a conversation.
type TaskWeight struct {
	// Task is the task label, e.g. "zeroeval/gsm8k".
	Task string `json:"task"`
	// P is the head's probability of the task, mixed over the last user turn and the whole
	// conversation as the estimates are.
	P float64 `json:"p"`
}

// RankTasks is Rank that also returns the top tasks (at most top, most probable first)
// the conversation resembles, from the same features; nil when the router has no task
// head. It always runs the router, even when no candidate is one of its models.
func (l *LearnedRouter) RankTasks(ctx context.Context, conv *Conversation, cands []Candidate, top int) ([]Scored, []TaskWeight, error) {
	return l.rank(ctx, conv, cands, max(top, 1))
}

func (l *LearnedRouter) rank(ctx context.Context, conv *Conversation, cands []Candidate, topTasks int) ([]Scored, []TaskWeight, error) {
	if conv == nil {
		conv = &Conversation{Single: true}
	}
	matched := make([]learnedMatch, len(cands))
	anyMatched := false
	for i, c := range cands {
		if _, hasQuality := c.Attributes["quality"]; hasQuality || c.IsCustom {
			continue
		}
		if id, exact, ok := l.Match(c.Name); ok {
			matched[i] = learnedMatch{id, exact}
			anyMatched = true
		}
	}
	est := map[string]float64{}
	var tasks []TaskWeight
	if anyMatched || topTasks > 0 {
		texts := []string{conv.LastUser}
		if !conv.Single && conv.Text != conv.LastUser {
			texts = append(texts, conv.Text)
		}
		preds, taskProbs, err := l.model.PredictTasks(ctx, texts)
		if err != nil {
			return nil, nil, fmt.Errorf("routing: learned default router: %w", err)
		}
		w := l.LastTurnWeight
		if w <= 0 || w > 1 {
			w = DefaultLastTurnWeight
		}
		var mixed []float64
		for ti, p := range preds {
			weight := 1.0
			if len(preds) > 1 {
				weight = w
				if ti == 1 {
					weight = 1 - w
				}
			}
			for _, r := range p {
				est[r.Model] += weight * r.Quality
			}
			if topTasks > 0 && taskProbs != nil {
				if mixed == nil {
					mixed = make([]float64, len(taskProbs[ti]))
				}
				for j, pr := range taskProbs[ti] {
					mixed[j] += weight * pr
				}
			}
		}
		if mixed != nil {
			tasks = topTaskWeights(l.model.Quality(), mixed, topTasks)
		}
	}
	out := make([]Scored, len(cands))
	var priorIdx []int
	var priorCands []Candidate
	for i, c := range cands {
		m := matched[i]
		if m.id == "" {
			priorIdx = append(priorIdx, i)
			priorCands = append(priorCands, c)
			continue
		}
		s := Scored{Candidate: c, Score: est[m.id], Quality: est[m.id], Source: SourceLearned}
		if !m.exact {
			s.Source = SourceLearnedRelative
		}
		if !m.exact || !strings.EqualFold(c.Name, m.id) {
			s.EstimatedFrom = m.id
		}
		out[i] = s
	}
	if len(priorCands) > 0 {
		prior, err := l.Prior.Rank(ctx, conv, priorCands)
		if err != nil {
			return nil, nil, err
		}
		scale := l.priorScale(ctx, conv, cands, matched, est)
		byName := map[string]Scored{}
		for _, p := range prior {
			byName[p.Candidate.Name] = p
		}
		for k, i := range priorIdx {
			p := byName[priorCands[k].Name]
			q := math.Min(1, p.Score*scale)
			p.Score, p.Quality = q, q
			out[i] = p
		}
	}
	sortScored(out)
	return out, tasks, nil
}

// topTaskWeights returns the top most probable tasks of probs (in the order of q.Tasks()),
// most probable first, ties by name.
func topTaskWeights(q *inference.QualityHeads, probs []float64, top int) []TaskWeight {
	names, _ := q.Tasks()
	if len(names) != len(probs) {
		return nil
	}
	out := make([]TaskWeight, len(names))
	for i, n := range names {
		out[i] = TaskWeight{Task: n, P: probs[i]}
	}
	slices.SortFunc(out, func(a, b TaskWeight) int {
		if c := cmp.Compare(b.P, a.P); c != 0 {
			return c
		}
		return strings.Compare(a.Task, b.Task)
	})
	return out[:min(top, len(out))]
}

// priorScale is the ratio of the learned estimates to the benchmark priors of the
// candidates that have both (1 when none has both).
func (l *LearnedRouter) priorScale(ctx context.Context, conv *Conversation, cands []Candidate, matched []learnedMatch, est map[string]float64) float64 {
	var anchors []Candidate
	var learned float64
	for i, c := range cands {
		if matched[i].id == "" {
			continue
		}
		if b, ok := LookupBenchmark(c.Name); ok && b.Quality > 0 {
			anchors = append(anchors, Candidate{Name: c.Name})
			learned += est[matched[i].id]
		}
	}
	if len(anchors) == 0 {
		return 1
	}
	prior, err := l.Prior.Rank(ctx, conv, anchors)
	if err != nil {
		return 1
	}
	var p float64
	for _, s := range prior {
		p += s.Score
	}
	if p <= 0 || learned <= 0 {
		return 1
	}
	return learned / p
}
