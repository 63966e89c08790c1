package inference

import (
	"math"
	"slices"
)

// QualityName is the name of the per-model quality heads.
const QualityName = "per-model-logistic-v1"

// QualityHeads estimates, for every model a router knows, the probability that the model
// answers a prompt well: one logistic regression per model over the router's features,
// q_c = sigmoid(w_c·x + b_c). Unlike a softmax over "which model is best", the estimates
// do not compete: two models that both answer an easy prompt both get a high estimate, so
// a tolerance on them (how much expected quality a cheaper pick gives up) means what it
// says. A trained QualityHeads is immutable and safe for concurrent use.
type QualityHeads struct {
	// lin holds the weights in the same sparse layout as the softmax head.
	lin *SoftmaxRegression
	// prior, when set, is blended into the heads' estimates (see taskPrior).
	prior *taskPrior
	// cal, when set, rescales the (blended) estimates, one map per class.
	cal calibration
}

// Name returns QualityName.
func (q *QualityHeads) Name() string { return QualityName }

// NumClasses is the number of models; class i is Model.Classes()[i].
func (q *QualityHeads) NumClasses() int { return q.lin.classes }

// Estimates writes the per-model probabilities of a good answer for x into out, which has
// NumClasses entries, each in (0,1). They are independent and need not sum to 1.
func (q *QualityHeads) Estimates(x Vector, out []float64) {
	q.lin.linear(x, out)
	for c := range out[:q.lin.classes] {
		out[c] = sigmoid(out[c])
	}
	if q.prior != nil {
		q.prior.blend(x, out[:q.lin.classes])
	}
	if q.cal != nil {
		q.cal.apply(out[:q.lin.classes])
	}
}

// Calibration returns the Platt scaling applied to each model's estimates (class order),
// q' = σ(a·logit(q) + b), fitted on the validation split; nil for a router trained
// without it.
func (q *QualityHeads) Calibration() [][2]float64 {
	if q.cal == nil {
		return nil
	}
	out := make([][2]float64, len(q.cal))
	for i, p := range q.cal {
		out[i] = [2]float64{p.a, p.b}
	}
	return out
}

// Tasks returns the task labels the estimates draw on (through the task prior, the task
// experts or both) and the prior's weight λ (estimate = (1−λ)·head + λ·prior; 0 when only
// the experts use the labels), or nil and 0 when the router was trained without task
// labels or the validation split preferred the shared heads alone.
func (q *QualityHeads) Tasks() ([]string, float64) {
	if q.prior == nil {
		return nil, 0
	}
	return slices.Clone(q.prior.names), q.prior.weight
}

// TaskExperts returns how many tasks have per-model heads of their own in the estimates
// (task experts, see FitOptions.TaskExpertWeights) and their weight w, or 0 and 0 without.
func (q *QualityHeads) TaskExperts() (int, float64) {
	if q.prior == nil || q.prior.expertWeight == 0 {
		return 0, 0
	}
	n := 0
	for _, e := range q.prior.experts {
		if e != nil {
			n++
		}
	}
	return n, q.prior.expertWeight
}

// Ranking methods a Model may use to order its classes (chosen at Fit time on the
// validation split; see FitReport.Ranking).
const (
	// RankSoftmax orders by the softmax head's probability that a model is the best one.
	RankSoftmax = "softmax"
	// RankQuality orders by the quality heads' estimates.
	RankQuality = "quality"
	// RankBlend orders by (1−β)·q̂_c + β·p_c, q̂ the estimates normalised to sum to 1 and p
	// the softmax probabilities, with β = FitReport.BlendWeight.
	RankBlend = "blend"
)

// qualityTargets builds one row of per-model targets per example: the example's score for
// a model when it has one, else 1 for a listed correct model, else 0 for a model that
// appears anywhere in the data set (NaN, unmeasured, when the example sets OnlyScored).
func qualityTargets(examples []Example, classes []string, ignoreScores bool) [][]float64 {
	index := make(map[string]int, len(classes))
	for i, c := range classes {
		index[c] = i
	}
	out := make([][]float64, len(examples))
	for i, ex := range examples {
		t := make([]float64, len(classes))
		if ex.OnlyScored {
			for c := range t {
				t[c] = math.NaN()
			}
		}
		for _, l := range ex.Labels {
			t[index[l]] = 1
		}
		if !ignoreScores {
			for m, s := range ex.Scores {
				t[index[m]] = s
			}
		}
		out[i] = t
	}
	return out
}

// logisticLoss is the summed per-model log loss of estimates against targets (fractional
// scores allowed; NaN targets, unmeasured, are skipped).
func logisticLoss(est, target []float64) float64 {
	var loss float64
	for c, e := range est {
		if t := target[c]; !math.IsNaN(t) {
			e = min(max(e, 1e-12), 1-1e-12)
			loss -= t*math.Log(e) + (1-t)*math.Log(1-e)
		}
	}
	return loss
}

// calibrationBins is the number of equal-width bins of ExpectedCalibrationError.
const calibrationBins = 10

// ExpectedCalibrationError measures how far estimates are from observed outcomes: the
// estimate/outcome pairs are put in 10 equal-width bins by estimate, and the result is
// Σ_bins (n_bin/n)·|mean estimate − mean outcome|. 0 is perfectly calibrated. Outcomes
// may be fractional scores in [0,1]; NaN outcomes (unmeasured) are left out.
func ExpectedCalibrationError(estimates, outcomes []float64) float64 {
	var cnt [calibrationBins]float64
	var sumE, sumO [calibrationBins]float64
	n := 0.0
	for i, e := range estimates {
		o := outcomes[i]
		if math.IsNaN(o) || math.IsNaN(e) {
			continue
		}
		b := min(int(e*calibrationBins), calibrationBins-1)
		b = max(b, 0)
		cnt[b]++
		sumE[b] += e
		sumO[b] += o
		n++
	}
	if n == 0 {
		return 0
	}
	var ece float64
	for b := range cnt {
		if cnt[b] > 0 {
			ece += cnt[b] / n * math.Abs(sumE[b]/cnt[b]-sumO[b]/cnt[b])
		}
	}
	return ece
}
