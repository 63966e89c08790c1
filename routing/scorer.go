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
	// SourceRouter: a trained custom router's probability.
	SourceRouter = "router"
)

// Scored is a candidate with its ranking score.
type Scored struct {
	// Candidate is the scored candidate.
	Candidate Candidate
	// Score is the expected quality in [0,1] (default scorer) or the router's probability
	// renormalised over the candidates it knows (custom router). Higher is better.
	Score float64
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
//  2. the built-in MMLU-Pro figure for the model (see [LookupBenchmark]; sources are named
//     in the table), else
//  3. UnknownQuality (default 0.5), marked SourceUnknown.
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
		q, src := unknown, SourceUnknown
		if v, ok := c.Attributes["quality"]; ok {
			if qv, err := qualityValue(v); err == nil {
				q, src = qv, SourceAttribute
			}
		} else if b, ok := LookupBenchmark(c.Name); ok && b.Quality > 0 {
			q, src = b.Quality, SourceBenchmark
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
		out[i] = Scored{Candidate: c, Score: math.Pow(q, exp), Source: src}
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
