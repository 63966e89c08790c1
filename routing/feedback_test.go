package routing_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/switchyard-ai/switchyard/internal/feedbacksim"
	"github.com/switchyard-ai/switchyard/routing"
)

func quietSelector() *routing.Selector {
	return routing.NewSelector(routing.Options{Logger: slog.New(slog.DiscardHandler)})
}

func feedbackData(t *testing.T) string {
	dir := filepath.Join("..", "..", "shared", "data", "routing")
	if _, err := os.Stat(filepath.Join(dir, "zeroeval", "zeroeval_train.jsonl")); err != nil {
		t.Skipf("skipping: the routing evaluation data is not at %s (../shared is present in CI): %v", dir, err)
	}
	return dir
}

// playScenario runs the named feedbacksim scenario on its source's held-out rows (skipping
// without the data).
func playScenario(t *testing.T, name string) feedbacksim.Result {
	t.Helper()
	dir := feedbackData(t)
	for _, sc := range feedbacksim.Scenarios() {
		if sc.Name != name {
			continue
		}
		rows, err := feedbacksim.HeldOut(dir, sc.Source)
		if err != nil {
			t.Fatal(err)
		}
		res, err := feedbacksim.Run(context.Background(), quietSelector(), "alice", rows, sc.Scenario)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	t.Fatalf("no scenario %q", name)
	return feedbacksim.Result{}
}

// An unknown model (prior-scored) whose real outcomes are o1-mini's on ZeroEval becomes the
// usual pick after A/B feedback, and the picks' mean score rises accordingly.
func TestFeedbackLearnsUnknownModel(t *testing.T) {
	res := playScenario(t, "unknown-model-ab")
	t.Logf("%+v", res)
	if res.Half < 100 {
		t.Fatalf("stream too short: %d prompts in the second half", res.Half)
	}
	if got := res.BaselinePicks["acme/private-model"]; got != 0 {
		t.Errorf("the default router picked the unknown model %d times; the scenario assumes it does not", got)
	}
	if got := res.PersonalPicks["acme/private-model"]; got < res.Half/2 {
		t.Errorf("after feedback the unknown (strong) model was picked %d of %d times, want at least half", got, res.Half)
	}
	if res.PersonalMean < res.BaselineMean+0.08 {
		t.Errorf("personalized mean score %.3f, default router %.3f: want at least 8 points better", res.PersonalMean, res.BaselineMean)
	}
}

// On ZeroEval, qwen2.5-7b-instruct scores far below what the default router believes (its
// llmrouter9 figures lift the belief); thumbs down on its picks stop it being picked, and
// personalization costs at most a point over the stream on a source the router knows.
func TestFeedbackCorrectsBeliefs(t *testing.T) {
	res := playScenario(t, "beliefs-vs-zeroeval")
	t.Logf("%+v", res)
	const weak = "qwen/qwen2.5-7b-instruct"
	if res.BaselinePicks[weak] < 10 {
		t.Fatalf("the default router picked %s %d times in the second half; the scenario needs it to", weak, res.BaselinePicks[weak])
	}
	if res.PersonalPicks[weak] > res.BaselinePicks[weak]/3 {
		t.Errorf("personalized picks of %s: %d, default router %d: want at most a third", weak, res.PersonalPicks[weak], res.BaselinePicks[weak])
	}
	if res.PersonalMean < res.BaselineMean-0.02 {
		t.Errorf("personalized mean score %.3f, default router %.3f", res.PersonalMean, res.BaselineMean)
	}
}

// Where the router already measured the models on the same kind of prompt, feedback on
// its picks must not make them worse: the winner's curse (a model is picked where its
// estimate happens to be high) is not a misjudgment to correct (FeedbackBiasAllowance).
// Without the allowance this scenario lost 3.6 points.
func TestFeedbackDoesNoHarmWhereRouterMeasured(t *testing.T) {
	res := playScenario(t, "beliefs-vs-mmlupro")
	if res.PersonalMean < res.BaselineMean-0.01 {
		t.Errorf("personalized mean score %.3f against the default router's %.3f on prompts it measured: feedback made picks worse",
			res.PersonalMean, res.BaselineMean)
	}
}

func TestFeedbackRules(t *testing.T) {
	ctx := context.Background()
	sel := quietSelector()
	pref, err := sel.CreatePreference(ctx, "alice", routing.PreferenceRequest{Name: "support"})
	if err != nil {
		t.Fatal(err)
	}
	req := func(pid string) *routing.Request {
		return &routing.Request{Messages: []routing.Message{{Role: "user", Content: "Solve 2x+3=7"}}, PreferenceID: pid,
			LLMProviders: []routing.Candidate{{Provider: "openai", Model: "gpt-4o"}, {Name: "acme/support-ft"}}}
	}
	resp, err := sel.Select(ctx, "alice", req(pref.ID))
	if err != nil {
		t.Fatal(err)
	}
	one, zero, half := 1.0, 0.0, 0.5
	fb := func(sess, label string, acc *float64) (*routing.FeedbackResponse, error) {
		return sel.Feedback(ctx, "alice", &routing.FeedbackRequest{SessionID: sess, Provider: routing.Candidate{Name: label}, Feedback: routing.FeedbackMetrics{Accuracy: acc}})
	}
	var ve *routing.ValidationError
	if _, err := fb(resp.SessionID, "openai/gpt-4o-mini", &one); !errors.As(err, &ve) || ve.Field != "provider" {
		t.Errorf("provider not in the session: %v", err)
	}
	if _, err := fb(resp.SessionID, "openai/gpt-4o", &half); !errors.As(err, &ve) || ve.Field != "feedback.accuracy" {
		t.Errorf("accuracy 0.5: %v", err)
	}
	if _, err := fb(resp.SessionID, "openai/gpt-4o", nil); !errors.As(err, &ve) || ve.Field != "feedback.accuracy" {
		t.Errorf("no accuracy: %v", err)
	}
	var nf *routing.NotFoundError
	if _, err := sel.Feedback(ctx, "bob", &routing.FeedbackRequest{SessionID: resp.SessionID, Provider: routing.Candidate{Name: "openai/gpt-4o"}, Feedback: routing.FeedbackMetrics{Accuracy: &one}}); !errors.As(err, &nf) || nf.Field != "session_id" {
		t.Errorf("another owner's session: %v", err)
	}
	// The unknown fine-tune starts at the prior and moves with thumbs up.
	var before float64
	for _, p := range resp.Providers {
		if p.Name == "acme/support-ft" {
			before = p.Quality
			if p.ScoreSource != routing.SourceUnknown {
				t.Errorf("score_source before feedback %q", p.ScoreSource)
			}
		}
	}
	for range 15 {
		r, err := sel.Select(ctx, "alice", req(pref.ID))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fb(r.SessionID, "acme/support-ft", &one); err != nil {
			t.Fatal(err)
		}
	}
	// Feedback again on the same candidate replaces the earlier one.
	if _, err := fb(resp.SessionID, "acme/support-ft", &zero); err != nil {
		t.Fatal(err)
	}
	got, err := fb(resp.SessionID, "acme/support-ft", &one)
	if err != nil || !got.Personalized || !got.Replaced || got.FeedbackCount != 16 {
		t.Fatalf("replacing feedback: %+v, %v", got, err)
	}
	after, err := sel.Select(ctx, "alice", req(pref.ID))
	if err != nil {
		t.Fatal(err)
	}
	if after.LLMLabel != "acme/support-ft" || after.Providers[0].ScoreSource != routing.SourceUnknown+routing.SourceFeedbackSuffix || after.Providers[0].Quality <= before {
		t.Errorf("after 16 thumbs up: %+v (quality before %.3f)", after.Providers, before)
	}
	p, err := sel.Preference(ctx, "alice", pref.ID)
	if err != nil || p.FeedbackCount != 16 || len(p.Models) != 1 || p.Models[0].Successes != 16 || p.Models[0].Adjustment <= 0 {
		t.Errorf("preference after feedback: %+v, %v", p, err)
	}
	// A session without a pref_ preference records feedback and personalizes nothing.
	plain, err := sel.Select(ctx, "alice", req(""))
	if err != nil {
		t.Fatal(err)
	}
	if r, err := fb(plain.SessionID, "openai/gpt-4o", &zero); err != nil || r.Personalized {
		t.Errorf("feedback without preference: %+v, %v", r, err)
	}
	if _, err := sel.Preference(ctx, "bob", pref.ID); !errors.As(err, &nf) {
		t.Errorf("another owner's preference: %v", err)
	}
	if err := sel.DeletePreference(ctx, "alice", pref.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := sel.Select(ctx, "alice", req(pref.ID)); !errors.As(err, &nf) || nf.Field != "preference_id" {
		t.Errorf("select with a deleted preference: %v", err)
	}
}
