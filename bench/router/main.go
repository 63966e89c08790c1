// Command router measures the inference package on the LLMRouter data set: 5-fold
// cross-validated top-1 hit rate of the softmax router against always picking the most
// frequent best model and against a random pick, the time to train on all rows, the time
// to predict 500 inputs, and (with -onnx) the ONNX embedder's sentences per second.
//
//	go run ./bench/router -data ../shared/data/routing/llmrouter9_train.jsonl
//	go run ./bench/router -onnx-only -runs 5
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/switchyard-ai/switchyard/inference"
)

type record struct {
	ID            string             `json:"id"`
	Problem       string             `json:"problem"`
	CorrectModels []string           `json:"correct_models"`
	Scores        map[string]float64 `json:"scores"`
	Task          string             `json:"task"`
}

// useTasks passes the rows' task labels to Fit (-tasks).
var useTasks bool

// estimatesPath (-estimates) is where crossValidate writes every test row's per-model
// estimates, one JSON line each; rowIDs are the loaded rows' ids, in order.
var (
	estimatesPath string
	rowIDs        []string
)

func main() {
	data := flag.String("data", "../shared/data/routing/llmrouter9_train.jsonl", "LLMRouter JSONL file")
	folds := flag.Int("folds", 5, "cross-validation folds (0 skips cross-validation)")
	runs := flag.Int("runs", 3, "repetitions of each timing (the median is reported)")
	l2 := flag.String("l2", "", "comma-separated L2 grid (default: the package's)")
	qualityL2 := flag.String("quality-l2", "", "comma-separated L2 grid of the quality heads (default: the package's)")
	power := flag.Float64("power", 0, "FitOptions.ScorePower (0: default)")
	ignoreScores := flag.Bool("ignore-scores", false, "train on correct_models only")
	dims := flag.Int("dims", 0, "n-gram hash dimensions (0: default)")
	objective := flag.String("objective", "", "FitOptions.Objective (empty: default)")
	maxIter := flag.Int("max-iter", 0, "FitOptions.MaxIterations (0: default)")
	minDF := flag.Int("min-df", 0, "FitOptions.MinDF (0: default)")
	timing := flag.Bool("timing", true, "measure training and prediction time")
	onnx := flag.Bool("onnx", true, "also measure the ONNX embedder")
	flag.BoolVar(&useTasks, "tasks", true, "give Fit the rows' task labels (the task prior)")
	flag.StringVar(&estimatesPath, "estimates", "", "write each test row's fold and per-model estimates to this JSONL file (for comparing estimators outside Go, as bench/embeddingprobe does)")
	flag.IntVar(&clusters, "clusters", 0, "with -tasks=false: label each fold's training rows with pseudo-tasks, their cluster among this many (spherical k-means on the TF-IDF vectors); 0: none")
	onnxOnly := flag.Bool("onnx-only", false, "measure only the ONNX embedder")
	shape := flag.Bool("shape", true, "n-gram shape features (false: NGramConfig.NoShape)")
	flag.Parse()
	ctx := context.Background()
	if os.Getenv("DEBUG") != "" {
		slog.SetLogLoggerLevel(slog.LevelDebug)
	}

	if !*onnxOnly {
		examples, err := load(*data)
		if err != nil {
			log.Fatal(err)
		}
		opts := inference.FitOptions{ScorePower: *power, IgnoreScores: *ignoreScores, MinDF: *minDF, Objective: *objective, MaxIterations: *maxIter, NGram: inference.NGramConfig{Dims: *dims, NoShape: !*shape}}
		if *l2 != "" {
			for _, f := range strings.Split(*l2, ",") {
				v, err := strconv.ParseFloat(f, 64)
				if err != nil {
					log.Fatalf("-l2: %v", err)
				}
				opts.L2 = append(opts.L2, v)
			}
		}
		if *qualityL2 != "" {
			for _, f := range strings.Split(*qualityL2, ",") {
				v, err := strconv.ParseFloat(f, 64)
				if err != nil {
					log.Fatalf("-quality-l2: %v", err)
				}
				opts.QualityL2 = append(opts.QualityL2, v)
			}
		}
		fmt.Printf("data: %s, %d rows\n", *data, len(examples))
		if *folds > 1 {
			crossValidate(ctx, examples, opts, *folds)
		}
		if *timing {
			timeTraining(ctx, examples, opts, *runs)
		}
	}
	if *onnx || *onnxOnly {
		benchONNX(ctx, *runs)
	}
}

func load(path string) ([]inference.Example, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []inference.Example
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var r record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", path, len(out)+1, err)
		}
		if r.CorrectModels == nil && len(r.Scores) > 0 {
			r.CorrectModels = bestModels(r.Scores) // ZeroEval and MMLU-Pro rows carry scores only
		}
		ex := inference.Example{Text: r.Problem, Labels: r.CorrectModels, Scores: r.Scores}
		if useTasks {
			ex.Task = r.Task
		}
		out = append(out, ex)
		rowIDs = append(rowIDs, r.ID)
	}
	return out, sc.Err()
}

func crossValidate(ctx context.Context, examples []inference.Example, opts inference.FitOptions, folds int) {
	perm := rand.New(rand.NewPCG(42, 1)).Perm(len(examples))
	var hits, freqHits, randHits, labelled float64
	var score, freqScore float64
	var ests, outs []float64
	var l2s []float64
	var rankings []string
	alt := map[string][2]float64{}
	var dump *json.Encoder
	if estimatesPath != "" {
		out, err := os.Create(estimatesPath)
		if err != nil {
			log.Fatal(err)
		}
		defer out.Close()
		dump = json.NewEncoder(out)
	}
	for f := 0; f < folds; f++ {
		var train, test []inference.Example
		var testIDs []string
		for i, j := range perm {
			if i%folds == f {
				test = append(test, examples[j])
				testIDs = append(testIDs, rowIDs[j])
			} else {
				train = append(train, examples[j])
			}
		}
		if clusters > 0 && !useTasks {
			train = pseudoTasks(ctx, train, clusters, opts.NGram)
		}
		m, rep, err := inference.Fit(ctx, train, opts)
		if err != nil {
			log.Fatal(err)
		}
		l2s = append(l2s, rep.L2)
		rankings = append(rankings, fmt.Sprintf("%s/%.2f (q-l2 %.0e, val ECE %.3f)", rep.Ranking, rep.BlendWeight, rep.QualityL2, rep.ValidationECE))
		// Most frequent best model on the training folds.
		count := map[string]int{}
		for _, ex := range train {
			for _, l := range ex.Labels {
				count[l]++
			}
		}
		freq := ""
		for _, c := range m.Classes() {
			if freq == "" || count[c] > count[freq] {
				freq = c
			}
		}
		texts := make([]string, len(test))
		for i, ex := range test {
			texts[i] = ex.Text
		}
		preds, err := m.Predict(ctx, texts)
		if err != nil {
			log.Fatal(err)
		}
		for _, rk := range []struct {
			name string
			beta float64
		}{{inference.RankSoftmax, 1}, {inference.RankQuality, 0}, {inference.RankBlend, 0.1}, {inference.RankBlend, 0.25}, {inference.RankBlend, 0.5}} {
			mm, err := m.WithRanking(rk.name, rk.beta)
			if err != nil {
				log.Fatal(err)
			}
			pp, err := mm.Predict(ctx, texts)
			if err != nil {
				log.Fatal(err)
			}
			key := fmt.Sprintf("%s/%.2f", rk.name, rk.beta)
			a := alt[key]
			for i, ex := range test {
				if slices.Contains(ex.Labels, pp[i][0].Model) {
					a[0]++
				}
				a[1] += outcome(ex, pp[i][0].Model)
			}
			alt[key] = a
		}
		for i, ex := range test {
			if dump != nil {
				q := map[string]float64{}
				for _, r := range preds[i] {
					q[r.Model] = r.Quality
				}
				if err := dump.Encode(map[string]any{"id": testIDs[i], "fold": f, "q": q}); err != nil {
					log.Fatal(err)
				}
			}
			if len(ex.Labels) > 0 {
				labelled++
			}
			if slices.Contains(ex.Labels, preds[i][0].Model) {
				hits++
			}
			if slices.Contains(ex.Labels, freq) {
				freqHits++
			}
			score += outcome(ex, preds[i][0].Model)
			freqScore += outcome(ex, freq)
			for _, r := range preds[i] {
				if _, measured := ex.Scores[r.Model]; !measured && ex.Scores != nil {
					continue
				}
				ests = append(ests, r.Quality)
				outs = append(outs, outcome(ex, r.Model))
			}
			randHits += float64(len(ex.Labels)) / float64(len(m.Classes()))
		}
	}
	n := float64(len(examples))
	fmt.Printf("%d-fold CV top-1 hit rate over all %d rows (rows with no correct model count as misses):\n", folds, len(examples))
	fmt.Printf("  router %.4f   most-frequent %.4f   random %.4f   (chosen L2 per fold %v)\n", hits/n, freqHits/n, randHits/n, l2s)
	fmt.Printf("  mean score of the pick: router %.4f   most-frequent %.4f; ECE of the quality estimates on the test folds %.4f\n", score/n, freqScore/n,
		inference.ExpectedCalibrationError(ests, outs))
	var logLoss float64
	for i, q := range ests {
		q = min(max(q, 1e-6), 1-1e-6)
		logLoss -= outs[i]*math.Log(q) + (1-outs[i])*math.Log(1-q)
	}
	fmt.Printf("  log loss of the quality estimates on the test folds %.4f (%d estimates)\n", logLoss/float64(len(ests)), len(ests))
	fmt.Printf("  ranking per fold: %v\n", rankings)
	for k, a := range alt {
		fmt.Printf("  ranking %-14s top-1 %.4f  mean score %.4f\n", k, a[0]/n, a[1]/n)
	}
	fmt.Printf("  over the %d rows with a correct model: router %.4f   most-frequent %.4f   random %.4f\n",
		int(labelled), hits/labelled, freqHits/labelled, randHits/labelled)
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func timeTraining(ctx context.Context, examples []inference.Example, opts inference.FitOptions, runs int) {
	var total, emb, train, pred []time.Duration
	var m *inference.Model
	var rep *inference.FitReport
	for r := 0; r < runs; r++ {
		start := time.Now()
		var err error
		m, rep, err = inference.Fit(ctx, examples, opts)
		if err != nil {
			log.Fatal(err)
		}
		total = append(total, time.Since(start))
		emb = append(emb, rep.EmbeddingTime)
		train = append(train, rep.TrainingTime)
	}
	fmt.Printf("train on all %d rows (%d used, %d skipped, L2 %.0e): total %v (embedding %v, classifier incl. L2 selection %v), median of %d\n",
		rep.Rows, rep.Used, rep.Skipped, rep.L2, median(total).Round(time.Millisecond), median(emb).Round(time.Millisecond),
		median(train).Round(time.Millisecond), runs)
	texts := make([]string, 500)
	for i := range texts {
		texts[i] = examples[(i*11)%len(examples)].Text
	}
	for r := 0; r < max(runs, 5); r++ {
		start := time.Now()
		if _, err := m.Predict(ctx, texts); err != nil {
			log.Fatal(err)
		}
		pred = append(pred, time.Since(start))
	}
	blob, _ := m.MarshalBinary()
	fmt.Printf("predict 500 inputs: %v (median of %d); serialised model %.1f MiB\n", median(pred).Round(time.Microsecond), len(pred), float64(len(blob))/(1<<20))
}

// benchONNX measures sentences/second on the committed tiny fixture and on a MiniLM-size
// random-weight model generated into a temporary directory (needs python3-onnx).
func benchONNX(ctx context.Context, runs int) {
	sentences := make([]string, 64)
	for i := range sentences {
		sentences[i] = fmt.Sprintf("Sentence number %d asks which model should answer a question about routing, prices and latency.", i)
	}
	measure := func(label, dir string) {
		e, err := inference.NewONNXEmbedder(ctx, dir, inference.ONNXOptions{})
		if err != nil {
			log.Fatalf("%s: %v", label, err)
		}
		defer e.Close()
		var ds []time.Duration
		for r := 0; r < runs; r++ {
			start := time.Now()
			if _, err := e.Embed(ctx, sentences); err != nil {
				log.Fatal(err)
			}
			ds = append(ds, time.Since(start))
		}
		med := median(ds)
		fmt.Printf("onnx %s (dim %d): %.1f sentences/s (%d sentences of ~20 tokens, median of %d)\n",
			label, e.Dim(), float64(len(sentences))/med.Seconds(), len(sentences), runs)
	}
	measure("tiny fixture", "inference/testdata/tiny-bert")
	tmp, err := os.MkdirTemp("", "minilm-size-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	python := "python3"
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		python = "/usr/bin/python3" // Debian's, where python3-onnx installs
	}
	cmd := exec.Command(python, "inference/testdata/tiny-bert/make_tiny_bert.py", "--out", filepath.Join(tmp, "model.onnx"),
		"--hidden", "384", "--layers", "6", "--heads", "12", "--intermediate", "1536")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		log.Printf("skipping the MiniLM-size model: %v", err)
		return
	}
	tok, err := os.ReadFile("inference/testdata/tiny-bert/tokenizer.json")
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "tokenizer.json"), tok, 0o644); err != nil {
		log.Fatal(err)
	}
	measure("MiniLM-size random weights", tmp)
}

// bestModels lists the models tied at the highest score, when it is above 0.
func bestModels(scores map[string]float64) []string {
	top := 0.0
	for _, s := range scores {
		top = max(top, s)
	}
	out := []string{}
	if top <= 0 {
		return out
	}
	for m, s := range scores {
		if s == top {
			out = append(out, m)
		}
	}
	slices.Sort(out)
	return out
}

// outcome is how well model answered ex: its score when given, else 1 for a correct model.
func outcome(ex inference.Example, model string) float64 {
	if s, ok := ex.Scores[model]; ok {
		return s
	}
	if slices.Contains(ex.Labels, model) {
		return 1
	}
	return 0
}
