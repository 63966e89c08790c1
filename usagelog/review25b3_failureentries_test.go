package usagelog

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/storetest/drivertest"
)

// r25b3Settle runs h's sweep at now and a day later: both runs of both lookup index
// migrations are then recorded (a store past its upgrade).
func r25b3Settle(t *testing.T, h *History, now time.Time) {
	t.Helper()
	for _, at := range []time.Time{now, now.Add(store.MigrationRescanAfter)} {
		if _, err := h.Sweep(context.Background(), at); err != nil {
			t.Fatal(err)
		}
	}
}

// r25b3Record is request i of owner "k" with scope tag at start, its ids req_<i> and
// resp-<i>, failed when failed.
func r25b3Record(tag string, start time.Time, i int, failed bool) completions.RequestRecord {
	r := historyRecord("k", tag, start, i)
	r.RequestID, r.ResponseID = fmt.Sprint("req_", i), fmt.Sprint("resp-", i)
	if failed {
		r.Outcome, r.Err = completions.RequestFailed, errors.New("every model failed")
	}
	return r
}

// A request writes its record, its listing entries (owner; scope), its two id entries
// (one when its ids are the same, none without) and status entries only when it failed,
// once the store is past the upgrade, also in a History started afterwards; before,
// a successful one's status entry too, for the replicas of the previous build.
func TestReview25b3KeysWrittenPerRequest(t *testing.T) {
	drivertest.ForEach(t, func(t *testing.T, d store.Driver) {
		ctx := context.Background()
		cd := newWriteCountingDriver(d)
		st := store.New(cd)
		now := time.Now().UTC()
		write := func(h *History, r completions.RequestRecord) map[string]int {
			t.Helper()
			cd.counts()
			h.ObserveRequest(ctx, r)
			if err := h.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			return cd.counts()
		}
		const (
			rec    = "request_log"
			list   = "owner_index:request"
			ids    = "owner_index:request_id"
			status = "owner_index:request_status"
			scope  = "owner_index:request_scope_status"
		)
		h := NewHistory(st, HistoryOptions{Now: func() time.Time { return now }})
		defer h.Close(ctx)
		at := now.Add(-time.Hour)
		if got, want := write(h, r25b3Record("key:a", at, 1, false)), map[string]int{rec: 1, list: 2, ids: 2, status: 1, scope: 1}; !maps.Equal(got, want) {
			t.Fatalf("before the upgrade is done: a successful request wrote %v, want %v", got, want)
		}
		r25b3Settle(t, h, now)
		h2 := NewHistory(st, HistoryOptions{Now: func() time.Time { return now }}) // a replica started afterwards
		defer h2.Close(ctx)
		same := r25b3Record("", at, 7, false)
		same.ResponseID = same.RequestID
		none := r25b3Record("", at, 8, false)
		none.RequestID, none.ResponseID = "", ""
		for _, c := range []struct {
			name string
			r    completions.RequestRecord
			want map[string]int
		}{
			{"operator key, answered", r25b3Record("", at, 2, false), map[string]int{rec: 1, list: 1, ids: 2}},
			{"operator key, failed", r25b3Record("", at, 3, true), map[string]int{rec: 1, list: 1, ids: 2, status: 1}},
			{"virtual key, answered", r25b3Record("key:a", at, 4, false), map[string]int{rec: 1, list: 2, ids: 2}},
			{"virtual key, failed", r25b3Record("key:a", at, 5, true), map[string]int{rec: 1, list: 2, ids: 2, status: 1, scope: 1}},
			{"request id = response id", same, map[string]int{rec: 1, list: 1, ids: 1}},
			{"no ids", none, map[string]int{rec: 1, list: 1}},
		} {
			for i, hh := range []*History{h, h2} {
				if got := write(hh, c.r); !maps.Equal(got, c.want) {
					t.Errorf("%s (history %d): wrote %v, want %v", c.name, i+1, got, c.want)
				}
			}
		}
	})
}

// r25b3Statuses checks that h lists, counts and pages the successful and the failed
// requests of owner "k" (all, one scope's, and a window's) as its scan of every request
// does, each page (by offset, and paging back by ID) reading at most its requests and one
// more.
func r25b3Statuses(t *testing.T, h *History, cd *writeCountingDriver, when string, from, until time.Time) {
	t.Helper()
	ctx := context.Background()
	for _, status := range []string{StatusSuccess, StatusFailure} {
		for _, q := range []RequestQuery{
			{Owner: "k", Status: status},
			{Owner: "k", Status: status, Tag: "key:a"},
			{Owner: "k", Status: status, From: from, Until: until},
			{Owner: "k", Status: status, Tag: "key:b", From: from},
		} {
			scan := q
			scan.scan = true
			want, err := Take(ctx, h, scan, 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(want) == 0 {
				t.Fatalf("%s: %+v selects nothing: a test that cannot fail", when, q)
			}
			listsAndCounts(t, h, when, q, len(want))
			const limit = 4
			for skip := 0; skip < len(want)+limit; skip += limit {
				pq := q
				pq.Skip, pq.Limit = skip, limit
				before := cd.reads.Load()
				page, err := Take(ctx, h, pq, limit)
				if err != nil {
					t.Fatal(err)
				}
				if read := cd.reads.Load() - before; read > limit+1 {
					t.Errorf("%s: %+v: the page read %d requests", when, pq, read)
				}
				end := min(skip+limit, len(want))
				if !slices.Equal(idsOf(page), idsOf(want[min(skip, end):end])) {
					t.Fatalf("%s: %+v: page %v, want %v", when, pq, idsOf(page), idsOf(want[min(skip, end):end]))
				}
			}
			// Paging back by ID (before = the last ID seen) lists each once.
			var paged []Request
			for bq := q; len(paged) <= len(want); {
				bq.Limit = limit
				before := cd.reads.Load()
				page, err := Take(ctx, h, bq, limit)
				if err != nil {
					t.Fatal(err)
				}
				if read := cd.reads.Load() - before; read > limit+1 {
					t.Errorf("%s: %+v: the page read %d requests", when, bq, read)
				}
				paged = append(paged, page...)
				if len(page) < limit {
					break
				}
				bq.Before = page[len(page)-1].ID
			}
			if !slices.Equal(idsOf(paged), idsOf(want)) {
				t.Fatalf("%s: %+v: paging back by ID listed %v, want %v", when, q, idsOf(paged), idsOf(want))
			}
		}
	}
}

// Successful requests are listed through the owner's (or scope's) listing without the
// failed ones' entries: the same requests, counts and pages as a scan of every request,
// a page reading its requests alone, failures scattered and in runs.
func TestReview25b3StatusListingsPagesAndCounts(t *testing.T) {
	drivertest.ForEach(t, func(t *testing.T, d store.Driver) {
		ctx := context.Background()
		cd := newWriteCountingDriver(d)
		st := store.New(cd)
		now := time.Now().UTC()
		h := NewHistory(st, HistoryOptions{Now: func() time.Time { return now }})
		defer h.Close(ctx)
		r25b3Settle(t, h, now)
		t0 := now.Add(-2 * time.Hour)
		tags := []string{"", "key:a", "key:b"}
		for i := range 90 {
			failed := i%7 == 0 || i >= 40 && i < 52 // scattered, and a run of twelve
			h.ObserveRequest(ctx, r25b3Record(tags[i%3], t0.Add(time.Duration(i)*time.Minute), i, failed))
		}
		r25b3Statuses(t, h, cd, "", t0.Add(30*time.Minute), t0.Add(70*time.Minute))
	})
}

// putAsPreviousBuild stores rs (of owner "k") as the previous build stored them: every
// entry, the successful requests' status entries too.
func putAsPreviousBuild(t *testing.T, st *store.Store, rs []Request) {
	t.Helper()
	putStored(t, st, rs, func(rec storedRequest) []store.OwnedRef { return rec.refs(true) })
}

// r25b3Requests are n requests of owner "k" from t0 a minute apart, numbered from first,
// of scopes "", key:a and key:b in turn, one in four failed.
func r25b3Requests(t0 time.Time, first, n int) []Request {
	tags := []string{"", "key:a", "key:b"}
	rs := make([]Request, n)
	for i := range rs {
		k := first + i
		rs[i] = newRequest(r25b3Record(tags[k%3], t0.Add(time.Duration(i)*time.Minute), k, k%4 == 0))
	}
	return rs
}

// lookupMigrationRanTwice records both runs of the lookup index migration, as the
// previous build's replicas did (two days and twenty hours before now).
func lookupMigrationRanTwice(t *testing.T, st *store.Store, now time.Time) {
	t.Helper()
	for _, at := range []time.Time{now.Add(-48 * time.Hour), now.Add(-20 * time.Hour)} {
		if err := store.MigrationRan(context.Background(), st, historyLookupMigration, at); err != nil {
			t.Fatal(err)
		}
	}
}

// observeAsThisBuild records rs through h, as the gateway observes them (owner "k"; with
// their response ids and model when withIDs, else their request id alone), and flushes.
func observeAsThisBuild(t *testing.T, h *History, rs []Request, withIDs bool) {
	t.Helper()
	ctx := context.Background()
	for _, r := range rs {
		rec := completions.RequestRecord{Owner: "k", Tag: r.Tag, Start: r.Start, Outcome: r.Outcome, RequestID: r.RequestID}
		if withIDs {
			rec.ResponseID, rec.Model = r.ResponseID, r.Model
		}
		h.ObserveRequest(ctx, rec)
	}
	if err := h.Flush(ctx); err != nil {
		t.Fatal(err)
	}
}

// A mixed fleet during the upgrade. Replicas of the previous build index successful
// requests by status and read them back that way: this build ignores those entries (it
// lists and counts its own requests and theirs exactly) and its sweep deletes them with
// their requests; and until both runs of the failures-only migration are recorded it
// writes them too, so that those replicas' status index has this build's requests.
func TestReview25b3MixedFleetWithThePreviousBuild(t *testing.T) {
	drivertest.ForEach(t, func(t *testing.T, d store.Driver) {
		ctx := context.Background()
		cd := newWriteCountingDriver(d)
		st := store.New(cd)
		now := time.Now().UTC()
		// The previous build's replicas ran the lookup index migration (both runs).
		lookupMigrationRanTwice(t, st, now)
		h := NewHistory(st, HistoryOptions{Retention: 7 * 24 * time.Hour, Now: func() time.Time { return now }})
		defer h.Close(ctx)
		t0 := now.Add(-10 * time.Hour).Truncate(time.Microsecond)
		putAsPreviousBuild(t, st, r25b3Requests(t0, 0, 40))
		observeAsThisBuild(t, h, r25b3Requests(t0.Add(time.Hour), 100, 40), true)
		// What a replica of the previous build reads for status_filter=success.
		previousBuildSuccesses := func() int {
			t.Helper()
			n, err := store.CountOwned(ctx, st, store.OwnedQuery{Kind: historyStatusKind, Owner: lookupOwner("k", StatusSuccess)})
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		if n := previousBuildSuccesses(); n != 60 {
			t.Fatalf("during the upgrade the previous build's replicas read %d successful requests, want all 60", n)
		}
		r25b3Statuses(t, h, cd, "during the upgrade", t0.Add(30*time.Minute), t0.Add(90*time.Minute))
		// The failures-only migration's first run: still for the previous build's replicas.
		if _, err := h.Sweep(ctx, now); err != nil {
			t.Fatal(err)
		}
		putAsPreviousBuild(t, st, r25b3Requests(t0.Add(3*time.Hour), 200, 8))
		observeAsThisBuild(t, h, r25b3Requests(t0.Add(4*time.Hour), 300, 8), false)
		if n := previousBuildSuccesses(); n != 72 {
			t.Fatalf("after the first run the previous build's replicas read %d successful requests, want all 72", n)
		}
		// A day later (no replica of the previous build left) the second run: from then on
		// successful requests get no status entry, and this build answers alike.
		later := now.Add(store.MigrationRescanAfter)
		if _, err := h.Sweep(ctx, later); err != nil {
			t.Fatal(err)
		}
		observeAsThisBuild(t, h, r25b3Requests(t0.Add(5*time.Hour), 400, 8), false)
		if n := previousBuildSuccesses(); n != 72 {
			t.Fatalf("after the upgrade %d successful requests have a status entry, want the 72 written before", n)
		}
		r25b3Statuses(t, h, cd, "after the upgrade", t0.Add(30*time.Minute), t0.Add(5*time.Hour+3*time.Minute))
		// Everything is past the retention eight days on: the sweep leaves no entry behind,
		// the previous build's success entries included.
		if _, err := h.Sweep(ctx, now.Add(8*24*time.Hour)); err != nil {
			t.Fatal(err)
		}
		left, err := st.List(ctx, store.OwnerIndex, store.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range left {
			t.Errorf("index entry %q left after the sweep", e.Key)
		}
	})
}

// sweepAsEarlierBuild deletes the n oldest stored requests as the sweep of a build before
// the lookup index did (a replica with a shorter retention, during a rolling upgrade or
// a rollback): each record with its owner and scope entries, leaving its status and id
// entries behind.
func sweepAsEarlierBuild(t *testing.T, st *store.Store, n int) {
	t.Helper()
	ctx := context.Background()
	page, err := st.List(ctx, store.RequestLog, store.ListOptions{Limit: n})
	if err != nil {
		t.Fatal(err)
	}
	err = st.Update(ctx, func(tx store.Tx) error {
		for _, e := range page {
			rec, err := store.GetJSON[storedRequest](ctx, tx, store.RequestLog, e.Key)
			if err != nil {
				return err
			}
			rec.Key = e.Key
			listing := 1
			if rec.Tag != "" {
				listing = 2
			}
			for _, ref := range rec.refs(true)[:listing] {
				if err := store.DeleteOwned(ctx, tx, ref); err != nil {
					return err
				}
			}
			if err := tx.Delete(ctx, store.RequestLog, e.Key); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// staleLookups is how many lookup index entries have no request that has them.
func staleLookups(t *testing.T, st *store.Store) int {
	t.Helper()
	ctx := context.Background()
	stale := 0
	for _, kind := range historyLookupKinds {
		after := ""
		for {
			page, next, err := store.ListOwnedRefs(ctx, st, kind, after, 100)
			if err != nil {
				t.Fatal(err)
			}
			for _, ref := range page {
				rec, err := store.GetJSON[storedRequest](ctx, st, store.RequestLog, ref.ID)
				if errors.Is(err, store.ErrNotFound) {
					stale++
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				rec.Key = ref.ID
				if !slices.ContainsFunc(rec.refs(true), func(r store.OwnedRef) bool {
					return r.Kind == ref.Kind && r.Owner == ref.Owner && r.Created.Equal(ref.Created)
				}) {
					stale++
				}
			}
			if next == "" {
				break
			}
			after = next
		}
	}
	return stale
}

// The status and id entries an earlier build's sweep leaves behind (it deletes a request
// with its owner and scope entries alone) would have the failures' total count requests
// that are gone: each run of the failures-only migration deletes them (the first when
// this build's sweep first runs, the second a day later, after the rollout), and the
// counts and pages are then those of a scan again.
func TestReview25b3StaleEntriesOfAnEarlierBuildsSweep(t *testing.T) {
	drivertest.ForEach(t, func(t *testing.T, d store.Driver) {
		ctx := context.Background()
		cd := newWriteCountingDriver(d)
		st := store.New(cd)
		now := time.Now().UTC()
		lookupMigrationRanTwice(t, st, now)
		h := NewHistory(st, HistoryOptions{Retention: 7 * 24 * time.Hour, Now: func() time.Time { return now }})
		defer h.Close(ctx)
		t0 := now.Add(-20 * time.Hour).Truncate(time.Microsecond)
		putAsPreviousBuild(t, st, r25b3Requests(t0, 0, 60))
		observeAsThisBuild(t, h, r25b3Requests(t0.Add(2*time.Hour), 100, 60), true)
		failures := RequestQuery{Owner: "k", Status: StatusFailure}
		scanned := failures
		scanned.scan = true
		overcounted := func() bool {
			t.Helper()
			counted, err := h.Count(ctx, failures)
			if err != nil {
				t.Fatal(err)
			}
			want, err := h.Count(ctx, scanned)
			if err != nil {
				t.Fatal(err)
			}
			return counted > want
		}
		sweepAsEarlierBuild(t, st, 20)
		if n := staleLookups(t, st); n == 0 || !overcounted() {
			t.Fatalf("the earlier build's sweep left %d entries and the failures are not overcounted: the test tests nothing", n)
		}
		if _, err := h.Sweep(ctx, now); err != nil {
			t.Fatal(err)
		}
		if n := staleLookups(t, st); n != 0 {
			t.Fatalf("%d stale entries after the migration's first run", n)
		}
		r25b3Statuses(t, h, cd, "after the first run", t0.Add(90*time.Minute), t0.Add(150*time.Minute))
		// The earlier build's replica sweeps again during the rollout; the second run a day
		// later deletes what it left.
		sweepAsEarlierBuild(t, st, 20)
		if !overcounted() {
			t.Fatal("the second sweep of the earlier build left nothing to count")
		}
		if _, err := h.Sweep(ctx, now.Add(store.MigrationRescanAfter)); err != nil {
			t.Fatal(err)
		}
		if n := staleLookups(t, st); n != 0 {
			t.Fatalf("%d stale entries after the migration's second run", n)
		}
		r25b3Statuses(t, h, cd, "after the second run", t0.Add(90*time.Minute), t0.Add(150*time.Minute))
	})
}
