package routing_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/fetch"
	"github.com/switchyard-ai/switchyard/routing"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
	"github.com/switchyard-ai/switchyard/trainer"
)

// TestPreferenceFromTrainingJob trains a router through the custom-router library (a
// trainer.Service job on a dataset URL) and routes with its model_id as preference_id.
func TestPreferenceFromTrainingJob(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	st, svc, _, status := trainCoderChef(ctx, t)

	sel := routing.NewSelector(routing.Options{Store: st, CustomModels: routing.TrainerModels(svc)})
	cands := func() []routing.Candidate { return names("acme/chef", "openai/gpt-4o", "acme/coder") }
	for prompt, want := range map[string]string{
		"please write python code that merges two lists": "acme/coder",
		"what is a good recipe for tomato soup":          "acme/chef",
	} {
		resp, err := sel.Select(ctx, "alice", &routing.Request{Messages: userMsg(prompt), LLMProviders: cands(), PreferenceID: status.ModelID})
		if err != nil {
			t.Fatal(err)
		}
		if resp.LLMLabel != want || resp.Providers[0].ScoreSource != routing.SourceRouter {
			t.Errorf("%q routed to %s, want %s: %+v", prompt, resp.LLMLabel, want, resp.Providers)
		}
	}
	// Another owner's model id is not found.
	_, err := sel.Select(ctx, "bob", &routing.Request{Messages: userMsg("x"), LLMProviders: cands(), PreferenceID: status.ModelID})
	var nf *routing.NotFoundError
	if !errors.As(err, &nf) || nf.Field != "preference_id" {
		t.Errorf("bob with alice's model: %v", err)
	}
}

// trainCoderChef trains alice a router through a trainer.Service job on a dataset URL:
// python prompts are acme/coder's, cooking ones acme/chef's. It returns the store, the
// running service, the job and its completed status.
func trainCoderChef(ctx context.Context, t *testing.T) (*store.Store, *trainer.Service, trainer.Job, trainer.JobStatus) {
	t.Helper()
	type record struct {
		Problem       string   `json:"problem"`
		CorrectModels []string `json:"correct_models"`
	}
	var recs []record
	for _, p := range []string{"write a python function to reverse a list", "fix this python bug in my loop",
		"how do I sort a dict by value in python", "python code to parse json", "debug my python script",
		"implement binary search in python", "python class for a stack", "python regex to match emails"} {
		recs = append(recs, record{p, []string{"acme/coder"}})
	}
	for _, p := range []string{"how long should I boil an egg", "recipe for banana bread", "what spices go with lamb",
		"how to make a sourdough starter", "best way to roast vegetables", "substitute for butter in cookies",
		"how to cook rice on the stove", "easy pasta sauce recipe"} {
		recs = append(recs, record{p, []string{"acme/chef"}})
	}
	data, _ := json.Marshal(recs)
	path := filepath.Join(t.TempDir(), "train.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	st := memstore.New()
	t.Cleanup(func() { st.Close() })
	svc, err := trainer.New(st, trainer.WithFetcher(&fetch.Fetcher{AllowLocal: true}), trainer.WithWorkers(1), trainer.WithSeed(1),
		trainer.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	job, err := svc.Submit(ctx, "alice", []string{(&url.URL{Scheme: "file", Path: filepath.ToSlash(path)}).String()})
	if err != nil {
		t.Fatal(err)
	}
	var status trainer.JobStatus
	for {
		if status, err = svc.Status(ctx, "alice", job.TrainingJobID); err != nil {
			t.Fatal(err)
		}
		if status.Status == trainer.StateCompleted || status.Status == trainer.StateFailed {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("training did not finish")
		case <-time.After(20 * time.Millisecond):
		}
	}
	if status.Status != trainer.StateCompleted {
		t.Fatalf("training failed: %s", status.ErrorMessage)
	}
	return st, svc, job, status
}
