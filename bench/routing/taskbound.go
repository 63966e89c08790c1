package main

import (
	"fmt"
	"math"
	"slices"

	"github.com/switchyard-ai/switchyard/inference"
)

// taskBound prints what the tradeoff could buy if every prompt's task were known: each
// model's estimate on a held-out row is its mean score on the training rows of that row's
// task (the most a task-level estimator can know), and the tradeoff rule runs on those.
// Within a task such estimates do not vary, so this frontier shows how much of the price
// a cost tradeoff can save at a given quality loss without per-prompt signal beyond the task.
func taskBound(train, eval []row, price map[string]float64, tolerances []float64) []inference.FrontierPoint {
	var models []string
	for m := range price {
		models = append(models, m)
	}
	slices.Sort(models)
	sum := map[string][]float64{}
	n := map[string]float64{}
	for _, r := range train {
		if sum[r.Task] == nil {
			sum[r.Task] = make([]float64, len(models))
		}
		n[r.Task]++
		for c, m := range models {
			sum[r.Task][c] += r.Scores[m]
		}
	}
	prices := make([]float64, len(models))
	for c, m := range models {
		prices[c] = price[m]
	}
	est := make([][]float64, len(eval))
	out := make([][]float64, len(eval))
	for i, r := range eval {
		est[i] = make([]float64, len(models))
		out[i] = make([]float64, len(models))
		for c, m := range models {
			est[i][c] = math.NaN()
			if n[r.Task] > 0 {
				est[i][c] = sum[r.Task][c] / n[r.Task]
			}
			out[i][c] = r.Scores[m]
		}
	}
	return inference.Frontier(est, out, prices, tolerances)
}

func printBound(fps []inference.FrontierPoint) {
	fmt.Println("\ntradeoff with each held-out row's task known (estimates = the task's mean scores on the training rows):")
	for _, fp := range fps {
		fmt.Printf("  tolerance %.3f: mean score %.3f, mean price %.3f\n", fp.Tolerance, fp.MeanScore, *fp.MeanPrice)
	}
}
