package usagelog

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/storetest/drivertest"
)

// r25b2PutOld stores n requests as a build without the lookup index stored them (a
// replica of the earlier build): see putAsEarlierBuild. Request i has RequestID
// old-<tag>-<i>; every third one failed.
func r25b2PutOld(t *testing.T, st *store.Store, tag string, t0 time.Time, n int) {
	t.Helper()
	rs := make([]Request, n)
	for i := range n {
		rs[i] = newRequest(historyRecord("k", "key:a", t0.Add(time.Duration(i)*time.Second), i))
		rs[i].RequestID = fmt.Sprintf("old-%s-%d", tag, i)
		if i%3 == 0 {
			rs[i].Outcome = completions.RequestFailed
		}
	}
	putAsEarlierBuild(t, st, rs)
}

// putAsEarlierBuild stores rs (of owner "k") as a build without the lookup index stored
// them: each record under its start time's key with its owner and scope entries, nothing
// else.
func putAsEarlierBuild(t *testing.T, st *store.Store, rs []Request) {
	t.Helper()
	putStored(t, st, rs, func(rec storedRequest) []store.OwnedRef { return rec.refs(true)[:2] }) // owner and scope only
}

// putStored stores rs (of owner "k") as a build did: each record under its start time's
// key, with the owner index entries refs gives it.
func putStored(t *testing.T, st *store.Store, rs []Request, refs func(storedRequest) []store.OwnedRef) {
	t.Helper()
	ctx := context.Background()
	err := st.Update(ctx, func(tx store.Tx) error {
		for _, r := range rs {
			r.ID = r.Start.UnixMicro()
			rec := storedRequest{Owner: "k", Key: historyKey(r.ID), Request: r}
			if err := store.PutJSON(ctx, tx, store.RequestLog, rec.Key, &rec); err != nil {
				return err
			}
			for _, ref := range refs(rec) {
				if err := store.PutOwned(ctx, tx, ref); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// r25b2Slow holds every write transaction until open is closed or its ctx ends: a
// migration of a large history, on a store the request's deadline does not wait for.
type r25b2Slow struct {
	store.Driver
	open chan struct{}
}

func (d *r25b2Slow) Update(ctx context.Context, fn func(tx store.Tx) error) error {
	select {
	case <-d.open:
	case <-ctx.Done():
		return ctx.Err()
	}
	return d.Driver.Update(ctx, fn)
}

// A lookup by status or request id over requests stored before the lookup index is
// answered within the request's deadline, with the same rows as before the index: it
// does not index the whole history inside the request (a deadline there left the
// migration half done, to be started again from the first record by the next lookup).
func TestReview25b2LookupDoesNotMigrateInTheRequest(t *testing.T) {
	drivertest.ForEach(t, func(t *testing.T, d store.Driver) {
		sd := &r25b2Slow{Driver: d, open: make(chan struct{})}
		defer close(sd.open)
		st := store.New(sd)
		now := time.Now().UTC()
		r25b2PutOld(t, store.New(d), "a", now.Add(-time.Hour).Truncate(time.Microsecond), 9)
		h := NewHistory(st, HistoryOptions{Now: func() time.Time { return now }, CloseGrace: -1})
		defer h.Close(context.Background())
		for _, c := range []struct {
			q    RequestQuery
			want int
		}{
			{RequestQuery{Owner: "k", Status: StatusFailure}, 3},
			{RequestQuery{Owner: "k", Tag: "key:a", Status: StatusSuccess}, 6},
			{RequestQuery{Owner: "k", IDs: []string{"old-a-4"}}, 1},
		} {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			got, err := Take(ctx, h, c.q, 0)
			if err != nil {
				cancel()
				t.Fatalf("%+v: %v", c.q, err)
			}
			n, err := h.Count(ctx, c.q)
			cancel()
			if err != nil {
				t.Fatalf("%+v: Count: %v", c.q, err)
			}
			if len(got) != c.want || n != c.want {
				t.Fatalf("%+v: listed %d, counted %d, want %d", c.q, len(got), n, c.want)
			}
		}
	})
}

// Requests an earlier build's replica stores after the lookup index was first built (a
// rolling upgrade) are still found by status and by request id: until the migration's
// second run indexed them, the lookups read them as before.
func TestReview25b2LookupFindsOldReplicaRowsAfterTheFirstRun(t *testing.T) {
	drivertest.ForEach(t, func(t *testing.T, d store.Driver) {
		ctx := context.Background()
		st := store.New(d)
		now := time.Now().UTC()
		r25b2PutOld(t, st, "a", now.Add(-2*time.Hour).Truncate(time.Microsecond), 6)
		h := NewHistory(st, HistoryOptions{Now: func() time.Time { return now }})
		defer h.Close(ctx)
		// The index is built (by a lookup or a sweep), then the old replica writes on.
		if _, err := Take(ctx, h, RequestQuery{Owner: "k", Status: StatusFailure}, 0); err != nil {
			t.Fatal(err)
		}
		if _, err := h.Sweep(ctx, now); err != nil {
			t.Fatal(err)
		}
		r25b2PutOld(t, st, "b", now.Add(-time.Hour).Truncate(time.Microsecond), 6)
		check := func(when string) {
			t.Helper()
			for _, c := range []struct {
				q    RequestQuery
				want int
			}{
				{RequestQuery{Owner: "k", Status: StatusFailure}, 4},
				{RequestQuery{Owner: "k", Tag: "key:a", Status: StatusSuccess}, 8},
				{RequestQuery{Owner: "k", IDs: []string{"old-b-5", "old-a-5"}}, 2},
			} {
				listsAndCounts(t, h, when, c.q, c.want)
			}
		}
		check("before the second run")
		// A day later the sweep's second run indexes them; the index then answers alike.
		if _, err := h.Sweep(ctx, now.Add(store.MigrationRescanAfter)); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Get(ctx, store.Migrations, historyLookupMigration+"#again"); errors.Is(err, store.ErrNotFound) {
			t.Fatal("the second run of the lookup index migration is not recorded")
		}
		h2 := NewHistory(st, HistoryOptions{Now: func() time.Time { return now }})
		defer h2.Close(ctx)
		h = h2
		check("after the second run")
	})
}
