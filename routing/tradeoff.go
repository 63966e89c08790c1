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
	cost := func(c Candidate) (float64, bool) { return tradeoffCost(c, tradeoff, cat) }
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

// Why a cost or latency tradeoff left the router's order as it was
// (Response.TradeoffFallback).
const (
	// TradeoffNoLatencyData: tradeoff latency, but no candidate had a latency — none was
	// given in the request, reported for the preference (POST /api/v1/feedback/latency)
	// or measured by this server's gateway — so the quality order decides.
	TradeoffNoLatencyData = "no_latency_data"
	// TradeoffNoPriceData: tradeoff cost, but no candidate had a price — none was given in
	// the request (price, input_price/output_price) or found in the price catalogue — so
	// the quality order decides.
	TradeoffNoPriceData = "no_price_data"
)

// tradeoffCost is what the tradeoff minimises for c: its latency (as the ranking filled
// it in) or its price; false when unknown.
func tradeoffCost(c Candidate, tradeoff string, cat Catalog) (float64, bool) {
	if tradeoff == "latency" {
		if c.Latency != nil {
			return *c.Latency, true
		}
		return 0, false
	}
	return priceOf(c, cat)
}

// tradeoffFallback says why the tradeoff could not reorder ranked: TradeoffNoLatencyData
// or TradeoffNoPriceData when none of its candidates has the figure it compares (the
// router's order stands), "" when it had some, or without a tradeoff or a choice.
func tradeoffFallback(ranked []Scored, tradeoff string, cat Catalog) string {
	if tradeoff == "" || len(ranked) < 2 {
		return ""
	}
	for _, s := range ranked {
		if _, ok := tradeoffCost(s.Candidate, tradeoff, cat); ok {
			return ""
		}
	}
	if tradeoff == "latency" {
		return TradeoffNoLatencyData
	}
	return TradeoffNoPriceData
}
