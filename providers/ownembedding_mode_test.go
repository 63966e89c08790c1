package providers

import "testing"

// A deployment of LiteLLM's model_info.mode embedding that sets no rates or limits of its
// own (OwnPrice{Embedding: true} alone) is only marked an embedding model: it keeps the
// price Lookup found for it before, a canonical match included (an OpenRouter deployment of
// OpenAI's embedding model was priced $0 once the mode made it "own-priced").
func TestOwnEmbeddingModeAloneKeepsPrice(t *testing.T) {
	const m = "openrouter/openai/text-embedding-3-small"
	before, ok := DefaultCatalog().Embeddings().Lookup(m)
	if !ok || before.InputPerToken == 0 {
		t.Fatalf("the catalogue prices %s at %+v (%v): the test needs a priced canonical match", m, before, ok)
	}
	c := DefaultCatalog().WithOwnPrices(map[string]OwnPrice{m: {Embedding: true}})
	after, ok := c.Embeddings().Lookup(m)
	if !ok || after.InputPerToken != before.InputPerToken || after.Known != before.Known {
		t.Errorf("with model_info.mode embedding alone %s is priced %g (known %v), was %g (known %v)", m, after.InputPerToken, after.Known, before.InputPerToken, before.Known)
	}
	if !c.OwnEmbedding(m) {
		t.Errorf("OwnEmbedding(%s) = false: the mode alone makes it an embedding model", m)
	}
	cost := c.EmbeddingCost(m, Usage{PromptTokens: 1000})
	if !cost.Known || cost.TotalUSD == 0 {
		t.Errorf("1000 tokens of %s cost %+v: want the catalogue's price", m, cost)
	}
}
