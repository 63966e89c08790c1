package routing_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/fetch"
	"github.com/switchyard-ai/switchyard/routing"
	"github.com/switchyard-ai/switchyard/store/memstore"
	"github.com/switchyard-ai/switchyard/trainer"
)

// A preference bound to a training job (Not Diamond's trainCustomRouter) ranks with the
// job's router once it completes. Deleting the job record afterwards keeps the router
// model ("a resource of its own", trainer.DeleteJob), so the preference must keep ranking
// with it; it fell back to the learned default router, silently dropping the user's
// trained router.
func TestReview20cPreferenceKeepsRouterOfDeletedJob(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
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
	defer st.Close()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc, err := trainer.New(st, trainer.WithFetcher(&fetch.Fetcher{AllowLocal: true}), trainer.WithWorkers(1), trainer.WithSeed(1),
		trainer.WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	job, err := svc.Submit(ctx, "alice", []string{(&url.URL{Scheme: "file", Path: filepath.ToSlash(path)}).String()})
	if err != nil {
		t.Fatal(err)
	}
	for {
		status, err := svc.Status(ctx, "alice", job.TrainingJobID)
		if err != nil {
			t.Fatal(err)
		}
		if status.Status == trainer.StateFailed {
			t.Fatalf("training failed: %s", status.ErrorMessage)
		}
		if status.Status == trainer.StateCompleted {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("training did not finish")
		case <-time.After(20 * time.Millisecond):
		}
	}
	sel := routing.NewSelector(routing.Options{Store: st, CustomModels: routing.TrainerModels(svc), Logger: quiet})
	pref, err := sel.BindTrainingJob(ctx, "alice", "", "nd", job.TrainingJobID)
	if err != nil {
		t.Fatal(err)
	}
	pick := func() (string, string) {
		t.Helper()
		resp, err := sel.Select(ctx, "alice", &routing.Request{Messages: userMsg("please write python code that merges two lists"),
			LLMProviders: names("acme/chef", "openai/gpt-4o", "acme/coder"), PreferenceID: pref.ID})
		if err != nil {
			t.Fatal(err)
		}
		return resp.LLMLabel, resp.Providers[0].ScoreSource
	}
	if got, src := pick(); got != "acme/coder" || src != routing.SourceRouter {
		t.Fatalf("with the completed job: %s by %s, want acme/coder by router", got, src)
	}
	if _, err := svc.DeleteJob(ctx, "alice", job.TrainingJobID); err != nil {
		t.Fatal(err)
	}
	if got, src := pick(); got != "acme/coder" || src != routing.SourceRouter {
		t.Fatalf("after the job record was deleted (its router model kept): %s by %s, want acme/coder by router", got, src)
	}
}
