package providers_test

import (
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestFineTunePrice: an OpenAI fine-tuned model's id is priced at its base model's
// fine-tuning entry, as LiteLLM prices it (it had no price: cost 0, unknown); an id of a
// base with no fine-tuning entry stays unpriced.
func TestFineTunePrice(t *testing.T) {
	cat := providers.DefaultCatalog()
	for id, key := range map[string]string{
		"openai/ft:gpt-4o-mini-2024-07-18:org::abc":              "ft:gpt-4o-mini-2024-07-18",
		"ft:gpt-4o-2024-08-06:my-org:suffix:id1":                 "ft:gpt-4o-2024-08-06",
		"openai/ft:gpt-3.5-turbo-0301:org::x":                    "ft:gpt-3.5-turbo",
		"openai/ft:gpt-4o-mini-2024-07-18:org::abc:ckpt-step-88": "ft:gpt-4o-mini-2024-07-18",
	} {
		p, ok := cat.Lookup(id)
		want, _ := cat.Lookup(key)
		if !ok || !p.Known || p.InputPerToken != want.InputPerToken || p.OutputPerToken != want.OutputPerToken || want.InputPerToken == 0 {
			t.Errorf("Lookup(%q) = %+v, %v; want %s's rates %+v", id, p, ok, key, want)
		}
	}
	if p, ok := cat.Lookup("openai/ft:no-such-base:org::x"); ok && p.Known {
		t.Errorf("a fine-tune of an unknown base: %+v, want no price", p)
	}
}
