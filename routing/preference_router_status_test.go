package routing_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/routing"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// Reading a preference (show, list, rename) says when the router it follows is gone, as a
// selection under it does: router_fallback router_deleted once its router model (named, or
// trained by its job) is deleted, training_job_deleted once its job is deleted before it
// trained one; nothing while the router can rank or is still training.
func TestPreferenceReadsSayItsRouterIsGone(t *testing.T) {
	ctx := context.Background()
	models := &vanishingModels{models: map[string]bool{"rm_a": true, "rm_b": true}, jobs: map[string]string{"tj_running": "", "tj_done": "rm_b"}}
	sel := routing.NewSelector(routing.Options{Store: memstore.New(), CustomModels: models, Logger: slog.New(slog.DiscardHandler)})
	byModel, err := sel.CreatePreference(ctx, "alice", routing.PreferenceRequest{RouterModelID: "rm_a"})
	if err != nil {
		t.Fatal(err)
	}
	byRunningJob, err := sel.BindTrainingJob(ctx, "alice", "", "running", "tj_running")
	if err != nil {
		t.Fatal(err)
	}
	byDoneJob, err := sel.BindTrainingJob(ctx, "alice", "", "done", "tj_done")
	if err != nil {
		t.Fatal(err)
	}
	plain, err := sel.CreatePreference(ctx, "alice", routing.PreferenceRequest{})
	if err != nil {
		t.Fatal(err)
	}
	check := func(when string, want map[string]string) {
		t.Helper()
		for id, w := range want {
			p, err := sel.Preference(ctx, "alice", id)
			if err != nil {
				t.Fatal(err)
			}
			if p.RouterFallback != w {
				t.Errorf("%s: show %s: router_fallback %q, want %q", when, id, p.RouterFallback, w)
			}
		}
		list, err := sel.ListPreferences(ctx, "alice", store.ListFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Data) != len(want) {
			t.Fatalf("%s: listed %d preferences, want %d", when, len(list.Data), len(want))
		}
		for _, p := range list.Data {
			if p.RouterFallback != want[p.ID] {
				t.Errorf("%s: list %s: router_fallback %q, want %q", when, p.ID, p.RouterFallback, want[p.ID])
			}
		}
	}
	check("all routers there", map[string]string{byModel.ID: "", byRunningJob.ID: "", byDoneJob.ID: "", plain.ID: ""})

	models.mu.Lock()
	delete(models.models, "rm_a")
	delete(models.models, "rm_b")
	delete(models.jobs, "tj_running")
	models.mu.Unlock()
	check("routers deleted", map[string]string{byModel.ID: routing.FallbackRouterDeleted, byRunningJob.ID: routing.FallbackTrainingJobDeleted,
		byDoneJob.ID: routing.FallbackRouterDeleted, plain.ID: ""})
	name := "renamed"
	p, err := sel.UpdatePreference(ctx, "alice", byModel.ID, routing.PreferenceUpdate{Name: &name})
	if err != nil || p.RouterFallback != routing.FallbackRouterDeleted || p.RouterModelID != "rm_a" {
		t.Fatalf("rename: %+v, %v; want router_fallback router_deleted beside the router_model_id it names", p, err)
	}
	// what show says is what a selection under it says
	resp := mustSelect(t, sel, "alice", &routing.Request{Messages: userMsg("hi"), LLMProviders: names("acme/chef", "openai/gpt-4o"), PreferenceID: byDoneJob.ID})
	if resp.RouterFallback != routing.FallbackRouterDeleted {
		t.Errorf("select under %s: router_fallback %q, want router_deleted as show says", byDoneJob.ID, resp.RouterFallback)
	}
}

// The same through a real trainer (TrainerModels, which tells without running the
// router): after DeleteModel, show says router_deleted for the preference naming the model
// and for the one bound to the job that trained it, and selections under them agree.
func TestPreferenceReadsSayTrainedRouterDeleted(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	st, svc, job, status := trainCoderChef(ctx, t)
	sel := routing.NewSelector(routing.Options{Store: st, CustomModels: routing.TrainerModels(svc), Logger: slog.New(slog.DiscardHandler)})
	named, err := sel.CreatePreference(ctx, "alice", routing.PreferenceRequest{RouterModelID: status.ModelID})
	if err != nil {
		t.Fatal(err)
	}
	bound, err := sel.BindTrainingJob(ctx, "alice", "", "nd", job.TrainingJobID)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{named.ID, bound.ID} {
		if p, err := sel.Preference(ctx, "alice", id); err != nil || p.RouterFallback != "" {
			t.Fatalf("before the delete: %+v, %v; want no router_fallback", p, err)
		}
	}
	if _, err := svc.DeleteModel(ctx, "alice", status.ModelID); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{named.ID, bound.ID} {
		p, err := sel.Preference(ctx, "alice", id)
		if err != nil || p.RouterFallback != routing.FallbackRouterDeleted {
			t.Errorf("show %s after DeleteModel: %+v, %v; want router_fallback router_deleted", id, p, err)
		}
		resp := mustSelect(t, sel, "alice", &routing.Request{Messages: userMsg("hi"), LLMProviders: names("acme/chef", "acme/coder"), PreferenceID: id})
		if resp.RouterFallback != routing.FallbackRouterDeleted {
			t.Errorf("select under %s after DeleteModel: router_fallback %q, want router_deleted", id, resp.RouterFallback)
		}
	}
}
