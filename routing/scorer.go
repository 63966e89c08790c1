package routing

import (
	"context"
	"math"
	"sort"
)

// Where a candidate's score came from.
const (
	// SourceAttribute: the caller's "quality" attribute.
	SourceAttribute = "attribute"
	// SourceBenchmark: the built-in table of public benchmark figures.
	SourceBenchmark = "benchmark"
	// SourceUnknown: no prior known; DefaultScorer.UnknownQuality was used.
	SourceUnknown = "unknown"
	// SourceRouter: a trained custom router's estimate.
	SourceRouter = "router"
	// SourceLearned: the learned default router's estimate (embedded in the binary).
	SourceLearned = "learned"
	// SourceLearnedRelative: the learned default router's estimate for the candidate's
	// nearest measured relative (named in EstimatedFrom).
	SourceLearnedRelative = "learned_relative"
	// SourceDefault: not ranked; the request's default, answered because the selection
	// could not finish (its timeout passed or a router failed).
	SourceDefault = "default"
	// SourceDefaultReplaced: not ranked by the router; the selection could not finish and
	// the request's default cannot take the request (the tools or context_length filters
	// removed it), so the remaining candidate with the best prior ([DefaultScorer])
	// answered instead.
	SourceDefaultReplaced = "default_replaced"
)

// Why a selection under a pref_ preference did not rank with the router the preference
// follows (Response.RouterFallback).
const (
	// FallbackRouterDeleted: the preference's trained router model (its router_model_id,
	// or the one its training job trained) was deleted; the learned default router ranked
	// (score_source learned) as for a preference with no router yet.
	FallbackRouterDeleted = "router_deleted"
	// FallbackTrainingJobDeleted: the training job the preference follows was deleted
	// before it trained a router; the router the preference had before ranked (score_source
	// router), else the learned default router.
	FallbackTrainingJobDeleted = "training_job_deleted"
)

// Scored is a candidate with its ranking score.
type Scored struct {
	// Candidate is the scored candidate.
	Candidate Candidate
	// Score is what the candidates are ranked by, higher is better: the estimated quality
	// (default scorer, learned default router, and custom routers that rank by their
	// quality heads) or a custom router's ranking score (its softmax probability, or a
	// blend, when that ranked better on its validation split).
	Score float64
	// Quality is the estimated probability, 0-1, that the candidate answers well; the
	// cost/latency tradeoff compares it across candidates.
	Quality float64
	// EstimatedFrom names the measured model whose estimate a candidate borrowed (a
	// nearest relative in the learned default router's data), or is empty.
	EstimatedFrom string
	// Source is one of SourceAttribute, SourceBenchmark, SourceUnknown, SourceRouter.
	Source string
	// Tier orders groups of scores that are not comparable: tier 0 (a custom router's known
	// candidates, or every candidate of the default scorer) ranks before tier 1 (candidates
	// a custom router does not know, scored by the default scorer).
	Tier int
}

// Router scores candidates for a conversation. Rank returns every candidate exactly once,
// best first.
type Router interface {
	Rank(ctx context.Context, conv *Conversation, cands []Candidate) ([]Scored, error)
}

// DefaultUnknownQuality is the prior given to a candidate with no quality attribute and no
// built-in figure.
const DefaultUnknownQuality = 0.5

// DefaultScorer is the scorer used without a preference_id. Its zero value is ready to use.
//
// For each candidate it takes a quality prior q in [0,1]:
//  1. the candidate's "quality" attribute (0-1, or 0-100 read as percent), else
//  2. the built-in MMLU-Pro figure for the model, published or estimated from its GPQA
//     Diamond figure (see [LookupBenchmark]; sources are named in the table), else
//  3. the figure of its newest older sibling in the table ([LookupBenchmarkRelative]:
//     claude-opus-4-6 gets claude-opus-4-1's), marked SourceBenchmarkRelative with
//     EstimatedFrom naming it, else
//  4. UnknownQuality (default 0.5), marked SourceUnknown.
//
// Domain attributes shift the prior towards the conversation's domain:
// q' = q + Code·(quality_code − q) + Math·(quality_math − q) for the attributes that are
// present, clamped to [0,1] (Code and Math are the [Features] signals).
//
// The conversation's difficulty d (see [Features.Difficulty]: length, code, math, tools,
// turns) then sets the expected quality E = q'^(0.5 + 1.5·d). The exponent is monotone, so
// without domain attributes the order is the order of the priors; what d changes is the
// size of the gaps: easy conversations (d near 0) compress the scores towards 1, so a
// cost or latency tradeoff more readily picks a cheaper model; hard ones (code, math, long,
// tools) widen them, so the tradeoff keeps the stronger model. Ties keep request order.
type DefaultScorer struct {
	// UnknownQuality is the prior of a candidate with no known quality; 0 means 0.5.
	UnknownQuality float64
}

// Rank implements Router.
func (s DefaultScorer) Rank(_ context.Context, conv *Conversation, cands []Candidate) ([]Scored, error) {
	unknown := s.UnknownQuality
	if unknown <= 0 {
		unknown = DefaultUnknownQuality
	}
	var f Features
	if conv != nil {
		f = conv.Features
	}
	exp := 0.5 + 1.5*f.Difficulty()
	out := make([]Scored, len(cands))
	for i, c := range cands {
		q, src, from := unknown, SourceUnknown, ""
		if v, ok := c.Attributes["quality"]; ok {
			if qv, err := qualityValue(v); err == nil {
				q, src = qv, SourceAttribute
			}
		} else if c.IsCustom {
			// the caller's own model: a table figure for a same-named public model says nothing
		} else if b, ok := LookupBenchmark(c.Name); ok && b.Quality > 0 {
			q, src = b.Quality, SourceBenchmark
		} else if rel, b, ok := LookupBenchmarkRelative(c.Name); ok {
			q, src, from = b.Quality, SourceBenchmarkRelative, rel
		}
		base := q
		if v, ok := c.Attributes["quality_code"]; ok {
			if qc, err := qualityValue(v); err == nil {
				q += f.Code * (qc - base)
			}
		}
		if v, ok := c.Attributes["quality_math"]; ok {
			if qm, err := qualityValue(v); err == nil {
				q += f.Math * (qm - base)
			}
		}
		q = math.Max(0, math.Min(1, q))
		e := math.Pow(q, exp)
		out[i] = Scored{Candidate: c, Score: e, Quality: e, Source: src, EstimatedFrom: from}
	}
	sortScored(out)
	return out, nil
}

// sortScored orders by tier, then score descending, keeping the input order on ties.
func sortScored(s []Scored) {
	sort.SliceStable(s, func(i, j int) bool {
		if s[i].Tier != s[j].Tier {
			return s[i].Tier < s[j].Tier
		}
		return s[i].Score > s[j].Score
	})
}
