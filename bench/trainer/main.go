// Command trainer measures custom router training and prediction through the trainer
// service: a full training job on a dataset file (file:// URL, local URLs allowed) with a
// cold embedding cache, a retrain of the same data with the cache warm, and the latency of
// predicting 500 inputs (the first call, which decodes the weights, and warm calls).
// Medians over -runs runs are printed as Markdown rows for BENCHMARKS.md.
//
//	go run ./bench/trainer -data ../shared/data/routing/llmrouter9_train.jsonl -runs 3
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/switchyard-ai/switchyard/fetch"
	"github.com/switchyard-ai/switchyard/inference"
	"github.com/switchyard-ai/switchyard/store/memstore"
	"github.com/switchyard-ai/switchyard/trainer"
)

func main() {
	data := flag.String("data", "../shared/data/routing/llmrouter9_train.jsonl", "training data file (JSON, JSONL or CSV)")
	runs := flag.Int("runs", 3, "runs per measurement")
	predictCalls := flag.Int("predict-calls", 10, "warm predict calls per run")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	maxIter := flag.Int("max-iter", 0, "cap L-BFGS iterations per fit (0: the default); memory does not depend on it, so a small cap measures the peak memory of a large data set quickly")
	flag.Parse()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	abs, err := filepath.Abs(*data)
	if err != nil {
		log.Fatal(err)
	}
	inputs, err := firstProblems(abs, trainer.MaxInputs)
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	var total, embed, fit, retrain, coldPredict, warmPredict, jobCPU []float64
	var last trainer.JobStatus
	var details trainer.ModelDetails
	for r := range *runs {
		svc, err := trainer.New(memstore.New(),
			trainer.WithFetcher(&fetch.Fetcher{AllowLocal: true}),
			trainer.WithLogger(slog.New(slog.DiscardHandler)),
			trainer.WithFitOptions(func(o *inference.FitOptions) { o.MaxIterations = *maxIter }))
		if err != nil {
			log.Fatal(err)
		}
		if err := svc.Start(ctx); err != nil {
			log.Fatal(err)
		}
		cpu0 := cpuSeconds()
		st := runJob(ctx, svc, "file://"+abs)
		jobCPU = append(jobCPU, cpuSeconds()-cpu0)
		total = append(total, st.TrainingConfig.Timing.TotalTimeSeconds)
		embed = append(embed, st.TrainingConfig.Timing.EmbeddingTimeSeconds)
		fit = append(fit, st.TrainingConfig.Timing.TrainingTimeSeconds)
		last = st
		details, err = svc.Model(ctx, "bench", st.ModelID)
		if err != nil {
			log.Fatal(err)
		}

		start := time.Now()
		if _, err := svc.Predict(ctx, "bench", st.ModelID, inputs); err != nil {
			log.Fatal(err)
		}
		coldPredict = append(coldPredict, time.Since(start).Seconds())
		for range *predictCalls {
			start := time.Now()
			if _, err := svc.Predict(ctx, "bench", st.ModelID, inputs); err != nil {
				log.Fatal(err)
			}
			warmPredict = append(warmPredict, time.Since(start).Seconds())
		}

		re := runJob(ctx, svc, "file://"+abs)
		retrain = append(retrain, re.TrainingConfig.Timing.TotalTimeSeconds)
		svc.Close()
		fmt.Fprintf(os.Stderr, "run %d: total %.2fs (embedding %.2fs, training %.2fs), retrain %.2fs, predict cold %.0fms\n",
			r+1, total[r], embed[r], fit[r], retrain[r], coldPredict[r]*1000)
	}
	cfg := last.TrainingConfig
	m := details.Metrics
	var load string
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		load = ", load average " + strings.Join(strings.Fields(string(b))[:3], " ")
	}
	fmt.Printf("machine: %d CPUs%s, %s/%s, GOMAXPROCS %d\n", runtime.NumCPU(), load, runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0))
	fmt.Printf("data: %s, %d rows (%d skipped: no correct model), %d classes, embedder %s\n\n",
		filepath.Base(abs), cfg.Rows, cfg.SkippedRows, len(cfg.Classes), cfg.EmbeddingModel)
	fmt.Println("| Measurement | Median | Runs |")
	fmt.Println("|---|---|---|")
	fmt.Printf("| Training job, total_time_seconds (fetch, parse, held-out fit + scoring, final fit) | %.2f s | %d |\n", median(total), *runs)
	fmt.Printf("| … CPU time of the job (user+system, all threads; contention-independent) | %.2f s | %d |\n", median(jobCPU), *runs)
	fmt.Printf("| … of which embedding_time_seconds | %.2f s | %d |\n", median(embed), *runs)
	fmt.Printf("| … of which training_time_seconds (classifier fits) | %.2f s | %d |\n", median(fit), *runs)
	fmt.Printf("| Retrain on the same data, embedding cache warm | %.2f s | %d |\n", median(retrain), *runs)
	fmt.Printf("| Predict 500 inputs, first call (decodes the weights) | %.0f ms | %d |\n", median(coldPredict)*1000, *runs)
	fmt.Printf("| Predict 500 inputs, model cached | %.0f ms | %d |\n", median(warmPredict)*1000, len(warmPredict))
	fmt.Printf("\nheld-out metrics (%d rows, last run): top1_hit_rate %.3f, top3_hit_rate %.3f, accuracy %.3f; baseline (always %s) top1 %.3f\n",
		m.HoldoutRows, m.Top1HitRate, m.Top3HitRate, m.Accuracy, m.BaselineModel, m.BaselineTop1HitRate)
}

func runJob(ctx context.Context, svc *trainer.Service, url string) trainer.JobStatus {
	job, err := svc.Submit(ctx, "bench", []string{url})
	if err != nil {
		log.Fatal(err)
	}
	for {
		st, err := svc.Status(ctx, "bench", job.TrainingJobID)
		if err != nil {
			log.Fatal(err)
		}
		switch st.Status {
		case trainer.StateCompleted:
			return st
		case trainer.StateFailed:
			log.Fatalf("job failed: %s", st.ErrorMessage)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// firstProblems reads the problem field of the first n JSONL records.
func firstProblems(path string, n int) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	var out []string
	for sc.Scan() && len(out) < n {
		var rec struct {
			Problem string `json:"problem"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return nil, fmt.Errorf("%s: %w (the benchmark reads inputs from a JSONL file)", path, err)
		}
		out = append(out, rec.Problem)
	}
	return out, sc.Err()
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
