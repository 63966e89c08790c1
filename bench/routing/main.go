// Command routing measures model selection (package routing): routing latency for a short
// conversation with the default scorer and with a custom router, and the quality and
// price of the picks on llmrouter9 (train 80% / evaluate 20%).
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
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/switchyard-ai/switchyard/inference"
	"github.com/switchyard-ai/switchyard/routing"
	"github.com/switchyard-ai/switchyard/store/memstore"
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
	tolList := flag.String("tolerances", "0.02,0.05,0.1,0.15,0.2,0.3", "tradeoff tolerances to evaluate with the custom router")
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

	r := rand.New(rand.NewPCG(*seed, *seed^0x9e3779b97f4a7c15))
	r.Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
	cut := len(rows) * 8 / 10
	train, eval := rows[:cut], rows[cut:]
	fmt.Printf("llmrouter9: %d rows, train %d, evaluate %d, %d models, split seed %d\n", len(rows), len(train), len(eval), len(models), *seed)

	examples := make([]inference.Example, len(train))
	for i, rw := range train {
		examples[i] = inference.Example{Text: rw.Problem, Labels: rw.CorrectModels, Scores: rw.Scores}
	}
	start := time.Now()
	model, rep, err := inference.Fit(ctx, examples, inference.FitOptions{Seed: int64(*seed)})
	check(err)
	fmt.Printf("custom router: %s, trained on %d rows (%d skipped) in %.1fs, L2 %g\n",
		model.EmbedderName(), rep.Used, rep.Skipped, time.Since(start).Seconds(), rep.L2)

	local := &routing.LocalModels{}
	local.Add("bench", "llmrouter9", model)
	newSel := func(tol float64) *routing.Selector {
		return routing.NewSelector(routing.Options{Store: memstore.New(), CustomModels: local, Tolerance: tol})
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
		name         string
		score, price float64
	}
	var results []result
	add := func(name string, pick func(rw row) string) {
		var s, p float64
		for _, rw := range eval {
			m := pick(rw)
			s += rw.Scores[m]
			p += price[m]
		}
		n := float64(len(eval))
		results = append(results, result{name, s / n, p / n})
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
	selectWith := func(sel *routing.Selector, pref, tradeoff string) func(rw row) string {
		return func(rw row) string {
			req := &routing.Request{Messages: []routing.Message{{Role: "user", Content: rw.Problem}},
				Models: slices.Clone(cands), PreferenceID: pref, Tradeoff: tradeoff}
			ranked, err := sel.Rank(ctx, "bench", req)
			check(err)
			return ranked[0].Candidate.Name
		}
	}
	def := newSel(0)
	add("default scorer, no tradeoff", selectWith(def, "", ""))
	add("default scorer, tradeoff cost (tolerance 0.05)", selectWith(def, "", "cost"))
	add("custom router (preference_id), no tradeoff", selectWith(def, "llmrouter9", ""))
	for _, f := range strings.Split(*tolList, ",") {
		tol, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		check(err)
		add(fmt.Sprintf("custom router, tradeoff cost (tolerance %g)", tol), selectWith(newSel(tol), "llmrouter9", "cost"))
	}
	fmt.Printf("\n| Policy | Mean score | Mean price (USD/1M tok) |\n|---|---|---|\n")
	for _, r := range results {
		fmt.Printf("| %s | %.3f | %.3f |\n", r.name, r.score, r.price)
	}

	// Latency of a full Select (validation, ranking, session write to the in-memory store)
	// for a short conversation over the nine candidates.
	short := []routing.Message{
		{Role: "system", Content: "You are a helpful assistant."},
		{Role: "user", Content: "What's a good name for a golden retriever puppy?"},
		{Role: "assistant", Content: "How about Sunny, Maple or Biscuit?"},
		{Role: "user", Content: "Something more unusual, please, and explain why."},
	}
	fmt.Printf("\nLatency of Select for a 4-message conversation, 9 candidates, %d calls per run, median of %d runs:\n\n| Router | p50 | p99 |\n|---|---|---|\n", *latencyN, *runs)
	for _, mode := range []struct{ name, pref string }{{"default scorer", ""}, {"custom router (ngram-tfidf-v1)", "llmrouter9"}} {
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
