package completions

import "testing"

// TestReview10AddUsageKeepsOneHourCacheWrites: a streamed answer with other parts (hedged
// starts that lost, a continuation after a cut stream) gets its usage as
// addUsage(resp.Usage, parts) (stream.go); addUsage drops CacheCreation1hTokens, so the
// streamed answer's usage (and the Messages surface's usage.cache_creation split, built
// from it by anthropicUsage) loses the one-hour writes a whole answer reports.
func TestReview10AddUsageKeepsOneHourCacheWrites(t *testing.T) {
	answer := Usage{PromptTokens: 5000, CacheCreationTokens: 4000, CacheCreation1hTokens: 4000, Costs: Costs{PriceKnown: true}}
	loser := Usage{PromptTokens: 5000, CacheCreationTokens: 4000, CacheCreation1hTokens: 4000, Costs: Costs{PriceKnown: true}}
	sum := addUsage(answer, loser)
	if sum.CacheCreation1hTokens != 8000 {
		t.Errorf("CacheCreation1hTokens %d, want 8000", sum.CacheCreation1hTokens)
	}
	if a := anthropicUsage(sum); a.CacheCreation == nil || a.CacheCreation.Ephemeral1h != 8000 {
		t.Errorf("Messages usage %+v: no one-hour split", a)
	}
}
