package server

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/store"
)

// TestRealtimeSecretSweepReadsExpiredOnly: a sweep of the client secrets deletes those
// expired (record and expiry index key) and keeps the others, reading only the expired
// ones' index keys and the rest of the page where it stops: with 300 secrets still valid
// it reads as few records as with 30. Secrets an earlier build stored without an index key are read
// once (the first sweep, store.Migrations), the expired deleted and the others indexed, so
// a later sweep deletes them once they expire.
func TestRealtimeSecretSweepReadsExpiredOnly(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	reads := func(valid int) int64 {
		d := &readCountingDriver{Driver: newTestDriver(t)}
		s := testServer(t, Config{Store: store.New(d)}, nil)
		// An earlier build's secrets: no index key; one expired, one not.
		for i, exp := range []time.Time{t0.Add(-time.Minute), t0.Add(30 * time.Minute)} {
			if err := store.PutJSON(ctx, s.cfg.Store, store.RealtimeSecrets, fmt.Sprintf("old%d", i), realtimeSecretRecord{Model: "gpt-realtime", ExpiresAt: exp}); err != nil {
				t.Fatal(err)
			}
		}
		s.sweepRealtimeSecrets(ctx, t0) // the first: indexes the earlier build's
		if _, err := s.cfg.Store.Get(ctx, store.RealtimeSecrets, "old0"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("an earlier build's expired secret is kept: %v", err)
		}
		for i := range 3 {
			if err := s.putRealtimeSecret(ctx, fmt.Sprintf("gone%d", i), realtimeSecretRecord{Model: "gpt-realtime", ExpiresAt: t0.Add(time.Duration(i+1) * time.Minute)}); err != nil {
				t.Fatal(err)
			}
		}
		for i := range valid {
			if err := s.putRealtimeSecret(ctx, fmt.Sprintf("kept%04d", i), realtimeSecretRecord{Model: "gpt-realtime", ExpiresAt: t0.Add(time.Hour + time.Duration(i)*time.Second)}); err != nil {
				t.Fatal(err)
			}
		}
		d.reset()
		s.sweepRealtimeSecrets(ctx, t0.Add(45*time.Minute)) // past gone*'s and old1's expiry
		n := d.records()
		for _, id := range []string{"gone0", "gone1", "gone2", "old1"} {
			if _, err := s.cfg.Store.Get(ctx, store.RealtimeSecrets, id); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("valid=%d: expired secret %s is kept: %v", valid, id, err)
			}
		}
		for _, id := range []string{"kept0000", fmt.Sprintf("kept%04d", valid-1)} {
			if _, err := s.cfg.Store.Get(ctx, store.RealtimeSecrets, id); err != nil {
				t.Fatalf("valid=%d: secret %s, still valid, is gone: %v", valid, id, err)
			}
		}
		if idx, err := s.cfg.Store.List(ctx, store.RealtimeSecretExpiry, store.ListOptions{}); err != nil || len(idx) != valid {
			t.Fatalf("valid=%d: %d expiry index keys left (%v), want one per secret kept", valid, len(idx), err)
		}
		return n
	}
	few, many := reads(30), reads(300)
	// One page of index keys (the 4 expired and those after, at most
	// realtimeSecretSweepFirst) and the migration's record.
	if few != many || many > realtimeSecretSweepFirst+2 {
		t.Fatalf("a sweep read %d records with 30 valid secrets, %d with 300; want as many, and only a handful", few, many)
	}
}
