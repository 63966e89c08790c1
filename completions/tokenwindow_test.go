package completions

import (
	"testing"
	"time"
)

// TestTokenWindowSumBelowLimitAllocatesNothing: the tokens-per-minute check every request
// of a key with a bound makes (and its x-ratelimit-*-tokens headers, Gateway.TokensLeft)
// allocates nothing while the key is under its bound, and still says when a key over it
// drops below.
func TestTokenWindowSumBelowLimitAllocatesNothing(t *testing.T) {
	var w tokenWindow
	start := time.Unix(1_700_000_000, 0)
	for i := range 50 {
		w.add(start.Add(time.Duration(i)*time.Second), 100)
	}
	now := start.Add(50 * time.Second)
	if total, below := w.sum(now, 1_000_000); total != 5000 || !below.Equal(now) {
		t.Fatalf("sum %d, below %v: want 5000 now", total, below)
	}
	if n := testing.AllocsPerRun(100, func() { w.sum(now, 1_000_000) }); n != 0 {
		t.Errorf("sum under the bound: %v allocations per call, want 0", n)
	}
	// Over the bound (4950 of 5000): below once the oldest second (start) leaves the minute.
	if total, below := w.sum(now, 4950); total != 5000 || !below.Equal(start.Add(time.Minute)) {
		t.Errorf("over the bound: sum %d, below %v, want 5000, %v", total, below, start.Add(time.Minute))
	}
}
