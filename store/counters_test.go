package store_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// TestCountersShareDeltas: two processes on one store each learn what the other added
// since their last Sync — per key, once, only for the prefixes they subscribed — but not
// what was added before they first synced; a process that stops syncing is forgotten.
func TestCountersShareDeltas(t *testing.T) {
	st := memstore.New()
	ctx := context.Background()
	now := time.Now()
	type got struct {
		mu sync.Mutex
		m  map[string]int64
	}
	subscribe := func(c *store.Counters) *got {
		g := &got{m: map[string]int64{}}
		c.Subscribe("rpm/", func(key string, delta int64, _ time.Time) {
			g.mu.Lock()
			g.m[key] += delta
			g.mu.Unlock()
		})
		return g
	}
	a, b := store.NewCounters(st, "limits"), store.NewCounters(st, "limits")
	ga, gb := subscribe(a), subscribe(b)
	a.Add("rpm/k1", 5, now) // before b first syncs: b does not apply it
	for _, c := range []*store.Counters{a, b} {
		if err := c.Sync(ctx, now); err != nil {
			t.Fatal(err)
		}
	}
	a.Add("rpm/k1", 3, now)
	a.Add("rpm/k2", 1, now)
	a.Add("tpm/k1", 100, now) // not subscribed
	b.Add("rpm/k1", 2, now)
	for _, c := range []*store.Counters{a, b, a, b} { // a second round applies nothing twice
		if err := c.Sync(ctx, now); err != nil {
			t.Fatal(err)
		}
	}
	if gb.m["rpm/k1"] != 3 || gb.m["rpm/k2"] != 1 || len(gb.m) != 2 {
		t.Errorf("b applied %v, want rpm/k1 3 and rpm/k2 1", gb.m)
	}
	if ga.m["rpm/k1"] != 2 || len(ga.m) != 1 {
		t.Errorf("a applied %v, want rpm/k1 2", ga.m)
	}

	// A key a stopped adding to leaves its record; when it adds again, b counts it anew.
	later := now.Add(3 * time.Minute)
	a.Add("rpm/k3", 1, later)
	b.Add("rpm/k9", 1, later)
	for _, c := range []*store.Counters{a, b} {
		c.Sync(ctx, later)
	}
	a.Add("rpm/k1", 4, later)
	for _, c := range []*store.Counters{a, b} {
		c.Sync(ctx, later)
	}
	if gb.m["rpm/k1"] != 7 || gb.m["rpm/k3"] != 1 {
		t.Errorf("b applied %v, want rpm/k1 3+4 and rpm/k3 1", gb.m)
	}

	// a stops syncing: six minutes on, b deletes its record.
	gone := later.Add(6 * time.Minute)
	if err := b.Sync(ctx, gone); err != nil {
		t.Fatal(err)
	}
	entries, _ := st.List(ctx, store.SharedCounters, store.ListOptions{})
	if len(entries) != 1 {
		t.Errorf("records after a went silent: %d, want b's only", len(entries))
	}
}
