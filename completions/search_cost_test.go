package completions

import (
	"context"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// searchPrices prices every model at one dollar per million tokens each way and a cent per
// web search.
type searchPrices struct{}

func (searchPrices) Cost(model string, u providers.Usage) providers.Cost {
	p := providers.Price{Known: true, InputPerToken: 1e-6, OutputPerToken: 1e-6, CacheReadPerToken: 1e-6, CacheCreationPerToken: 1e-6,
		ReasoningPerToken: 1e-6, SearchPerQuery: 0.01}
	return p.Cost(u)
}

// TestWebSearchFeesAreSpent: the searches a provider's own web search made are priced apart
// from the tokens (search_cost; total_tokens_cost stays the tokens'), and what a budget,
// whose key pays for them, is charged includes them.
func TestWebSearchFeesAreSpent(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.Prices = searchPrices{} })
	h.a.on("m", step{text: "Found it.", usage: providers.Usage{PromptTokens: 1000, CompletionTokens: 1000, WebSearches: 3}})
	b := NewBudget(BudgetLimits{})
	resp, err := h.g.Complete(context.Background(), Scope{Owner: "o", Budget: b}, userReq("Search the news.", "a/m"))
	if err != nil {
		t.Fatal(err)
	}
	c := resp.Usage.Costs
	if resp.Usage.WebSearches != 3 || c.TotalTokensCost != 0.002 || c.SearchCost != 0.03 || c.Spent() != 0.032 {
		t.Errorf("usage %+v", resp.Usage)
	}
	if used := b.Used(context.Background()); used.CostUSD != 0.032 {
		t.Errorf("the budget was charged %v, want tokens and searches, 0.032", used.CostUSD)
	}
}
