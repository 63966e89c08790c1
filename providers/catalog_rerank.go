package providers

// RerankMode is the catalogue mode of rerank models (LiteLLM's "rerank").
const RerankMode = "rerank"

// RerankPrice is a rerank model's catalogue entry. Rates are USD; a rate the catalogue does
// not give is 0 and its Has* flag false.
type RerankPrice struct {
	// Key is the catalogue key ("rerank-v3.5", "voyage/rerank-2.5"); Provider is LiteLLM's
	// litellm_provider.
	Key, Provider string
	// PerQuery prices a query (LiteLLM's input_cost_per_query: Cohere's search unit, a
	// query with up to 100 documents).
	PerQuery    float64
	HasPerQuery bool
	// PerToken prices a token the model read (input_cost_per_token: Jina AI, Voyage AI).
	PerToken    float64
	HasPerToken bool
}

// rerankPrice is e's rates as a rerank model's.
func (e catalogEntry) rerankPrice(key string) RerankPrice {
	return RerankPrice{Key: key, Provider: e.Provider, PerQuery: e.InputPerQuery.v, HasPerQuery: e.InputPerQuery.ok,
		PerToken: e.Input.v, HasPerToken: e.Input.ok}
}

// LookupRerank finds a rerank model given as "provider/model", as Lookup finds chat models.
func (c *Catalog) LookupRerank(model string) (RerankPrice, bool) {
	if c == nil || c.rerank == nil {
		return RerankPrice{}, false
	}
	p, ok := c.rerank.Lookup(model)
	if !ok {
		return RerankPrice{}, false
	}
	r, ok := c.rerankRates[p.Key]
	return r, ok
}

// RerankModels lists a provider's catalogued rerank models as "provider/model" strings,
// sorted, as ChatModels lists its chat models.
func (c *Catalog) RerankModels(provider string) []string {
	if c == nil || c.rerank == nil {
		return nil
	}
	return c.rerank.ChatModels(provider)
}

// RerankCost prices a rerank call of model ("provider/model") from what it was billed: by
// the query where the catalogue prices queries (Cohere's models: its search units, a call
// without any counting as one query), else by the tokens read where it prices tokens (Jina
// AI's and Voyage AI's). A model the catalogue does not list costs 0 with Known false — an
// unknown price, never a guess.
func (c *Catalog) RerankCost(model string, u RerankUsage) Cost {
	p, ok := c.LookupRerank(model)
	if !ok {
		return Cost{}
	}
	return p.Cost(u)
}

// Cost prices u at p's rates (see Catalog.RerankCost).
func (p RerankPrice) Cost(u RerankUsage) Cost {
	var usd float64
	switch {
	case p.HasPerQuery && (p.PerQuery > 0 || !p.HasPerToken || p.PerToken == 0):
		// Cohere's entries give input_cost_per_token 0 beside the query's price.
		usd = float64(max(u.SearchUnits, 1)) * p.PerQuery
	case p.HasPerToken:
		usd = float64(u.Tokens) * p.PerToken
	default:
		return Cost{}
	}
	return Cost{InputUSD: usd, TotalUSD: usd, Known: true}
}
