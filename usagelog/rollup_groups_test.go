package usagelog

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/storetest/drivertest"
)

// listHook calls onList before each listing of the daily spend.
type listHook struct {
	store.Driver
	onList func()
}

func (d listHook) List(ctx context.Context, c store.Collection, opts store.ListOptions) ([]store.Entry, error) {
	if c == store.SpendRollups {
		d.onList()
	}
	return d.Driver.List(ctx, c, opts)
}

// TestRollupGroupsOneReadAndPerUser, on every store driver: a request counts in its user's
// row (rec.UserID, the virtual key's user_id) when it has one, and in its user, key and
// model row (a model name too long for a row's key shortened as in its model row);
// SpendGroups reads several
// groupings from one state of the totals, so a request observed while it reads counts in
// none of them (and in all of them at the next read): per day, the requests per key, per
// model, per user (with the requests of no user) and per user, key and model add up alike.
func TestRollupGroupsOneReadAndPerUser(t *testing.T) {
	drivertest.ForEach(t, func(t *testing.T, d store.Driver) {
		ctx := context.Background()
		var r *Rollup
		var armed atomic.Bool
		day0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		clock := &fixedClock{t: day0}
		with := func(key, user, model string, cost float64) completions.RequestRecord {
			rec := record("o", model, completions.RequestOK, time.Second, cost, 10)
			rec.KeyID, rec.UserID = key, user
			return rec
		}
		st := store.New(listHook{Driver: d, onList: func() {
			if armed.CompareAndSwap(true, false) {
				r.ObserveRequest(ctx, with("vk_late", "u1", "p/late", 1))
			}
		}})
		r = NewRollup(st, RollupOptions{Now: clock.now, FlushEvery: time.Hour})
		defer r.Close(ctx)
		r.ObserveRequest(ctx, with("vk_a", "u1", "p/m", 0.1))
		r.ObserveRequest(ctx, with("vk_b", "u1", "p/n", 0.2))
		r.ObserveRequest(ctx, with("vk_c", "u2", "p/m", 0.4))
		r.ObserveRequest(ctx, with("vk_d", "", "p/m", 0.8)) // a key of no user
		r.ObserveRequest(ctx, with("", "", "p/n", 1.6))     // the owner's own key
		long := "p/" + strings.Repeat("y", 300)
		r.ObserveRequest(ctx, with("vk_a", "u1", long, 0))
		clock.set(day0.AddDate(0, 0, 1))
		r.ObserveRequest(ctx, with("vk_a", "u1", "p/m", 3.2))
		r.ObserveRequest(ctx, record("other", "p/m", completions.RequestOK, time.Second, 8, 10))

		read := func() map[string]map[string]DayTotals { // grouping -> "day name" -> totals
			t.Helper()
			groups, err := r.SpendGroups(ctx, "o", day0, day0.AddDate(0, 0, 1), SpendByKey, SpendByModel, SpendByUser, SpendByUserKeyModel)
			if err != nil {
				t.Fatal(err)
			}
			out := map[string]map[string]DayTotals{}
			for by, rows := range groups {
				out[by] = map[string]DayTotals{}
				for _, row := range rows {
					out[by][row.Day+" "+row.Tag+row.Model+row.Team+row.Key+row.User] = row.DayTotals
				}
			}
			return out
		}
		requests := func(rows map[string]DayTotals, day string) (n int64) {
			for k, v := range rows {
				if k[:len(day)] == day {
					n += v.Requests
				}
			}
			return n
		}
		armed.Store(true)
		g := read()
		if armed.Load() {
			t.Fatal("SpendGroups did not read the store")
		}
		for day, want := range map[string]int64{"2026-03-01": 6, "2026-03-02": 1} {
			if k, m, x := requests(g[SpendByKey], day), requests(g[SpendByModel], day), requests(g[SpendByUserKeyModel], day); k != want || m != want || x != want {
				t.Fatalf("%s: %d requests per key, %d per model, want %d: %+v", day, k, m, want, g)
			}
		}
		u := g[SpendByUser]
		if len(u) != 3 || u["2026-03-01 u1"].Requests != 3 || u["2026-03-01 u1"].CostUSD < 0.3-1e-9 || u["2026-03-01 u1"].CostUSD > 0.3+1e-9 ||
			u["2026-03-01 u2"].Requests != 1 || u["2026-03-02 u1"].Requests != 1 {
			t.Fatalf("per user (no row for the requests of no user): %+v", u)
		}
		x := g[SpendByUserKeyModel]
		var longName string
		for name := range g[SpendByModel] {
			if strings.HasPrefix(name, "2026-03-01 p/yyy") {
				longName = strings.TrimPrefix(name, "2026-03-01 ")
			}
		}
		// Keys are "day model key user" (the fields of a row, as read concatenates them).
		if len(x) != 7 || x["2026-03-01 p/mvk_au1"].Requests != 1 || x["2026-03-01 p/nvk_bu1"].CostUSD != 0.2 || x["2026-03-01 p/mvk_d"].Requests != 1 ||
			x["2026-03-01 p/n"].Requests != 1 || x["2026-03-01 "+longName+"vk_au1"].Requests != 1 || len(longName) != maxRollupName || x["2026-03-02 p/mvk_au1"].Requests != 1 {
			t.Fatalf("per user, key and model (the long model %q): %+v", longName, x)
		}
		g = read()
		if k, m, u := requests(g[SpendByKey], "2026-03-02"), requests(g[SpendByModel], "2026-03-02"), g[SpendByUser]["2026-03-02 u1"].Requests; k != 2 || m != 2 || u != 2 {
			t.Fatalf("the request observed while reading, at the next read: %d per key, %d per model, %d for u1", k, m, u)
		}
		if _, err := r.SpendGroups(ctx, "o", day0, day0, SpendByKey, "colour"); err == nil {
			t.Fatal("a grouping that is none: no error")
		}
	})
}
