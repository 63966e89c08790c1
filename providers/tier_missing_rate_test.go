package providers_test

import (
	"math"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestReview10TierMissingRateFallsBackToBase: LiteLLM's cost calculator
// (litellm_core_utils/llm_cost_calc/utils.py, _get_token_base_cost) uses a tier's
// cache_read_input_token_cost_above_<N>k_tokens when given, else the BASE cache-read rate.
// xai/grok-4-fast-reasoning gives input/output rates above 128k and no cache-read tier, so
// a 200k-token prompt with 100k cached tokens costs 100k*4e-7 + 100k*5e-8 = 0.045 USD of
// input; Price.at scales the missing cache-read rate by the input ratio (2x) instead.
func TestReview10TierMissingRateFallsBackToBase(t *testing.T) {
	c := providers.DefaultCatalog().Cost("xai/grok-4-fast-reasoning", providers.Usage{PromptTokens: 200_000, CachedTokens: 100_000})
	if !c.Known {
		t.Fatal("price unknown")
	}
	if want := 100_000*4e-7 + 100_000*5e-8; math.Abs(c.InputUSD-want) > 1e-9 {
		t.Errorf("input cost %.6f, want %.6f (LiteLLM: base cache-read rate when the tier gives none)", c.InputUSD, want)
	}
}
