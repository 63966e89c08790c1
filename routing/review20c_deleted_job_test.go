package routing_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/routing"
)

// A preference bound to a training job (Not Diamond's trainCustomRouter) ranks with the
// job's router once it completes. Deleting the job record afterwards keeps the router
// model ("a resource of its own", trainer.DeleteJob), so the preference must keep ranking
// with it; it fell back to the learned default router, silently dropping the user's
// trained router.
func TestReview20cPreferenceKeepsRouterOfDeletedJob(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	st, svc, job, _ := trainCoderChef(ctx, t)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
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
