package optimizer

import "math"

// AcceptanceRule decides whether a variant beats the best agent so far, from the per-row
// scores of both on the same train rows (a paired comparison, not a comparison of means).
// It is applied to the whole train split, after the candidate beat the best agent's mean on
// a minibatch of it (see the package doc); the minibatch only decides which candidate is
// worth that run, so noise on a few rows cannot get a variant kept. A candidate the rule
// refuses for losses while its mean is higher has the rows where the two differ run again
// for both agents; a difference that does not repeat becomes a tie, and the rule is applied
// to the result (Iteration.Rechecked).
//
// The variant must improve the mean per-row score (variant − best) by at least MinEffect,
// and then either
//   - break no row: a strict improvement (some row better, none worse) is kept however few
//     rows there are, so on the spec's smallest train split (7 rows) fixing one row and
//     breaking none counts; on large splits MinEffect asks for many fixed rows (20 of
//     1,000); or
//   - pass a one-sided exact sign test over the rows where the two differ (wins where the
//     variant scores higher, losses where it scores lower, ties ignored):
//     p = P(X ≥ wins | X ~ Binomial(wins+losses, ½)) ≤ Alpha, so a trade of rows is kept
//     only when the wins clearly outnumber the losses.
//
// With the defaults (MinEffect 0.02, Alpha 0.1): on 7 rows, 1 win and no loss is kept, 3 wins
// and 1 loss is not (p = 5/16); on 10 rows, 6 wins and 1 loss is kept (p = 7/128); on 20
// rows, 1 win and no loss is kept (effect 0.05); on 100 rows 2 wins and no loss are kept,
// 1 is not (effect 0.01); on 1,000 rows 20 wins and no loss, or 60 wins and 40 losses
// (p ≈ 0.03), are kept.
type AcceptanceRule struct {
	// MinEffect is the smallest mean per-row improvement that counts (0..1).
	MinEffect float64 `json:"min_effect"`
	// Alpha is the largest sign-test p-value that counts as significant.
	Alpha float64 `json:"alpha"`
}

// DefaultAcceptance is the rule a Service uses unless told otherwise.
var DefaultAcceptance = AcceptanceRule{MinEffect: 0.02, Alpha: 0.1}

// Comparison is the outcome of comparing a variant with the best agent.
type Comparison struct {
	Wins      int     `json:"wins"`
	Losses    int     `json:"losses"`
	Ties      int     `json:"ties"`
	MeanDelta float64 `json:"mean_delta"`
	PValue    float64 `json:"p_value"`
	Accepted  bool    `json:"accepted"`
}

// Compare applies the rule to paired per-row scores (same rows, same order). Rows whose
// scores differ by less than 1e-9 are ties.
func (r AcceptanceRule) Compare(best, variant []float64) Comparison {
	var c Comparison
	n := min(len(best), len(variant))
	if n == 0 {
		c.PValue = 1
		return c
	}
	var sum float64
	for i := 0; i < n; i++ {
		d := variant[i] - best[i]
		sum += d
		switch {
		case d > 1e-9:
			c.Wins++
		case d < -1e-9:
			c.Losses++
		default:
			c.Ties++
		}
	}
	c.MeanDelta = sum / float64(n)
	c.PValue = signTestP(c.Wins, c.Wins+c.Losses)
	strict := c.Losses == 0
	c.Accepted = c.Wins > 0 && c.MeanDelta >= r.MinEffect && (strict || c.PValue <= r.Alpha)
	return c
}

// signTestP returns P(X ≥ k) for X ~ Binomial(n, ½).
func signTestP(k, n int) float64 {
	if n == 0 {
		return 1
	}
	var p float64
	for i := k; i <= n; i++ {
		lg, _ := math.Lgamma(float64(n + 1))
		li, _ := math.Lgamma(float64(i + 1))
		lr, _ := math.Lgamma(float64(n - i + 1))
		p += math.Exp(lg - li - lr - float64(n)*math.Ln2)
	}
	return math.Min(1, p)
}
