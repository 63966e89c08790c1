package routing_test

import (
	"slices"
	"testing"

	"github.com/switchyard-ai/switchyard/routing"
)

// A cost or latency tradeoff with no figure to compare says so (tradeoff_fallback) and
// leaves the quality order as it was; one figure anywhere — in the request, measured by the
// gateway, or a catalogue price — makes the tradeoff apply and the notice go.
func TestTradeoffFallbackSaysWhenNoFiguresExist(t *testing.T) {
	cands := func() []routing.Candidate {
		return []routing.Candidate{{Name: "acme/strong", Attributes: map[string]any{"quality": 0.9}},
			{Name: "acme/weak", Attributes: map[string]any{"quality": 0.5}}}
	}
	s, _ := newSelector(t, routing.Options{})
	plain := mustSelect(t, s, "", &routing.Request{Messages: userMsg("hi"), LLMProviders: cands()})
	if plain.TradeoffFallback != "" {
		t.Fatalf("no tradeoff, yet tradeoff_fallback %q", plain.TradeoffFallback)
	}
	for _, tc := range []struct{ tradeoff, want string }{{"latency", routing.TradeoffNoLatencyData}, {"cost", routing.TradeoffNoPriceData}} {
		resp := mustSelect(t, s, "", &routing.Request{Messages: userMsg("hi"), LLMProviders: cands(), Tradeoff: tc.tradeoff})
		if resp.TradeoffFallback != tc.want {
			t.Errorf("tradeoff %s without figures: tradeoff_fallback %q, want %q", tc.tradeoff, resp.TradeoffFallback, tc.want)
		}
		if !slices.Equal(labels(resp.Providers), labels(plain.Providers)) {
			t.Errorf("tradeoff %s without figures reordered %v to %v", tc.tradeoff, labels(plain.Providers), labels(resp.Providers))
		}
	}
	// one latency in the request: the tradeoff has something to compare
	c := cands()
	c[1].Latency = fp(1)
	if resp := mustSelect(t, s, "", &routing.Request{Messages: userMsg("hi"), LLMProviders: c, Tradeoff: "latency"}); resp.TradeoffFallback != "" {
		t.Errorf("a request latency, yet tradeoff_fallback %q", resp.TradeoffFallback)
	}
	// a latency the gateway measured
	measured, _ := newSelector(t, routing.Options{Latency: func(m string) (float64, bool) { return 0.01, m == "acme/weak" }})
	if resp := mustSelect(t, measured, "", &routing.Request{Messages: userMsg("hi"), LLMProviders: cands(), Tradeoff: "latency"}); resp.TradeoffFallback != "" {
		t.Errorf("a measured latency, yet tradeoff_fallback %q", resp.TradeoffFallback)
	}
	// a price from the catalogue
	priced := []routing.Candidate{{Name: "openai/gpt-4o"}, {Name: "acme/unpriced"}}
	if resp := mustSelect(t, s, "", &routing.Request{Messages: userMsg("hi"), LLMProviders: priced, Tradeoff: "cost"}); resp.TradeoffFallback != "" {
		t.Errorf("a catalogue price, yet tradeoff_fallback %q", resp.TradeoffFallback)
	}
	// one candidate: nothing to trade, nothing to say
	if resp := mustSelect(t, s, "", &routing.Request{Messages: userMsg("hi"), LLMProviders: cands()[:1], Tradeoff: "latency"}); resp.TradeoffFallback != "" {
		t.Errorf("one candidate, yet tradeoff_fallback %q", resp.TradeoffFallback)
	}
}
