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
		c := r.CorrectModels[0]
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

// evaluate scores model on test and computes the most-frequent-model baseline from train.
func evaluate(ctx context.Context, model *inference.Model, train, test []Record) (*Metrics, error) {
	m := &Metrics{HoldoutRows: len(test)}
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
	if len(test) == 0 {
		return m, nil
	}
	texts := make([]string, len(test))
	for i, r := range test {
		texts[i] = r.Problem
	}
	ranked, err := model.Predict(ctx, texts)
	if err != nil {
		return nil, err
	}
	var top1, top3, acc, baseHit, baseAcc int
	for i, r := range test {
		if slices.Contains(r.CorrectModels, m.BaselineModel) {
			baseHit++
		}
		if r.CorrectModels[0] == m.BaselineModel {
			baseAcc++
		}
		rk := ranked[i]
		if len(rk) == 0 {
			continue
		}
		if slices.Contains(r.CorrectModels, rk[0].Model) {
			top1++
		}
		if rk[0].Model == r.CorrectModels[0] {
			acc++
		}
		for k := 0; k < len(rk) && k < 3; k++ {
			if slices.Contains(r.CorrectModels, rk[k].Model) {
				top3++
				break
			}
		}
	}
	n := float64(len(test))
	m.Top1HitRate = float64(top1) / n
	m.Top3HitRate = float64(top3) / n
	m.Accuracy = float64(acc) / n
	m.BaselineTop1HitRate = float64(baseHit) / n
	m.BaselineAccuracy = float64(baseAcc) / n
	return m, nil
}
