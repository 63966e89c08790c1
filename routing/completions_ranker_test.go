package routing

import (
	"context"
	"fmt"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

func TestCompletionsRankerOrdersByQuality(t *testing.T) {
	sel := NewSelector(Options{Store: memstore.New()})
	r := CompletionsRanker{Selector: sel}
	msgs := []providers.Message{{Role: "user", Content: "Prove that there are infinitely many primes."}}
	// The default router estimates gpt-4o far above Llama 3.1 8B on a proof (0.78 against
	// 0.55); the given order is the reverse.
	got, err := r.Rank(context.Background(), msgs, []string{"meta-llama/llama-3.1-8b-instruct", "openai/gpt-4o"})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[openai/gpt-4o meta-llama/llama-3.1-8b-instruct]" {
		t.Fatalf("ranked %v", got)
	}
	// Every model comes back exactly once, models with slashes in their names included.
	in := []string{"openrouter/meta-llama/llama-3-8b", "openai/gpt-4o", "acme/unknown"}
	got, err = r.Rank(context.Background(), msgs, in)
	if err != nil || len(got) != 3 {
		t.Fatalf("%v %v", got, err)
	}
	seen := map[string]bool{}
	for _, m := range got {
		seen[m] = true
	}
	for _, m := range in {
		if !seen[m] {
			t.Fatalf("%s lost: %v", m, got)
		}
	}
	if got[0] != "openai/gpt-4o" {
		t.Fatalf("known strong model not first: %v", got)
	}
}

// RankTradeoff puts the cheapest model within the router's tolerance of the best first (a
// model group's tradeoff): on this question the learned router puts Claude 3.5 Sonnet
// (0.82) above Mistral Large (0.80), which is within its tolerance at under half the price.
func TestCompletionsRankerTradeoff(t *testing.T) {
	sel := NewSelector(Options{Store: memstore.New(), Catalog: ProvidersCatalog(providers.DefaultCatalog())})
	r := CompletionsRanker{Selector: sel}
	msgs := []providers.Message{{Role: "user", Content: "Solve: 12 * 13 = ?"}}
	models := []string{"mistral/mistral-large-latest", "anthropic/claude-3-5-sonnet-20241022"}
	got, err := r.Rank(context.Background(), msgs, append([]string(nil), models...))
	if err != nil || fmt.Sprint(got) != "[anthropic/claude-3-5-sonnet-20241022 mistral/mistral-large-latest]" {
		t.Fatalf("by quality: %v, %v", got, err)
	}
	got, err = r.RankTradeoff(context.Background(), msgs, append([]string(nil), models...), "cost")
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[mistral/mistral-large-latest anthropic/claude-3-5-sonnet-20241022]" {
		t.Fatalf("cost tradeoff ranked %v, want the cheaper model first", got)
	}
	if _, err := r.RankTradeoff(context.Background(), msgs, models, "size"); err == nil {
		t.Error("an unknown tradeoff ranked without error")
	}
}
