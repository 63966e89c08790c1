package routing

import "math"

// DefaultTolerance is the default quality tolerance of the cost/latency tradeoff.
const DefaultTolerance = 0.05

// applyTradeoff reorders ranked (best first) by the Pareto rule of [Options.Tolerance]:
// position 1 goes to the cheapest (or fastest) candidate whose score is at least
// best·(1 − tol), best being the highest score of the best tier (a relative tolerance, so it
// means the same for expected qualities and for router probabilities); the rule is then applied again to the remaining candidates
// for position 2, and so on. A candidate without a known price (latency) is never preferred
// to one with a known price (latency); among equal costs the higher score wins; when no
// eligible candidate has a known cost the best-scored one is taken.
func applyTradeoff(ranked []Scored, tradeoff string, tol float64, cat Catalog) []Scored {
	if tradeoff == "" || len(ranked) < 2 {
		return ranked
	}
	cost := func(c Candidate) (float64, bool) {
		if tradeoff == "latency" {
			if c.Latency != nil {
				return *c.Latency, true
			}
			return 0, false
		}
		return priceOf(c, cat)
	}
	rest := append([]Scored(nil), ranked...)
	out := make([]Scored, 0, len(ranked))
	for len(rest) > 0 {
		tier, best := rest[0].Tier, math.Inf(-1)
		for _, s := range rest {
			if s.Tier < tier {
				tier = s.Tier
			}
		}
		for _, s := range rest {
			if s.Tier == tier && s.Score > best {
				best = s.Score
			}
		}
		pick, pickCost, pickKnown := -1, 0.0, false
		for i, s := range rest {
			if s.Tier != tier || s.Score < best*(1-tol)-1e-12 {
				continue
			}
			c, known := cost(s.Candidate)
			better := false
			switch {
			case pick < 0:
				better = true
			case known && !pickKnown:
				better = true
			case known && pickKnown && c < pickCost:
				better = true
			case known == pickKnown && (!known || c == pickCost) && s.Score > rest[pick].Score:
				better = true
			}
			if better {
				pick, pickCost, pickKnown = i, c, known
			}
		}
		out = append(out, rest[pick])
		rest = append(rest[:pick], rest[pick+1:]...)
	}
	return out
}
