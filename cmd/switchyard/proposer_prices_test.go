package main

import (
	"testing"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// TestGatewayPricerFollowsSetRoutes: the optimizer proposer's pricer prices with the
// gateway's catalogue in force, so a deployment's own price set after start-up
// (SetRoutes, as /model/new does) is what its calls cost, not the start-up catalogue's.
func TestGatewayPricerFollowsSetRoutes(t *testing.T) {
	g, err := completions.New(completions.Options{Providers: providers.NewRegistry(), Prices: providers.DefaultCatalog(), Store: memstore.New()})
	if err != nil {
		t.Fatal(err)
	}
	p := gatewayPricer{g}
	u := providers.Usage{PromptTokens: 1000, CompletionTokens: 1000}
	before := p.Cost("openai/gpt-4o-mini", u).TotalUSD
	if before <= 0 {
		t.Fatalf("openai/gpt-4o-mini at the start-up catalogue: %v, want its list price", before)
	}
	in, out := 1e-3, 2e-3
	live := providers.DefaultCatalog().WithOwnPrices(map[string]providers.OwnPrice{"openai/gpt-4o-mini": {InputPerToken: &in, OutputPerToken: &out}})
	if err := g.SetRoutes(completions.Routes{Prices: live}); err != nil {
		t.Fatal(err)
	}
	if got := p.Cost("openai/gpt-4o-mini", u).TotalUSD; got < 2.999 || got > 3.001 {
		t.Fatalf("after SetRoutes with the deployment's own price: %v, want 3 (1000×0.001 + 1000×0.002)", got)
	}
}
