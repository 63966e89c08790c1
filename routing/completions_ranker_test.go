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
