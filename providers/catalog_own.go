package providers

import (
	"maps"
	"slices"
)

// OwnPrice is a model's own rates and limits, set for one deployment (LiteLLM's
// input_cost_per_token … of a model_list entry) rather than read from the catalogue. Rates
// are USD per token; a nil field keeps the rate of the model the catalogue already prices
// (Like's, else the model's own), or is 0 for a model it does not price, as LiteLLM reads
// a missing rate of a model it registered.
// Its JSON names are LiteLLM's.
type OwnPrice struct {
	InputPerToken         *float64 `json:"input_cost_per_token,omitempty"`
	OutputPerToken        *float64 `json:"output_cost_per_token,omitempty"`
	CacheReadPerToken     *float64 `json:"cache_read_input_token_cost,omitempty"`
	CacheCreationPerToken *float64 `json:"cache_creation_input_token_cost,omitempty"`
	// MaxInputTokens and MaxOutputTokens are the model's limits (0: the catalogue's).
	MaxInputTokens  int `json:"max_input_tokens,omitempty"`
	MaxOutputTokens int `json:"max_output_tokens,omitempty"`
	// Embedding puts the price in the catalogue of embedding models (Embeddings)
	// rather than the chat models'.
	Embedding bool `json:"embedding,omitempty"`
	// Like names the catalogue model ("provider/model") whose entry fills what the
	// fields leave unset (an Azure deployment's base model); "": the model itself.
	Like string `json:"base_model,omitempty"`
}

// rated reports whether o sets any rate.
func (o OwnPrice) rated() bool {
	return o.InputPerToken != nil || o.OutputPerToken != nil || o.CacheReadPerToken != nil || o.CacheCreationPerToken != nil
}

// setsAny reports whether o sets a rate or a limit of its own.
func (o OwnPrice) setsAny() bool {
	return o.rated() || o.MaxInputTokens > 0 || o.MaxOutputTokens > 0
}

// PriceKey returns the catalogue key Lookup tries first for model ("provider/model"): the
// key under which an entry prices that model ahead of any other. For the providers whose
// LiteLLM keys differ it is that key ("openai/gpt-4o" → "gpt-4o", "together/x" →
// "together_ai/x"); for Bedrock "bedrock/" and the model; for any other (a provider entry
// of one's own, "my-vllm/llama") model itself.
func PriceKey(model string) string {
	prov, m, err := ParseModel(model)
	if err != nil {
		return model
	}
	if prov == "bedrock" {
		return "bedrock/" + m
	}
	if pre, ok := catalogPrefix(prov); ok {
		return pre + m
	}
	return model
}

// WithOwnPrices returns a new catalogue in which each model ("provider/model") of own is
// priced at its own rates: the rates it sets replace the catalogue's, the others are those
// of the entry Lookup finds for it by name (not a canonical match: another provider's
// model), or for Like, else 0. A rate set here is flat: the replaced
// entry's long-prompt tiers are dropped once any rate is set, and a cache rate left unset
// follows the input rate set here, the reasoning rate the output rate. The price is found
// by that exact "provider/model" name only (its Key is PriceKey(model)): not by the bare
// model name another provider entry falls back to, nor as another id's canonical match,
// so a deployment's price (often 0 for a self-hosted model) prices no other deployment of
// the same model. c is not changed.
func (c *Catalog) WithOwnPrices(own map[string]OwnPrice) *Catalog {
	if len(own) == 0 {
		return c
	}
	// c is immutable: the copies share its maps but for the own prices.
	res, embed := *c, *c.Embeddings()
	res.own, embed.own = maps.Clone(c.own), maps.Clone(embed.own)
	if res.own == nil {
		res.own = map[string]Price{}
	}
	if embed.own == nil {
		embed.own = map[string]Price{}
	}
	for _, model := range slices.Sorted(maps.Keys(own)) {
		o := own[model]
		from, target := c, res.own
		if o.Embedding {
			from, target = c.Embeddings(), embed.own
		}
		like := model
		if o.Like != "" {
			like = o.Like
		}
		base, found := from.Lookup(like)
		if found && o.Like == "" && !exactKey(model, base.Key) && o.setsAny() {
			// Found by a canonical match, another provider's model: not this one's entry.
			// (An entry that sets nothing of its own, model_info.mode embedding alone,
			// only says which catalogue the model is in: it keeps the price it had.)
			found = false
		}
		key := PriceKey(model)
		p := base
		p.Key = key
		if !found {
			p = Price{Key: key}
			if prov, _, err := ParseModel(model); err == nil {
				p.Provider = catalogProvider(prov)
			}
		}
		if o.rated() {
			p.Tiers = nil
			if o.InputPerToken != nil {
				p.InputPerToken = *o.InputPerToken
				p.CacheReadPerToken, p.CacheCreationPerToken, p.CacheCreation1hPerToken = p.InputPerToken, p.InputPerToken, 2*p.InputPerToken
			}
			if o.OutputPerToken != nil {
				p.OutputPerToken, p.ReasoningPerToken = *o.OutputPerToken, *o.OutputPerToken
			}
			if o.CacheReadPerToken != nil {
				p.CacheReadPerToken = *o.CacheReadPerToken
			}
			if o.CacheCreationPerToken != nil {
				p.CacheCreationPerToken = *o.CacheCreationPerToken
			}
			p.Known = true
		}
		if o.MaxInputTokens > 0 {
			p.MaxInputTokens = o.MaxInputTokens
		}
		if o.MaxOutputTokens > 0 {
			p.MaxOutputTokens = o.MaxOutputTokens
		}
		target[model] = p
	}
	res.embed = &embed
	return &res
}

// exactKey reports whether key is one of the catalogue keys Lookup tries for model by
// name (PriceKey's, the model as given, the bare model name; Bedrock's are all exact)
// rather than a canonical match.
func exactKey(model, key string) bool {
	prov, m, err := ParseModel(model)
	if err != nil {
		return key == model
	}
	return prov == "bedrock" || key == PriceKey(model) || key == model || key == m
}

// OwnPriced reports whether model ("provider/model", exactly) has a price of its own
// (WithOwnPrices), among the chat or the embedding models: it is priced by that name
// rather than the base model its provider says it runs (an Azure deployment's).
func (c *Catalog) OwnPriced(model string) bool {
	if c == nil {
		return false
	}
	_, chat := c.own[model]
	_, embed := c.Embeddings().own[model]
	return chat || embed
}

// OwnEmbedding reports whether model ("provider/model", exactly) was given a price of its
// own among the embedding models (WithOwnPrices with OwnPrice.Embedding: LiteLLM's
// model_info.mode embedding), whether or not the catalogue lists it.
func (c *Catalog) OwnEmbedding(model string) bool {
	if c == nil {
		return false
	}
	_, ok := c.Embeddings().own[model]
	return ok
}
