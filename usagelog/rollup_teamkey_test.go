package usagelog

import (
	"context"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/boltstore"
)

// TestRollupPerTeamAndKey: a request counts in its virtual key's row ("" for the owner's
// own requests) and, when the key is in a team, its team's; the rows outlive a restart;
// rows written before these kinds existed (models and tags only) still read, and that
// day has no team or key rows; a sweep deletes the team and key rows with the rest.
func TestRollupPerTeamAndKey(t *testing.T) {
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
	day0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	day1 := day0.AddDate(0, 0, 1)
	// A row as an earlier release wrote it (day 0: a model and a tag, no team or key rows).
	if err := store.PutJSON(ctx, st, store.SpendRollups, rollupKey("o", "2026-03-01", "m", "p/old"), storedTotals{DayTotals: DayTotals{Requests: 2, CostUSD: 0.5}, Batches: []string{"b0"}}); err != nil {
		t.Fatal(err)
	}
	clock := &fixedClock{t: day1}
	r := NewRollup(st, RollupOptions{Now: clock.now, FlushEvery: time.Hour})
	with := func(key, team string, cost float64) completions.RequestRecord {
		rec := record("o", "p/m", completions.RequestOK, time.Second, cost, 10)
		rec.KeyID, rec.TeamID = key, team
		return rec
	}
	r.ObserveRequest(ctx, with("vk_a", "eng", 0.1))
	r.ObserveRequest(ctx, with("vk_a", "eng", 0.2))
	r.ObserveRequest(ctx, with("vk_b", "eng", 0.4))
	r.ObserveRequest(ctx, with("vk_c", "", 1))    // a key in no team
	r.ObserveRequest(ctx, with("", "", 2))        // the owner's own key
	r.ObserveRequest(ctx, with("vk_d", "ops", 4)) // another team
	r.ObserveRequest(ctx, record("other", "p/m", completions.RequestOK, time.Second, 8, 10))
	if err := r.Close(ctx); err != nil {
		t.Fatal(err)
	}
	st.Close()

	st = open()
	defer st.Close()
	clock.set(day1.AddDate(0, 0, 5))
	reader := NewRollup(st, RollupOptions{Now: clock.now, FlushEvery: time.Hour, Retention: 3 * 24 * time.Hour})
	defer reader.Close(ctx)
	// Before the retention applies (read over both days with a reader keeping everything).
	all := NewRollup(st, RollupOptions{Now: clock.now, FlushEvery: time.Hour})
	defer all.Close(ctx)
	spend := func(by string) map[string]DayTotals {
		t.Helper()
		rows, err := all.Spend(ctx, "o", day0, day1, by)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]DayTotals{}
		for _, row := range rows {
			got[row.Day+" "+row.Tag+row.Model+row.Team+row.Key] = row.DayTotals
		}
		return got
	}
	teams := spend(SpendByTeam)
	if len(teams) != 2 || teams["2026-03-02 eng"].Requests != 3 || math.Abs(teams["2026-03-02 eng"].CostUSD-0.7) > 1e-12 ||
		teams["2026-03-02 ops"].Requests != 1 || teams["2026-03-02 ops"].PromptTokens != 10 {
		t.Fatalf("per team: %+v", teams)
	}
	keys := spend(SpendByKey)
	if len(keys) != 5 || keys["2026-03-02 vk_a"].Requests != 2 || keys["2026-03-02 vk_c"].CostUSD != 1 || keys["2026-03-02 "].CostUSD != 2 || keys["2026-03-02 vk_d"].Requests != 1 {
		t.Fatalf("per key: %+v", keys)
	}
	models := spend(SpendByModel)
	if len(models) != 2 || models["2026-03-01 p/old"].Requests != 2 || models["2026-03-02 p/m"].Requests != 6 {
		t.Fatalf("per model, the old row too: %+v", models)
	}

	// The retention (3 days before day1+5: from 2026-03-04) sweeps every kind of both days.
	n, err := reader.Sweep(ctx, clock.now())
	if err != nil {
		t.Fatal(err)
	}
	if want := 1 + 1 + 2 + 5 + 5 + 1 + 1 + 1; n != want { // old model row; day 1: model, 2 teams, 5 keys, 5 key and model rows; other's model, key and key and model
		t.Fatalf("swept %d rows, want %d", n, want)
	}
	left, err := st.List(ctx, store.SpendRollups, store.ListOptions{Limit: 100})
	if err != nil || len(left) != 0 {
		t.Fatalf("left after the sweep: %d rows %v", len(left), err)
	}
}

// appendRollupKey builds the key rollupKey does (escaped owners, long names included).
func TestAppendRollupKeyIsRollupKey(t *testing.T) {
	for _, c := range [][2]string{{"key_1", "p/m"}, {"a b/c", "vk_x"}, {"o", ""}, {"o", strings.Repeat("é", 150)}} {
		want := rollupKey(c[0], "2026-03-01", "k", c[1])
		if got := string(appendRollupKey([]byte("junk"), c[0], []byte("2026-03-01"), "k", c[1])); got != "junk"+want {
			t.Fatalf("%q: %q, want %q", c, got, want)
		}
	}
}
