package providers_test

import (
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

func ptr(f float64) *float64 { return &f }

// A deployment's own price replaces the catalogue's for that model only: the rates it sets
// hold (flat, no long-prompt tier), those it leaves are the replaced entry's; a model the
// catalogue does not know is priced at what is set (0 for the rest), found by its exact
// name but never as another provider's canonical match; the catalogue it came from is
// unchanged.
func TestWithOwnPrices(t *testing.T) {
	cat := providers.DefaultCatalog()
	before, ok := cat.Lookup("openai/gpt-4o")
	if !ok {
		t.Fatal("gpt-4o has no price")
	}
	own := cat.WithOwnPrices(map[string]providers.OwnPrice{
		"openai/gpt-4o": {InputPerToken: ptr(1e-6)},
		"my-vllm/meta-llama/Llama-3.1-8B-Instruct": {InputPerToken: ptr(2e-7), OutputPerToken: ptr(4e-7), MaxInputTokens: 8192, MaxOutputTokens: 2048},
		"my-vllm/bge-small":                        {InputPerToken: ptr(1e-8), Embedding: true},
		"azure-prod/prod-dep":                      {OutputPerToken: ptr(3e-6), Like: "azure/gpt-4o"},
		"gemini/gemini-2.5-pro":                    {OutputPerToken: ptr(5e-6)},
	})
	got, _ := own.Lookup("openai/gpt-4o")
	if got.InputPerToken != 1e-6 || got.OutputPerToken != before.OutputPerToken || got.CacheReadPerToken != 1e-6 || !got.Known {
		t.Errorf("gpt-4o: %+v; want input 1e-6 (cache reads too), output %g as before", got, before.OutputPerToken)
	}
	if c := own.Cost("openai/gpt-4o", providers.Usage{PromptTokens: 1000, CompletionTokens: 10}); c.InputUSD != 1000*1e-6 {
		t.Errorf("gpt-4o cost %+v, want input $%g", c, 1000*1e-6)
	}
	if again, _ := cat.Lookup("openai/gpt-4o"); again.InputPerToken != before.InputPerToken {
		t.Errorf("the catalogue it came from changed: %g", again.InputPerToken)
	}
	llama, ok := own.Lookup("my-vllm/meta-llama/Llama-3.1-8B-Instruct")
	if !ok || !llama.Known || llama.InputPerToken != 2e-7 || llama.OutputPerToken != 4e-7 || llama.MaxInputTokens != 8192 || llama.MaxOutputTokens != 2048 {
		t.Errorf("self-hosted llama: %+v %v", llama, ok)
	}
	if c := own.Cost("my-vllm/meta-llama/Llama-3.1-8B-Instruct", providers.Usage{PromptTokens: 10, CompletionTokens: 5}); !c.Known || c.TotalUSD != 10*2e-7+5*4e-7 {
		t.Errorf("self-hosted llama cost %+v", c)
	}
	if p, ok := own.Lookup("together/meta-llama/Llama-3.1-8B-Instruct"); ok && p.Key == "my-vllm/meta-llama/Llama-3.1-8B-Instruct" {
		t.Errorf("another provider's model is priced as the self-hosted one: %+v", p)
	}
	if _, ok := own.Lookup("my-vllm/bge-small"); ok {
		t.Error("an embedding model's price is among the chat models'")
	}
	if e, ok := own.Embeddings().Lookup("my-vllm/bge-small"); !ok || e.InputPerToken != 1e-8 || !e.Known {
		t.Errorf("embedding price %+v %v", e, ok)
	}
	base, _ := cat.Lookup("azure/gpt-4o")
	az, ok := own.Lookup("azure-prod/prod-dep")
	if !ok || az.OutputPerToken != 3e-6 || az.InputPerToken != base.InputPerToken || az.MaxInputTokens != base.MaxInputTokens {
		t.Errorf("azure deployment like azure/gpt-4o: %+v, base %+v", az, base)
	}
	pro, _ := own.Lookup("gemini/gemini-2.5-pro")
	if len(pro.Tiers) != 0 {
		t.Errorf("an own rate kept the long-prompt tiers: %+v", pro.Tiers)
	}
	if providers.PriceKey("openai/gpt-4o") != "gpt-4o" || providers.PriceKey("together/x") != "together_ai/x" || providers.PriceKey("my-vllm/x") != "my-vllm/x" {
		t.Error("PriceKey")
	}
}
