package providers

import (
	"math"
	"slices"
	"testing"
)

// TestRealtimeCatalogue: the embedded catalogue prices OpenAI's and Azure OpenAI's realtime
// models at their text and audio rates (cached text and audio apart) and keeps them out of
// the chat models and chat prices.
func TestRealtimeCatalogue(t *testing.T) {
	c := DefaultCatalog()
	p, ok := c.LookupRealtime("openai/gpt-realtime")
	if !ok || !p.Known || p.InputPerToken != 4e-6 || p.OutputPerToken != 16e-6 || p.InputPerAudioToken != 32e-6 ||
		p.OutputPerAudioToken != 64e-6 || p.CacheReadPerToken != 4e-7 || p.CacheReadPerAudioToken != 4e-7 {
		t.Fatalf("gpt-realtime: %+v %v", p, ok)
	}
	u := RealtimeUsage{InputTokens: 1000, InputTextTokens: 300, InputAudioTokens: 700, CachedTokens: 300, CachedTextTokens: 100, CachedAudioTokens: 200,
		OutputTokens: 500, OutputTextTokens: 100, OutputAudioTokens: 400}
	got := c.RealtimeCost("openai/gpt-realtime", u)
	in := 200*4e-6 + 100*4e-7 + 500*32e-6 + 200*4e-7
	out := 100*16e-6 + 400*64e-6
	if !got.Known || math.Abs(got.InputUSD-in) > 1e-12 || math.Abs(got.OutputUSD-out) > 1e-12 || math.Abs(got.TotalUSD-in-out) > 1e-12 {
		t.Errorf("cost %+v, want in %v out %v", got, in, out)
	}
	// Without cached_tokens_details the cached tokens are text.
	got = c.RealtimeCost("openai/gpt-realtime", RealtimeUsage{InputTokens: 100, InputAudioTokens: 60, CachedTokens: 40})
	if want := 40 * 4e-7; math.Abs(got.InputUSD-(want+60*32e-6)) > 1e-12 {
		t.Errorf("cost without details %+v", got)
	}
	if _, ok := c.LookupRealtime("azure/gpt-realtime-2025-08-28"); !ok {
		t.Error("Azure's realtime models are not priced")
	}
	if got := c.RealtimeModels("openai"); !slices.Contains(got, "openai/gpt-realtime") || !slices.Contains(got, "openai/gpt-4o-realtime-preview") {
		t.Errorf("RealtimeModels(openai) = %v", got)
	}
	for _, m := range c.ChatModels("openai") {
		if _, ok := c.LookupRealtime(m); ok {
			t.Errorf("realtime model %s among the chat models", m)
		}
	}
	if p, ok := c.Lookup("openai/gpt-realtime"); ok && p.Key == "gpt-realtime" {
		t.Errorf("gpt-realtime has a chat price: %+v", p)
	}
	if c.RealtimeCost("openai/gpt-4o-mini", u).Known {
		t.Error("a chat model is priced as a realtime model")
	}
}
