package routing_test

import (
	"context"
	"testing"

	"github.com/switchyard-ai/switchyard/routing"
)

// jobRouters is a scripted CustomModels that also says which model a training job made
// ("" while it trains or when it failed).
type jobRouters struct {
	fakeRouters
	jobs map[string]string
}

func (j *jobRouters) JobModel(_ context.Context, owner, jobID string) (string, error) {
	m, ok := j.jobs[owner+"/"+jobID]
	if !ok {
		return "", routing.ErrNotFound
	}
	return m, nil
}

// A retrained preference keeps ranking with its earlier router until the new job
// completes, and for good when the new job fails.
func TestRetrainKeepsTheEarlierRouterUntilTheJobCompletes(t *testing.T) {
	ctx := context.Background()
	prefers := func(model string) func(string) []routing.ModelProb {
		return func(string) []routing.ModelProb {
			out := []routing.ModelProb{{Model: "acme/chat", Prob: 0.2, Quality: 0.2}, {Model: "acme/code", Prob: 0.2, Quality: 0.2}}
			for i := range out {
				if out[i].Model == model {
					out[i].Prob, out[i].Quality = 0.8, 0.8
				}
			}
			return out
		}
	}
	jr := &jobRouters{fakeRouters: fakeRouters{models: map[string]func(string) []routing.ModelProb{
		"alice/rm_chat": prefers("acme/chat"), "alice/rm_code": prefers("acme/code")}},
		jobs: map[string]string{"alice/tj_1": "rm_chat", "alice/tj_2": "", "alice/tj_3": ""}}
	sel, _ := newSelector(t, routing.Options{CustomModels: jr})
	pick := func(pref string) string {
		t.Helper()
		return mustSelect(t, sel, "alice", &routing.Request{Messages: userMsg("hello"), PreferenceID: pref,
			LLMProviders: names("acme/chat", "acme/code")}).LLMLabel
	}
	p, err := sel.BindTrainingJob(ctx, "alice", "", "", "tj_1")
	if err != nil {
		t.Fatal(err)
	}
	if got := pick(p.ID); got != "acme/chat" {
		t.Fatalf("bound to a completed job the pick is %s, want its router's acme/chat", got)
	}
	// retrain: tj_2 is still training; the earlier router (tj_1's) keeps ranking
	if _, err := sel.BindTrainingJob(ctx, "alice", p.ID, "", "tj_2"); err != nil {
		t.Fatal(err)
	}
	if got := pick(p.ID); got != "acme/chat" {
		t.Fatalf("while the retrain runs the pick is %s, want the earlier router's acme/chat", got)
	}
	jr.jobs["alice/tj_2"] = "rm_code" // it completed
	if got := pick(p.ID); got != "acme/code" {
		t.Fatalf("after the retrain completed the pick is %s, want the new router's acme/code", got)
	}
	// another retrain that fails: the router of tj_2 stays
	if _, err := sel.BindTrainingJob(ctx, "alice", p.ID, "", "tj_3"); err != nil {
		t.Fatal(err)
	}
	if got := pick(p.ID); got != "acme/code" {
		t.Fatalf("with the next retrain failed the pick is %s, want the earlier router's acme/code", got)
	}
	got, err := sel.Preference(ctx, "alice", p.ID)
	if err != nil || got.PreviousRouterModelID != "rm_code" || got.RouterTrainingJobID != "tj_3" {
		t.Fatalf("preference %+v, %v", got, err)
	}
}
