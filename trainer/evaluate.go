package trainer

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"github.com/switchyard-ai/switchyard/inference"
)

// stratifiedSplit holds out about fraction of the rows, stratified by each row's first
// correct model, with a fixed seed. A class with a single row stays in training; every
// class with at least two rows keeps at least one in training.
func stratifiedSplit(recs []Record, fraction float64, seed int64) (train, test []int) {
	byClass := map[string][]int{}
	var classes []string
	for i, r := range recs {
		c := ""
		if len(r.CorrectModels) > 0 {
			c = r.CorrectModels[0]
		}
		if _, ok := byClass[c]; !ok {
			classes = append(classes, c)
		}
		byClass[c] = append(byClass[c], i)
	}
	sort.Strings(classes)
	rng := rand.New(rand.NewPCG(uint64(seed), 0x5eed))
	for _, c := range classes {
		idx := byClass[c]
		rng.Shuffle(len(idx), func(a, b int) { idx[a], idx[b] = idx[b], idx[a] })
		n := int(math.Round(fraction * float64(len(idx))))
		n = min(n, len(idx)-1)
		if n < 1 && len(idx) >= 3 {
			n = 1
		}
		test = append(test, idx[:n]...)
		train = append(train, idx[n:]...)
	}
	sort.Ints(train)
	sort.Ints(test)
	return train, test
}

// MaxQualityLoss is how much held-out mean score a router's default tradeoff tolerance
// may give up against picking its best estimate (one point).
const MaxQualityLoss = 0.01

// FallbackTolerance is the default tolerance of a router whose models have no known price
// (routing's global default; the frontier cannot measure one).
const FallbackTolerance = 0.05

// PriceUnit is the unit of the prices in TradeoffDetails.
const PriceUnit = "USD per 1M tokens (mean of input and output)"

// outcome is how well model answered r: its score when given, else 1 for a correct model.
func outcome(r Record, model string) float64 {
	if s, ok := r.Scores[model]; ok {
		return s
	}
	if slices.Contains(r.CorrectModels, model) {
		return 1
	}
	return 0
}

// evaluate scores model on test, computes the most-frequent-model baseline from train, and
// measures the tradeoff frontier with prices (which may be empty) on test and on the
// validation rows of rep, the report of model's fit (nil: test alone).
func evaluate(ctx context.Context, model *inference.Model, rep *inference.FitReport, train, test []Record, prices map[string]float64, maxLoss float64) (*Metrics, *TradeoffDetails, error) {
	if maxLoss <= 0 {
		maxLoss = MaxQualityLoss
	}
	m := &Metrics{}
	ranking, _ := model.Ranking()
	m.Ranking = ranking

	// Baseline: the model most often among correct_models in the training split.
	count := map[string]int{}
	for _, r := range train {
		for _, c := range r.CorrectModels {
			count[c]++
		}
	}
	for c, n := range count {
		if n > count[m.BaselineModel] || (n == count[m.BaselineModel] && c < m.BaselineModel) {
			m.BaselineModel = c
		}
	}
	// The accuracy baseline predicts each model right on a row when it was right on at
	// least half of the training rows (a constant per model).
	trainRate := map[string]float64{}
	for _, r := range train {
		for c := range count {
			trainRate[c] += outcome(r, c) / float64(len(train))
		}
	}
	if len(test) == 0 {
		return m, nil, nil
	}
	texts := make([]string, len(test))
	for i, r := range test {
		texts[i] = r.Problem
	}
	ranked, err := model.Predict(ctx, texts)
	if err != nil {
		return nil, nil, err
	}
	classes := model.Classes()
	index := make(map[string]int, len(classes))
	for i, c := range classes {
		index[c] = i
	}
	priceVec := make([]float64, len(classes))
	for i, c := range classes {
		priceVec[i] = math.NaN()
		if p, ok := prices[c]; ok {
			priceVec[i] = p
		}
	}
	var top1, top3, acc, baseHit, baseAcc, labelled, pairs int
	var ests, outs []float64
	estimates := make([][]float64, len(test))
	outcomes := make([][]float64, len(test))
	for i, r := range test {
		rk := ranked[i]
		est, out := make([]float64, len(classes)), make([]float64, len(classes))
		for _, x := range rk {
			c := index[x.Model]
			est[c], out[c] = x.Quality, outcome(r, x.Model)
			ests = append(ests, x.Quality)
			outs = append(outs, out[c])
		}
		estimates[i], outcomes[i] = est, out
		if len(rk) > 0 {
			m.MeanScore += outcome(r, rk[0].Model)
		}
		m.BaselineMeanScore += outcome(r, m.BaselineModel)
		if len(r.CorrectModels) == 0 {
			continue
		}
		labelled++
		if slices.Contains(r.CorrectModels, m.BaselineModel) {
			baseHit++
		}
		// Accuracy: per (row, model) pair, is the estimate on the right side of ½?
		for _, x := range rk {
			right := outcome(r, x.Model) >= 0.5
			pairs++
			if (x.Quality >= 0.5) == right {
				acc++
			}
			if (trainRate[x.Model] >= 0.5) == right {
				baseAcc++
			}
		}
		if len(rk) == 0 {
			continue
		}
		if slices.Contains(r.CorrectModels, rk[0].Model) {
			top1++
		}
		for k := 0; k < len(rk) && k < 3; k++ {
			if slices.Contains(r.CorrectModels, rk[k].Model) {
				top3++
				break
			}
		}
	}
	n := float64(len(test))
	m.MeanScore /= n
	m.BaselineMeanScore /= n
	m.CalibrationError = inference.ExpectedCalibrationError(ests, outs)
	m.HoldoutRows = labelled
	if labelled > 0 {
		l := float64(labelled)
		m.Top1HitRate = float64(top1) / l
		m.Top3HitRate = float64(top3) / l
		m.BaselineTop1HitRate = float64(baseHit) / l
	}
	if pairs > 0 {
		m.Accuracy = float64(acc) / float64(pairs)
		m.BaselineAccuracy = float64(baseAcc) / float64(pairs)
	}
	// The frontier also reads the fit's validation rows, scored by heads fitted without
	// them: the default tolerance compares a loss with one point, and on the held-out rows
	// alone that loss has a standard error close to a point (BENCHMARKS.md).
	if rep != nil && len(rep.ValidationEstimates) == len(rep.ValidationOutcomes) {
		estimates = append(estimates, rep.ValidationEstimates...)
		outcomes = append(outcomes, rep.ValidationOutcomes...)
	}
	frontier := inference.Frontier(estimates, outcomes, priceVec, inference.DefaultTolerances())
	td := &TradeoffDetails{
		DefaultTolerance: inference.ChooseTolerance(frontier, maxLoss, FallbackTolerance),
		MaxQualityLoss:   maxLoss,
		PriceUnit:        PriceUnit,
		Prices:           prices,
		Frontier:         frontier,
	}
	return m, td, nil
}
