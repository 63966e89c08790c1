// Command embedded uses Switchyard as a library inside a Go program, without the HTTP
// server: it trains a custom router from the bundled example dataset (examples/data) with
// the trainer package on an in-memory store, predicts with it, and then lets the routing
// package pick a model for a conversation with the trained router as preference.
//
//	go run ./examples/embedded                 # from the repository root
//	go run ./examples/embedded --data DIR      # another directory with routing_train.json/.csv
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/switchyard-ai/switchyard/fetch"
	"github.com/switchyard-ai/switchyard/routing"
	"github.com/switchyard-ai/switchyard/store/memstore"
	"github.com/switchyard-ai/switchyard/trainer"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	data := flag.String("data", "examples/data", "directory holding routing_train.json and routing_train.csv")
	flag.Parse()
	if err := run(ctx, *data, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "embedded:", err)
		os.Exit(1)
	}
}

// owner scopes jobs and models; a service embedding Switchyard would use its own user ids.
const owner = "example-user"

func run(ctx context.Context, dataDir string, out io.Writer) error {
	st := memstore.New()
	defer st.Close()

	// The trainer fetches dataset files by URL. Local files need AllowLocal (the server's
	// --allow-local-urls); remote http(s) URLs work with the zero Fetcher.
	svc, err := trainer.New(st,
		trainer.WithFetcher(&fetch.Fetcher{AllowLocal: true}),
		trainer.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
	)
	if err != nil {
		return err
	}
	if err := svc.Start(ctx); err != nil {
		return err
	}
	defer svc.Close()

	var urls []string
	for _, name := range []string{"routing_train.json", "routing_train.csv"} {
		abs, err := filepath.Abs(filepath.Join(dataDir, name))
		if err != nil {
			return err
		}
		if _, err := os.Stat(abs); err != nil {
			return fmt.Errorf("dataset file: %w (run from the repository root or pass --data)", err)
		}
		urls = append(urls, (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String())
	}
	job, err := svc.Submit(ctx, owner, urls)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "training job %s %s\n", job.TrainingJobID, job.Status)

	// Poll until the job ends, as a client of the HTTP API would.
	var status trainer.JobStatus
	for {
		status, err = svc.Status(ctx, owner, job.TrainingJobID)
		if err != nil {
			return err
		}
		if status.Status == trainer.StateCompleted || status.Status == trainer.StateFailed {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	if status.Status == trainer.StateFailed {
		return errors.New("training failed: " + status.ErrorMessage)
	}
	model, err := svc.Model(ctx, owner, status.ModelID)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "router %s: %d models, embedder %s\n", model.ModelID, model.NumClasses, model.EmbeddingModel)
	if m := model.Metrics; m != nil {
		fmt.Fprintf(out, "held-out top-1 hit rate %.1f%% (always %s: %.1f%%), top-3 %.1f%%\n",
			100*m.Top1HitRate, m.BaselineModel, 100*m.BaselineTop1HitRate, 100*m.Top3HitRate)
	}

	prompts := []string{
		"A train leaves at 3pm travelling 60 miles per hour. How far has it gone by 5:30pm?",
		"Sort these words alphabetically: pear, apple, fig.",
		"Which of the following is a mammal? A) shark B) dolphin C) trout",
	}
	pred, err := svc.Predict(ctx, owner, model.ModelID, prompts)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "\nprompt\ttop model\tconfidence")
	for i, p := range pred.Predictions {
		fmt.Fprintf(tw, "%s\t%s\t%.3f\n", shorten(prompts[i], 45), p.TopModel, p.TopProb)
	}
	tw.Flush()

	// Model selection with the trained router as preference: its probabilities rank the
	// candidates it knows; the others follow, ranked by the default scorer.
	sel := routing.NewSelector(routing.Options{Store: st, CustomModels: routing.TrainerModels(svc)})
	req, err := routing.ParseRequest([]byte(fmt.Sprintf(`{
		"messages": [{"role": "user", "content": %q}],
		"llm_providers": [{"provider": "qwen", "model": "qwen2.5-7b-instruct"},
		                  {"provider": "meta", "model": "llama-3.1-8b-instruct"},
		                  {"provider": "openai", "model": "gpt-4o-mini"}],
		"preference_id": %q}`, prompts[0], model.ModelID)))
	if err != nil {
		return err
	}
	res, err := sel.Select(ctx, owner, req)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\nmodel selection with preference_id=%s → %s\n", model.ModelID, res.LLMLabel)
	for _, p := range res.Providers {
		fmt.Fprintf(out, "  %d. %s/%s  score %.3f (%s)\n", p.Rank, p.Provider, p.Model, p.Score, p.ScoreSource)
	}
	return nil
}

func shorten(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
