package inference

import "math"

// TradeoffPick returns the option a cost (or latency) tradeoff picks: the cheapest option
// whose estimated quality is at least the best estimate minus tol (quality points, 0-1).
// cost[i] is NaN when unknown; an unknown cost is never preferred to a known one, equal
// costs go to the higher estimate, and when no eligible option has a known cost the best
// estimate wins. It returns -1 for no options.
func TradeoffPick(quality, cost []float64, tol float64) int {
	best := -1
	for i, q := range quality {
		if best < 0 || q > quality[best] {
			best = i
		}
	}
	if best < 0 {
		return -1
	}
	floor := quality[best] - tol - 1e-12
	pick := best
	for i, q := range quality {
		if q < floor {
			continue
		}
		c, pc := cost[i], cost[pick]
		switch {
		case math.IsNaN(c):
			continue
		case math.IsNaN(pc), c < pc, c == pc && q > quality[pick]:
			pick = i
		}
	}
	return pick
}

// FrontierPoint is what one tradeoff tolerance buys on a validation set: the mean outcome
// (score) of the picks and their mean price.
type FrontierPoint struct {
	// Tolerance is the quality tolerance in points of estimated probability (0-1).
	Tolerance float64 `json:"tolerance" jsonschema:"description=quality tolerance in points of estimated probability (0-1)"`
	// MeanScore is the mean observed score of the picks on the validation rows.
	MeanScore float64 `json:"mean_score" jsonschema:"description=mean observed score of the picks at this tolerance"`
	// MeanPrice is the mean price of the picks (the unit of the prices given), or null
	// when no price was known.
	MeanPrice *float64 `json:"mean_price" jsonschema:"description=mean price of the picks in the unit of price_unit; null when no price was known"`
	// Changed is the share of rows where the pick differs from the no-tradeoff pick.
	Changed float64 `json:"changed" jsonschema:"description=share of rows whose pick differs from the no-tradeoff pick"`
	// LossStdErr is the standard error of the quality this tolerance gives up against the
	// no-tradeoff pick, measured row by row on the same rows (0 at tolerance 0). The
	// default tolerance compares that loss with one point; on a few hundred rows it is
	// itself uncertain by about a point, and this says by how much.
	LossStdErr float64 `json:"loss_stderr" jsonschema:"description=standard error of the score given up against tolerance 0 (row-paired)"`
	// Rows is the number of rows measured.
	Rows int `json:"rows" jsonschema:"description=rows measured"`
}

// DefaultTolerances returns the tolerances a frontier is measured at (and the default
// tolerance chosen from), ascending: one-point steps where frontiers usually bend, coarser
// beyond. Each call returns a new slice, so a caller changing it changes no one else's.
func DefaultTolerances() []float64 {
	return []float64{0, 0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.075, 0.1, 0.15, 0.2, 0.3}
}

// Frontier measures TradeoffPick at each tolerance on validation rows: estimates[r][c] is
// the quality estimate of option c on row r, outcomes[r][c] its observed score (NaN when
// unmeasured: rows whose pick was not measured are left out of that point) and prices[c]
// its price (NaN when unknown).
func Frontier(estimates, outcomes [][]float64, prices []float64, tolerances []float64) []FrontierPoint {
	known := false
	for _, p := range prices {
		known = known || !math.IsNaN(p)
	}
	out := make([]FrontierPoint, 0, len(tolerances))
	for _, tol := range tolerances {
		fp := FrontierPoint{Tolerance: tol}
		var n, nPriced, price float64
		var nLoss, sumLoss, sumLoss2 float64
		for r, est := range estimates {
			pick := TradeoffPick(est, prices, tol)
			base := TradeoffPick(est, prices, 0)
			if pick < 0 || math.IsNaN(outcomes[r][pick]) {
				continue
			}
			n++
			fp.MeanScore += outcomes[r][pick]
			if pick != base {
				fp.Changed++
			}
			if !math.IsNaN(outcomes[r][base]) {
				d := outcomes[r][base] - outcomes[r][pick]
				nLoss, sumLoss, sumLoss2 = nLoss+1, sumLoss+d, sumLoss2+d*d
			}
			if !math.IsNaN(prices[pick]) {
				price += prices[pick]
				nPriced++
			}
		}
		fp.Rows = int(n)
		if n > 0 {
			fp.MeanScore /= n
			fp.Changed /= n
		}
		if nLoss > 1 {
			mean := sumLoss / nLoss
			variance := max(0, (sumLoss2-nLoss*mean*mean)/(nLoss-1))
			fp.LossStdErr = math.Sqrt(variance / nLoss)
		}
		if known && nPriced > 0 {
			mp := price / nPriced
			fp.MeanPrice = &mp
		}
		out = append(out, fp)
	}
	return out
}

// ChooseTolerance returns the largest tolerance of frontier whose mean score is at most
// maxLoss below the score at tolerance 0 (the first point), or fallback when the frontier
// has no prices (the tolerance then changes nothing that could be measured).
func ChooseTolerance(frontier []FrontierPoint, maxLoss, fallback float64) float64 {
	if len(frontier) == 0 || frontier[0].MeanPrice == nil {
		return fallback
	}
	chosen := frontier[0].Tolerance
	for _, fp := range frontier {
		if fp.MeanScore >= frontier[0].MeanScore-maxLoss-1e-12 && fp.Tolerance > chosen {
			chosen = fp.Tolerance
		}
	}
	return chosen
}
