package routing

import "math"

// DefaultTolerance is the cost/latency tradeoff's quality tolerance (points of estimated
// probability of a good answer) when neither the request nor the router sets one.
const DefaultTolerance = 0.05

// applyTradeoff reorders ranked (best first) by the Pareto rule: position 1 goes to the
// cheapest (or fastest) candidate of the best tier whose estimated quality is at least the
// tier's best estimate minus tol (an absolute tolerance in quality points); the rule is
// then applied again to the remaining candidates for position 2, and so on. A candidate
// without a known price (latency) is never preferred to one with a known price (latency);
// among equal costs the higher estimate wins; when no eligible candidate has a known cost
// the best-ranked one is taken. Without tradeoff the list is the router's order.
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
			tier = min(tier, s.Tier)
		}
		for _, s := range rest {
			if s.Tier == tier {
				best = max(best, s.Quality)
			}
		}
		pick, pickCost, pickKnown := -1, 0.0, false
		for i, s := range rest {
			if s.Tier != tier || s.Quality < best-tol-1e-12 {
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
			case known == pickKnown && (!known || c == pickCost) && s.Quality > rest[pick].Quality:
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
