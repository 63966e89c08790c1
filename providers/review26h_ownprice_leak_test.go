package providers_test

import (
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// A deployment's own price is its member's only: a custom price of openai/gpt-4o (whose
// catalogue key is the bare "gpt-4o") must not price gpt-4o called on another provider
// entry (a proxy, a second OpenAI-format endpoint), which Lookup finds by the bare model
// name; nor anthropic's own price Claude on such an entry. Those keep the catalogue's.
func TestReview26hOwnPriceDoesNotLeakByBareName(t *testing.T) {
	cat := providers.DefaultCatalog()
	own := cat.WithOwnPrices(map[string]providers.OwnPrice{
		"openai/gpt-4o":                       {InputPerToken: ptr(1e-7), OutputPerToken: ptr(2e-7)},
		"anthropic/claude-3-5-haiku-20241022": {InputPerToken: ptr(0), OutputPerToken: ptr(0)},
	})
	for _, tc := range []struct{ own, other string }{
		{"openai/gpt-4o", "my-proxy/gpt-4o"},
		{"anthropic/claude-3-5-haiku-20241022", "corp-gateway/claude-3-5-haiku-20241022"},
	} {
		want, _ := cat.Lookup(tc.other)
		got, _ := own.Lookup(tc.other)
		if got.InputPerToken != want.InputPerToken || got.OutputPerToken != want.OutputPerToken {
			t.Errorf("%s is priced %g/%g, want the catalogue's %g/%g: %s's own price leaked to it", tc.other, got.InputPerToken, got.OutputPerToken, want.InputPerToken, want.OutputPerToken, tc.own)
		}
		u := providers.Usage{PromptTokens: 1000, CompletionTokens: 500}
		if g, w := own.Cost(tc.other, u), cat.Cost(tc.other, u); g != w {
			t.Errorf("%s costs %+v, want the catalogue's %+v", tc.other, g, w)
		}
	}
	if p, _ := own.Lookup("openai/gpt-4o"); p.InputPerToken != 1e-7 || p.OutputPerToken != 2e-7 {
		t.Errorf("openai/gpt-4o's own price %+v", p)
	}
	// Free (0) overrides the catalogue's price, as LiteLLM's zero-cost models.
	if c := own.Cost("anthropic/claude-3-5-haiku-20241022", providers.Usage{PromptTokens: 1000, CompletionTokens: 500}); !c.Known || c.TotalUSD != 0 {
		t.Errorf("a free deployment costs %+v", c)
	}
}
