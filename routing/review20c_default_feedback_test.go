package routing_test

import (
	"context"
	"testing"

	"github.com/switchyard-ai/switchyard/routing"
)

// A selection under a pref_ preference that the request's default answered (its timeout
// passed) ranked nothing: the session keeps no base estimate for the default. Feedback on
// it is recorded with the session but must not teach the preference: counted against an
// "estimate" of 0, one thumbs up made a correction of +4.4 logits for the model.
func TestReview20cFeedbackOnDefaultAnswerDoesNotPersonalize(t *testing.T) {
	ctx := context.Background()
	sel, _ := newSelector(t, routing.Options{})
	pref, err := sel.CreatePreference(ctx, "o", routing.PreferenceRequest{})
	if err != nil {
		t.Fatal(err)
	}
	tiny := 1e-9
	req := &routing.Request{Messages: userMsg("hi"), LLMProviders: names("acme/x", "acme/y"), PreferenceID: pref.ID,
		Timeout: &tiny, Default: &routing.DefaultChoice{Index: new(int)}}
	resp := mustSelect(t, sel, "o", req)
	if resp.Providers[0].ScoreSource != routing.SourceDefault {
		t.Fatalf("the selection was ranked (%+v); the test needs the default's answer", resp.Providers)
	}
	for _, a := range []float64{1, 1} { // the second replaces the first
		fb, err := sel.Feedback(ctx, "o", &routing.FeedbackRequest{SessionID: resp.SessionID,
			Provider: routing.Candidate{Name: "acme/x"}, Feedback: routing.FeedbackMetrics{Accuracy: &a}})
		if err != nil {
			t.Fatal(err)
		}
		if fb.Personalized || fb.FeedbackCount != 0 {
			t.Errorf("feedback on the default's answer: %+v, want it recorded with the session only", fb)
		}
	}
	p, err := sel.Preference(ctx, "o", pref.ID)
	if err != nil {
		t.Fatal(err)
	}
	if p.FeedbackCount != 0 || len(p.Models) != 0 {
		t.Fatalf("the preference learned from an unranked default answer: count %d, models %+v", p.FeedbackCount, p.Models)
	}
	sess, err := sel.Session(ctx, "o", resp.SessionID)
	if err != nil || sess.Ranked[0].Feedback == nil || *sess.Ranked[0].Feedback != 1 {
		t.Fatalf("the session does not keep the feedback: %+v %v", sess, err)
	}
}
