package completions

import (
	"context"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// The cost of tag budgets to a request naming two tags: neither with an account (two
// store reads), or one with a stored account (a read, and the account reserved and charged
// in the request's store transactions).
func benchTagged(b *testing.B, withBudget bool) {
	st := memstore.New()
	p := newFake("openai").on("gpt-4o-mini", step{text: "Paris is the capital of France and its largest city.", usage: providers.Usage{PromptTokens: 12, CompletionTokens: 10}})
	g, err := New(Options{Providers: fakeRegistry{"openai": p}, Prices: providers.DefaultCatalog(), Store: st})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if withBudget {
		if err := PutSharedBudget(ctx, st, TagBudgetID("k", "team:search"), BudgetLimits{MaxCostUSD: 1e9}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		req := userReq("What is the capital of France?", "openai/gpt-4o-mini")
		req.Tags = []string{"team:search", "feature:summary"}
		if _, err := g.Complete(ctx, Scope{Owner: "k"}, req); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCompleteTagged(b *testing.B)           { benchTagged(b, false) }
func BenchmarkCompleteTaggedWithBudget(b *testing.B) { benchTagged(b, true) }
