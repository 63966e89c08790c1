package providers_test

import (
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// A self-hosted model the catalogue has no entry for, priced by its deployment at an input
// rate only, costs 0 for its output (as the README says: "0 for a model the catalogue does
// not know"), not another provider's rate found by a canonical match of its name (OCI's
// meta.llama-3.1-8b-instruct for a vLLM's meta-llama/Llama-3.1-8B-Instruct).
func TestReview26hOwnPriceNotFilledByCanonicalMatch(t *testing.T) {
	cat := providers.DefaultCatalog()
	const model = "my-vllm/meta-llama/Llama-3.1-8B-Instruct"
	if p, ok := cat.Lookup(model); !ok || p.Key == "meta-llama/Llama-3.1-8B-Instruct" {
		t.Skipf("the catalogue has no canonical match for %s (or an exact one): %+v", model, p)
	}
	own := cat.WithOwnPrices(map[string]providers.OwnPrice{model: {InputPerToken: ptr(1e-7)}})
	p, _ := own.Lookup(model)
	if p.InputPerToken != 1e-7 || p.OutputPerToken != 0 || p.MaxInputTokens != 0 {
		t.Errorf("%s: %+v; want input 1e-7, output 0 and no limits of another provider's model", model, p)
	}
	// A model the catalogue prices by an exact key keeps that entry's other rates.
	own = cat.WithOwnPrices(map[string]providers.OwnPrice{"openai/gpt-4o": {InputPerToken: ptr(1e-7)}})
	want, _ := cat.Lookup("openai/gpt-4o")
	if p, _ := own.Lookup("openai/gpt-4o"); p.OutputPerToken != want.OutputPerToken || p.MaxInputTokens != want.MaxInputTokens {
		t.Errorf("gpt-4o: %+v", p)
	}
}
