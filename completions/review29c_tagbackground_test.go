package completions

import (
	"context"
	"errors"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestReview29cBackgroundRefusedByTagBudget: a background response naming a tag whose
// account is spent is refused when it is created, naming the tag, as Complete refuses it
// and as a spent key's or team's is (admissible), rather than queued to fail when it runs.
func TestReview29cBackgroundRefusedByTagBudget(t *testing.T) {
	tags := &fakeTagBudgets{accounts: map[string]*Budget{"alice/eng": NewBudget(BudgetLimits{MaxCostUSD: 0.001})}}
	h := newHarness(t, func(o *Options) { o.TagBudgets = tags })
	h.a.on("priced", step{text: "hi", usage: providers.Usage{PromptTokens: 1000, CompletionTokens: 1000}})
	first := userReq("hi", "a/priced")
	first.Tags = []string{"eng"}
	if _, err := h.g.Complete(context.Background(), Scope{Owner: "alice"}, first); err != nil {
		t.Fatal(err)
	}
	o, err := startBackgroundScoped(t, h.g, Scope{Owner: "alice"}, "alice", `{"model":"a/priced","input":"x","background":true,"tags":["eng"]}`)
	var be *BudgetExceededError
	if !errors.As(err, &be) || be.Kind != TagBudgetKind || be.Name != "eng" {
		if err == nil {
			later := waitEnded(t, h.g, "alice", o.ID)
			t.Fatalf("created %s (status %s), later read %s %+v; want the tag's refusal at create time", o.ID, o.Status, later.Status, later.Error)
		}
		t.Fatalf("a background response naming a spent tag: %v, want its refusal naming tag eng", err)
	}
}
