package server

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/store"
)

// TestReview13bRemoteKeysResetLocalBuckets: every replica now makes a bucket for every key
// any replica admitted (debit of a key it never saw). Past maxAuthBuckets (65,536 keys
// active cluster-wide in a minute) none of the debited buckets is full, so bucketAt clears
// them all — including the exhausted bucket of a key this replica is holding back, which
// gets its whole minute again.
func TestReview13bRemoteKeysResetLocalBuckets(t *testing.T) {
	st := newTestStore(t)
	ctx := context.Background()
	ca, cb := store.NewCounters(st, "limits"), store.NewCounters(st, "limits")
	s := &Server{keyRL: newKeyLimiter(2), vkRL: &authLimiter{buckets: map[string]*bucket{}}}
	s.shareRates(ca)
	now := time.Now()
	for _, c := range []*store.Counters{ca, cb, ca} { // each has seen the other
		if err := c.Sync(ctx, now); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		if ok, _ := s.keyRL.take("key_busy", now); !ok {
			t.Fatal("setup: the key's first two requests should pass")
		}
	}
	// The other replicas admitted one request each for 70k other keys in this second.
	for i := range 70_000 {
		cb.Add(fmt.Sprintf("%skey_%016x", sharedKeyRate, i), 1, now)
	}
	for _, c := range []*store.Counters{cb, ca} {
		if err := c.Sync(ctx, now.Add(time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("buckets: %d", len(s.keyRL.buckets))
	if ok, _ := s.keyRL.take("key_busy", now.Add(2*time.Second)); ok {
		t.Error("key_busy (2 per minute, both used 2s ago) got a third request: its bucket was cleared by other replicas' keys")
	}
}
