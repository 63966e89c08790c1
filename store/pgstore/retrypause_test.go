package pgstore

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestRetryPauseIsRandom: the pauses before a transaction runs again after a
// serialization failure are drawn at random between 1 and 8 ms, so that two replicas that
// collided on a record do not run again in step.
func TestRetryPauseIsRandom(t *testing.T) {
	seen := map[time.Duration]bool{}
	for range 200 {
		p := retryPause(rand.IntN)
		if p < time.Millisecond || p > 8*time.Millisecond {
			t.Fatalf("pause %v, want 1ms to 8ms", p)
		}
		seen[p] = true
	}
	if len(seen) < 4 {
		t.Errorf("200 pauses took %d values: not random", len(seen))
	}
}
