// Command feedback measures personalized routing from feedback (routing preferences,
// POST /api/v1/feedback) on public per-prompt evaluation data: a simulated user streams
// held-out prompts (rows the learned default router never trained on), each model-selected
// under a pref_ preference, and gives a thumbs up when the picked model's recorded score is
// at least 0.5. It prints, per scenario, the mean score of the picks over the second half
// of the stream with the preference and without (the default router alone), and how often
// each candidate was picked.
//
//	go run ./bench/feedback -data ../shared/data/routing
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"log/slog"
	"maps"
	"slices"

	"github.com/switchyard-ai/switchyard/internal/feedbacksim"
	"github.com/switchyard-ai/switchyard/routing"
)

func main() {
	data := flag.String("data", "../shared/data/routing", "directory of the routing evaluation data")
	flag.Parse()
	ctx := context.Background()
	quiet := slog.New(slog.DiscardHandler)
	for _, sc := range feedbacksim.Scenarios() {
		rows, err := feedbacksim.HeldOut(*data, sc.Source)
		if err != nil {
			log.Fatal(err)
		}
		sel := routing.NewSelector(routing.Options{Logger: quiet})
		res, err := feedbacksim.Run(ctx, sel, "bench", rows, sc.Scenario)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%-28s %s: %d prompts, %d feedbacks; second half (%d): default router %.3f, personalized %.3f (%+.3f), oracle %.3f\n",
			res.Name, sc.Source, res.Prompts, res.Feedbacks, res.Half, res.BaselineMean, res.PersonalMean, res.PersonalMean-res.BaselineMean, res.OracleMean)
		for _, c := range slices.Sorted(maps.Keys(union(res.BaselinePicks, res.PersonalPicks))) {
			fmt.Printf("    %-40s picks: default %4d  personalized %4d\n", c, res.BaselinePicks[c], res.PersonalPicks[c])
		}
	}
}

func union(a, b map[string]int) map[string]int {
	out := maps.Clone(a)
	for k, v := range b {
		out[k] += v
	}
	return out
}
