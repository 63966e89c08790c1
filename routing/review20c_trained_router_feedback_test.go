package routing_test

import (
	"context"
	"testing"

	"github.com/switchyard-ai/switchyard/routing"
)

// A trained router ranks the candidates it knows by its ranking score (Prob: the softmax
// probability of being best, or a blend), which is on another scale than its quality
// estimates. A preference on such a router corrected a rated candidate by setting its
// score to its corrected quality estimate, so any feedback — even a thumbs down — lifted
// it from the softmax scale (0.2 here) to the quality scale (about 0.68) and above the
// router's favourite (0.5). A thumbs down must never raise a candidate, and feedback
// within the bias allowance must leave the order as the router made it.
func TestReview20cFeedbackKeepsTrainedRouterScale(t *testing.T) {
	ctx := context.Background()
	fake := &fakeRouters{models: map[string]func(string) []routing.ModelProb{
		"alice/r1": func(string) []routing.ModelProb {
			return []routing.ModelProb{{Model: "acme/a", Prob: 0.5, Quality: 0.8}, {Model: "acme/b", Prob: 0.3, Quality: 0.75},
				{Model: "acme/c", Prob: 0.2, Quality: 0.7}}
		},
	}}
	sel, _ := newSelector(t, routing.Options{CustomModels: fake})
	pref, err := sel.CreatePreference(ctx, "alice", routing.PreferenceRequest{RouterModelID: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	req := func() *routing.Request {
		return &routing.Request{Messages: userMsg("hi"), LLMProviders: names("acme/a", "acme/b", "acme/c"), PreferenceID: pref.ID}
	}
	first := mustSelect(t, sel, "alice", req())
	if got := labels(first.Providers); got[0] != "acme/a" || got[2] != "acme/c" {
		t.Fatalf("before feedback: %v, want the router's order a, b, c", got)
	}
	zero := 0.0
	if _, err := sel.Feedback(ctx, "alice", &routing.FeedbackRequest{SessionID: first.SessionID,
		Provider: routing.Candidate{Name: "acme/c"}, Feedback: routing.FeedbackMetrics{Accuracy: &zero}}); err != nil {
		t.Fatal(err)
	}
	after := mustSelect(t, sel, "alice", req())
	if got := labels(after.Providers); got[0] != "acme/a" || got[2] != "acme/c" {
		t.Fatalf("after a thumbs down on acme/c: %v (%+v), want acme/c still last", got, after.Providers)
	}
	for _, p := range after.Providers {
		if p.Name == "acme/c" && !(p.Score < 0.2 && p.Quality < 0.7) {
			t.Errorf("acme/c after a thumbs down: score %v quality %v, want both below the router's 0.2 and 0.7", p.Score, p.Quality)
		}
	}
}
