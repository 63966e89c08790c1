// Command routing measures model selection (package routing) on llmrouter9 with a fixed
// split (a row is held out when sha256("llmrouter9:"+id)[0] mod 5 = 0, the split the
// learned default router was built with): it trains a router through trainer.Service on the
// other rows (with the models' prices, so its default tolerance and frontier are measured),
// then grades the picks of each policy on the held-out rows — top-1 hit rate, mean score,
// mean price — and measures the latency of Select with the learned default router and the
// trained router.
//
//	go run ./bench/routing -data ../shared/data/routing
//
// Quality: each evaluation row's per-model `scores` grade the pick. Price: the picked
// model's price in USD per 1M tokens (mean of input and output) from llmrouter9_models.json;
// the dataset has no token counts, so this is the mean per-token price of the picks.
package main

import (
	"bufio"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/switchyard-ai/switchyard/fetch"
	"github.com/switchyard-ai/switchyard/inference"
	"github.com/switchyard-ai/switchyard/routing"
	"github.com/switchyard-ai/switchyard/store/memstore"
	"github.com/switchyard-ai/switchyard/trainer"
)

type row struct {
	ID            string             `json:"id"`
	Task          string             `json:"task"`
	Problem       string             `json:"problem"`
	Scores        map[string]float64 `json:"scores"`
	CorrectModels []string           `json:"correct_models"`
}

type modelEntry struct {
	ID     string  `json:"id"`
	Input  float64 `json:"input_price_per_mtok"`
	Output float64 `json:"output_price_per_mtok"`
}

func main() {
	dataDir := flag.String("data", "../shared/data/routing", "directory with llmrouter9_train.jsonl and llmrouter9_models.json")
	seed := flag.Uint64("seed", 1, "seed of the 80/20 split")
	latencyN := flag.Int("latency-n", 2000, "selections per latency run")
	runs := flag.Int("runs", 5, "latency runs (the median of their p50/p99 is reported)")
	boundOnly := flag.Bool("bound-only", false, "print only the task-level bound of the tradeoff")
	withTasks := flag.Bool("tasks", true, "give the trainer the rows' task labels (the task prior)")
	tolList := flag.String("tolerances", "0.02,0.04,0.05,0.06,0.075,0.1,0.15", "tradeoff tolerances to evaluate with the trained router")
	maxLoss := flag.Float64("max-loss", trainer.MaxQualityLoss, "the score the trained router's default tolerance may give up (serve's --tradeoff-max-loss)")
	flag.Parse()
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	ctx := context.Background()

	rows, err := readRows(filepath.Join(*dataDir, "llmrouter9_train.jsonl"))
	check(err)
	models, err := readModels(filepath.Join(*dataDir, "llmrouter9_models.json"))
	check(err)
	price := map[string]float64{}
	var cands []routing.Candidate
	for _, m := range models {
		p := (m.Input + m.Output) / 2
		price[m.ID] = p
		cands = append(cands, routing.Candidate{Name: m.ID, Price: &p})
	}

	// The fixed split of the issue and of the default router's builder: a row is held out
	// when the first byte of sha256("llmrouter9:" + id) is 0 mod 5. Neither the trained
	// router nor the learned default router ever sees the held-out rows.
	var train, eval []row
	for _, rw := range rows {
		if h := sha256.Sum256([]byte("llmrouter9:" + rw.ID)); h[0]%5 == 0 {
			eval = append(eval, rw)
		} else {
			train = append(train, rw)
		}
	}
	fmt.Printf("llmrouter9: %d rows, train %d, held out %d (sha256 split), %d models\n", len(rows), len(train), len(eval), len(models))
	printBound(taskBound(train, eval, price, inference.DefaultTolerances()))
	if *boundOnly {
		return
	}

	// Train through the trainer service, as POST /api/v1/routers/train does, with the
	// models' prices so that the router's default tolerance and frontier are measured.
	dir, err := os.MkdirTemp("", "bench-routing")
	check(err)
	defer os.RemoveAll(dir)
	var buf strings.Builder
	for _, rw := range train {
		rec := map[string]any{"problem": rw.Problem, "correct_models": rw.CorrectModels, "scores": rw.Scores}
		if *withTasks {
			rec["task"] = rw.Task
		}
		b, err := json.Marshal(rec)
		check(err)
		buf.Write(b)
		buf.WriteByte('\n')
	}
	trainFile := filepath.Join(dir, "train.jsonl")
	check(os.WriteFile(trainFile, []byte(buf.String()), 0o644))
	st := memstore.New()
	svc, err := trainer.New(st, trainer.WithFetcher(&fetch.Fetcher{AllowLocal: true}), trainer.WithSeed(int64(*seed)), trainer.WithMaxQualityLoss(*maxLoss))
	check(err)
	check(svc.Start(ctx))
	defer svc.Close()
	job, err := svc.SubmitWithOptions(ctx, "bench", []string{"file://" + trainFile}, trainer.JobOptions{ModelPrices: price})
	check(err)
	var status trainer.JobStatus
	for {
		status, err = svc.Status(ctx, "bench", job.TrainingJobID)
		check(err)
		if status.Status == trainer.StateCompleted || status.Status == trainer.StateFailed {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if status.Status != trainer.StateCompleted {
		log.Fatalf("training failed: %s", status.ErrorMessage)
	}
	details, err := svc.Model(ctx, "bench", status.ModelID)
	check(err)
	fmt.Printf("trained router %s: job %.1fs (classifier fits %.1fs), ranking %s, held-out (trainer's own 20%%) top-1 %.3f, mean score %.3f, calibration error %.4f, default tolerance %.3f, tasks %d, task prior weight %.2f, task experts %d (weight %.2f)\n",
		status.ModelID, status.TrainingConfig.Timing.TotalTimeSeconds, status.TrainingConfig.Timing.TrainingTimeSeconds,
		details.Metrics.Ranking, details.Metrics.Top1HitRate, details.Metrics.MeanScore, details.Metrics.CalibrationError, details.Tradeoff.DefaultTolerance,
		details.Metrics.Tasks, details.Metrics.TaskPriorWeight, details.Metrics.TaskExperts, details.Metrics.TaskExpertWeight)
	fmt.Printf("frontier in the model details (trainer's held-out split + its evaluation fit's validation split):\n")
	for _, fp := range details.Tradeoff.Frontier {
		fmt.Printf("  tolerance %.3f: mean score %.3f, mean price %.3f, changed %.2f, loss %.3f ± %.3f\n",
			fp.Tolerance, fp.MeanScore, *fp.MeanPrice, fp.Changed, details.Tradeoff.Frontier[0].MeanScore-fp.MeanScore, fp.LossStdErr)
	}
	newSel := func(tol float64) *routing.Selector {
		return routing.NewSelector(routing.Options{Store: memstore.New(), CustomModels: routing.TrainerModels(svc), Tolerance: tol})
	}

	// Baselines.
	mean := map[string]float64{}
	for _, rw := range train {
		for m, s := range rw.Scores {
			mean[m] += s / float64(len(train))
		}
	}
	best := slices.MaxFunc(models, func(a, b modelEntry) int { return cmp.Compare(mean[a.ID], mean[b.ID]) }).ID
	type result struct {
		name              string
		hit, score, price float64
	}
	var results []result
	add := func(name string, pick func(rw row) string) {
		var h, s, p float64
		for _, rw := range eval {
			m := pick(rw)
			if slices.Contains(rw.CorrectModels, m) {
				h++
			}
			s += rw.Scores[m]
			p += price[m]
		}
		n := float64(len(eval))
		results = append(results, result{name, h / n, s / n, p / n})
	}
	{
		var h, s, p float64
		for _, rw := range eval {
			h += float64(len(rw.CorrectModels)) / float64(len(models))
			for _, m := range models {
				s += rw.Scores[m.ID] / float64(len(models))
				p += price[m.ID] / float64(len(models))
			}
		}
		n := float64(len(eval))
		results = append(results, result{"random pick (expected)", h / n, s / n, p / n})
	}
	add("always the single best model on train ("+best+")", func(row) string { return best })
	cheapest := slices.MinFunc(models, func(a, b modelEntry) int { return cmp.Compare(price[a.ID], price[b.ID]) }).ID
	add("always the cheapest model ("+cheapest+")", func(row) string { return cheapest })
	add("oracle (best score; cheapest among ties)", func(rw row) string {
		pick := ""
		for _, m := range models {
			if pick == "" || rw.Scores[m.ID] > rw.Scores[pick] || (rw.Scores[m.ID] == rw.Scores[pick] && price[m.ID] < price[pick]) {
				pick = m.ID
			}
		}
		return pick
	})
	selectWith := func(sel *routing.Selector, pref, tradeoff string, tol *float64) func(rw row) string {
		return func(rw row) string {
			req := &routing.Request{Messages: []routing.Message{{Role: "user", Content: rw.Problem}},
				Models: slices.Clone(cands), PreferenceID: pref, Tradeoff: tradeoff, TradeoffTolerance: tol}
			ranked, err := sel.Rank(ctx, "bench", req)
			check(err)
			return ranked[0].Candidate.Name
		}
	}
	def := newSel(0)
	prior := routing.NewSelector(routing.Options{Store: memstore.New(), Scorer: routing.DefaultScorer{}})
	add("prior scorer (DefaultScorer, the old default)", selectWith(prior, "", "", nil))
	add("learned default router (no preference_id)", selectWith(def, "", "", nil))
	add("learned default router, tradeoff cost (its default tolerance)", selectWith(def, "", "cost", nil))
	add("trained router (preference_id)", selectWith(def, status.ModelID, "", nil))
	add(fmt.Sprintf("trained router, tradeoff cost (its default tolerance %.3f)", details.Tradeoff.DefaultTolerance), selectWith(def, status.ModelID, "cost", nil))
	for _, f := range strings.Split(*tolList, ",") {
		tol, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		check(err)
		add(fmt.Sprintf("trained router, tradeoff cost, tradeoff_tolerance %g", tol), selectWith(def, status.ModelID, "cost", &tol))
	}
	fmt.Printf("\n| Policy | Top-1 hit | Mean score | Mean price (USD/1M tok) |\n|---|---|---|---|\n")
	for _, r := range results {
		fmt.Printf("| %s | %.3f | %.3f | %.3f |\n", r.name, r.hit, r.score, r.price)
	}
	pref := status.ModelID

	// Latency of a full Select (validation, ranking, session write to the in-memory store)
	// for a short conversation over the nine candidates.
	short := []routing.Message{
		{Role: "system", Content: "You are a helpful assistant."},
		{Role: "user", Content: "What's a good name for a golden retriever puppy?"},
		{Role: "assistant", Content: "How about Sunny, Maple or Biscuit?"},
		{Role: "user", Content: "Something more unusual, please, and explain why."},
	}
	fmt.Printf("\nLatency of Select for a 4-message conversation, 9 candidates, %d calls per run, median of %d runs:\n\n| Router | p50 | p99 |\n|---|---|---|\n", *latencyN, *runs)
	for _, mode := range []struct{ name, pref string }{{"learned default router", ""}, {"trained router (ngram-tfidf-v1, preference_id)", pref}} {
		var p50s, p99s []time.Duration
		for run := 0; run < *runs; run++ {
			sel := newSel(0)
			durs := make([]time.Duration, *latencyN)
			for i := range durs {
				req := &routing.Request{Messages: short, Models: slices.Clone(cands), PreferenceID: mode.pref}
				t0 := time.Now()
				_, err := sel.Select(ctx, "bench", req)
				durs[i] = time.Since(t0)
				check(err)
			}
			slices.Sort(durs)
			p50s = append(p50s, durs[len(durs)/2])
			p99s = append(p99s, durs[len(durs)*99/100])
		}
		slices.Sort(p50s)
		slices.Sort(p99s)
		fmt.Printf("| %s | %s | %s |\n", mode.name, p50s[len(p50s)/2], p99s[len(p99s)/2])
	}
}

func readRows(path string) ([]row, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var rows []row
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for sc.Scan() {
		var rw row
		if err := json.Unmarshal(sc.Bytes(), &rw); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", path, len(rows)+1, err)
		}
		rows = append(rows, rw)
	}
	return rows, sc.Err()
}

func readModels(path string) ([]modelEntry, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var ms []modelEntry
	return ms, json.Unmarshal(b, &ms)
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
