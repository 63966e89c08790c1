package usagelog

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/boltstore"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

type fixedClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fixedClock) now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fixedClock) set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

// Two replicas on one store add to the same daily totals, per tag and per model; hits are
// counted apart; failures are requests and errors; days and owners stay apart.
func TestRollupAddsUpReplicasPerDayTagAndModel(t *testing.T) {
	st := memstore.New()
	clock := &fixedClock{t: time.Date(2026, 11, 25, 23, 0, 0, 0, time.UTC)}
	a := NewRollup(st, RollupOptions{Now: clock.now, FlushEvery: time.Hour})
	b := NewRollup(st, RollupOptions{Now: clock.now, FlushEvery: time.Hour})
	ctx := context.Background()
	tagged := func(r completions.RequestRecord, tags ...string) completions.RequestRecord { r.Tags = tags; return r }

	a.ObserveRequest(ctx, tagged(record("k1", "p/m", completions.RequestOK, time.Second, 0.01, 10), "team:a", "team:a"))
	b.ObserveRequest(ctx, tagged(record("k1", "p/m", completions.RequestOK, time.Second, 0.02, 20), "team:a", "env:prod"))
	b.ObserveRequest(ctx, tagged(record("k1", "p/m", completions.RequestFailed, time.Second, 0, 0), "team:a"))
	hit := tagged(record("k1", "p/m", completions.RequestOK, time.Millisecond, 0, 10), "team:a")
	hit.Cache, hit.SavedUSD, hit.Usage.Costs = completions.CacheHit, 0.01, completions.Costs{PriceKnown: true}
	a.ObserveRequest(ctx, hit)
	a.ObserveRequest(ctx, tagged(record("k2", "p/m", completions.RequestOK, time.Second, 5, 10), "team:a")) // another key
	if err := a.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	clock.set(clock.t.Add(2 * time.Hour)) // the next day
	b.ObserveRequest(ctx, tagged(record("k1", "p/n", completions.RequestOK, time.Second, 0.5, 5), "team:a"))

	day1, day2 := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	rows, err := a.Spend(ctx, "k1", day1, day2, SpendByTag) // b's are not written yet: a does not see them
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Tag != "team:a" || rows[0].Requests != 1 {
		t.Fatalf("before b wrote: %+v", rows)
	}
	rows, err = b.Spend(ctx, "k1", day1, day2, SpendByTag)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]DayTotals{}
	for _, r := range rows {
		got[r.Day+" "+r.Tag] = r.DayTotals
	}
	ta := got["2026-11-25 team:a"]
	if len(rows) != 3 || ta.Requests != 3 || ta.Errors != 1 || ta.CacheHits != 1 || math.Abs(ta.CostUSD-0.03) > 1e-12 ||
		math.Abs(ta.SavedUSD-0.01) > 1e-12 || ta.PromptTokens != 30 || got["2026-11-25 env:prod"].Requests != 1 || got["2026-11-26 team:a"].Requests != 1 {
		t.Fatalf("k1's tags: %+v", rows)
	}
	if rows[0].Day != "2026-11-25" || rows[len(rows)-1].Day != "2026-11-26" {
		t.Fatalf("not by day: %+v", rows)
	}
	models, err := b.Spend(ctx, "k1", day2, day2, SpendByModel)
	if err != nil || len(models) != 1 || models[0].Model != "p/n" || math.Abs(models[0].CostUSD-0.5) > 1e-12 {
		t.Fatalf("k1's models on the 26th: %+v %v", models, err)
	}
	if _, err := b.Spend(ctx, "k1", day1, day2, "colour"); err == nil {
		t.Fatal("spend by colour: no error")
	}
	for _, r := range []*Rollup{a, b} {
		if err := r.Close(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// The totals outlive the process: Close writes what is left, and a new Rollup on the same
// bbolt file reads them.
func TestRollupSurvivesARestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spend.db")
	ctx := context.Background()
	open := func() *store.Store {
		st, err := boltstore.Open(path, boltstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	st := open()
	r := NewRollup(st, RollupOptions{FlushEvery: time.Hour})
	for i := range 5 {
		rec := record("k", "p/m", completions.RequestOK, time.Second, 0.25, 1)
		rec.Tags = []string{fmt.Sprint("t", i%2)}
		r.ObserveRequest(ctx, rec)
	}
	if err := r.Close(ctx); err != nil {
		t.Fatal(err)
	}
	st.Close()
	st = open()
	defer st.Close()
	today := time.Now().UTC()
	reader := NewRollup(st, RollupOptions{})
	defer reader.Close(ctx)
	rows, err := reader.Spend(ctx, "k", today, today, SpendByTag)
	if err != nil || len(rows) != 2 || rows[0].Tag != "t0" || rows[0].Requests != 3 || math.Abs(rows[0].CostUSD-0.75) > 1e-12 {
		t.Fatalf("after a restart: %+v %v", rows, err)
	}
}
