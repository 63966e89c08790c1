package routing_test

import (
	"context"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/routing"
)

func TestProvidersCatalog(t *testing.T) {
	cat := routing.ProvidersCatalog(providers.DefaultCatalog())
	info, ok := cat.ModelInfo("openai/gpt-4o-mini")
	if !ok || info.Price == nil || info.SupportsTools == nil || !*info.SupportsTools {
		t.Fatalf("gpt-4o-mini: %+v %v", info, ok)
	}
	big, _ := cat.ModelInfo("openai/gpt-4o")
	if big.Price == nil || *big.Price <= *info.Price {
		t.Errorf("gpt-4o should cost more per token than gpt-4o-mini: %v vs %v", big.Price, info.Price)
	}
	if _, ok := cat.ModelInfo("acme/no-such-model"); ok {
		t.Error("unknown model found")
	}
	// With the catalogue, tradeoff cost can price candidates the caller did not price.
	s, _ := newSelector(t, routing.Options{Catalog: cat, Tolerance: 0.2})
	resp, err := s.Select(context.Background(), "", &routing.Request{Messages: userMsg("hi"),
		LLMProviders: names("openai/gpt-4o", "openai/gpt-4o-mini"), Tradeoff: "cost"})
	if err != nil {
		t.Fatal(err)
	}
	if resp.LLMLabel != "openai/gpt-4o-mini" {
		t.Errorf("cost tradeoff with catalogue picked %s", resp.LLMLabel)
	}
}
