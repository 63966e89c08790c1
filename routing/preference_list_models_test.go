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
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
	"github.com/switchyard-ai/switchyard/trainer"
)

// TestListPreferencesReadsRouterModelsTogether: a page of preferences each following its
// own trained router (named by router_model_id, or trained by the job it is bound to)
// reads the page's router models in one go and its training jobs in one go, as a page of
// one preference does: the store reads of a listing do not grow with the routers its
// preferences follow. What it says of each router is what reading them one by one says
// (router_deleted for the preferences of a deleted model, nothing for the others).
func TestListPreferencesReadsRouterModelsTogether(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	d := &countingDriver{Driver: memstore.NewDriver()}
	d.reset()
	st := store.New(d)
	defer st.Close()
	svc, err := trainer.New(st, trainer.WithFetcher(&fetch.Fetcher{AllowLocal: true}), trainer.WithWorkers(1), trainer.WithSeed(1),
		trainer.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	dataURL := coderChefDataset(t)
	var jobs []trainer.JobStatus
	for range 3 {
		job, err := svc.Submit(ctx, "alice", []string{dataURL})
		if err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, waitTrained(ctx, t, svc, job.TrainingJobID))
	}
	sel := routing.NewSelector(routing.Options{Store: st, CustomModels: routing.TrainerModels(svc), Logger: slog.New(slog.DiscardHandler)})
	byModel := map[string]string{} // preference id → the model it follows
	for _, j := range jobs {
		p, err := sel.CreatePreference(ctx, "alice", routing.PreferenceRequest{RouterModelID: j.ModelID})
		if err != nil {
			t.Fatal(err)
		}
		byModel[p.ID] = j.ModelID
		if p, err = sel.BindTrainingJob(ctx, "alice", "", "", j.TrainingJobID); err != nil {
			t.Fatal(err)
		}
		byModel[p.ID] = j.ModelID
	}
	if _, err := svc.DeleteModel(ctx, "alice", jobs[0].ModelID); err != nil {
		t.Fatal(err)
	}
	d.reset()
	list, err := sel.ListPreferences(ctx, "alice", store.ListFilter{})
	if err != nil {
		t.Fatal(err)
	}
	modelReads, jobReads := d.reads(store.RouterModels), d.reads(store.TrainingJobs)
	if len(list.Data) != 6 {
		t.Fatalf("listed %d preferences, want 6", len(list.Data))
	}
	for _, p := range list.Data {
		want := ""
		if byModel[p.ID] == jobs[0].ModelID {
			want = routing.FallbackRouterDeleted
		}
		if p.RouterFallback != want {
			t.Errorf("%s (router %s): router_fallback %q, want %q", p.ID, byModel[p.ID], p.RouterFallback, want)
		}
		one, err := sel.Preference(ctx, "alice", p.ID)
		if err != nil || one.RouterFallback != p.RouterFallback {
			t.Errorf("%s: read alone says router_fallback %q (%v), the listing %q", p.ID, one.RouterFallback, err, p.RouterFallback)
		}
	}
	if modelReads != 1 || jobReads != 1 {
		t.Errorf("listing 6 preferences of 3 router models and 3 jobs read the router models %d times and the jobs %d times, want once each", modelReads, jobReads)
	}
}

// coderChefDataset writes a training dataset (python prompts acme/coder's, cooking ones
// acme/chef's) and returns its file URL.
func coderChefDataset(t *testing.T) string {
	t.Helper()
	type record struct {
		Problem       string   `json:"problem"`
		CorrectModels []string `json:"correct_models"`
	}
	var recs []record
	for _, p := range []string{"write a python function to reverse a list", "fix this python bug in my loop",
		"how do I sort a dict by value in python", "python code to parse json", "debug my python script", "implement binary search in python"} {
		recs = append(recs, record{p, []string{"acme/coder"}})
	}
	for _, p := range []string{"how long should I boil an egg", "recipe for banana bread", "what spices go with lamb",
		"how to make a sourdough starter", "best way to roast vegetables", "easy pasta sauce recipe"} {
		recs = append(recs, record{p, []string{"acme/chef"}})
	}
	data, _ := json.Marshal(recs)
	path := filepath.Join(t.TempDir(), "train.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(path)}).String()
}

// waitTrained polls alice's job until it ends and returns its completed status.
func waitTrained(ctx context.Context, t *testing.T, svc *trainer.Service, jobID string) trainer.JobStatus {
	t.Helper()
	for {
		st, err := svc.Status(ctx, "alice", jobID)
		if err != nil {
			t.Fatal(err)
		}
		switch st.Status {
		case trainer.StateCompleted:
			return st
		case trainer.StateFailed:
			t.Fatalf("training failed: %s", st.ErrorMessage)
		}
		select {
		case <-ctx.Done():
			t.Fatal("training did not finish")
		case <-time.After(20 * time.Millisecond):
		}
	}
}
