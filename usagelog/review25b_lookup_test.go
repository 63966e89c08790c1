package usagelog

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/storetest/drivertest"
)

// Requests stored by a build without the lookup entries (only the owner and scope
// entries) are found by id and by status after the migration the first lookup runs, and
// the sweep deletes every entry of a request with it: nothing is left in the owner index.
func TestReview25bLookupIndexMigrationAndSweep(t *testing.T) {
	drivertest.ForEach(t, func(t *testing.T, d store.Driver) {
		ctx := context.Background()
		st := store.New(d)
		now := time.Now().UTC()
		t0 := now.Add(-2 * time.Hour).Truncate(time.Microsecond)
		// Three requests as an earlier build stored them.
		rs := make([]Request, 3)
		for i := range rs {
			rs[i] = newRequest(historyRecord("k", "key:a", t0.Add(time.Duration(i)*time.Minute), i))
			rs[i].RequestID, rs[i].ResponseID = fmt.Sprint("req_old_", i), fmt.Sprint("resp-old-", i)
			if i == 1 {
				rs[i].Outcome = completions.RequestFailed
			}
		}
		putAsEarlierBuild(t, st, rs)
		h := NewHistory(st, HistoryOptions{Retention: time.Hour * 24, Now: func() time.Time { return now }})
		defer h.Close(ctx)
		r := historyRecord("k", "", now.Add(-time.Minute), 9)
		r.RequestID, r.ResponseID = "req_new", "resp-new"
		h.ObserveRequest(ctx, r)

		for _, c := range []struct {
			q    RequestQuery
			want int
		}{
			{RequestQuery{Owner: "k", IDs: []string{"req_old_2"}}, 1},
			{RequestQuery{Owner: "k", IDs: []string{"resp-old-0", "req_new"}}, 2},
			{RequestQuery{Owner: "k", IDs: []string{"resp-old-0"}, Tag: "key:b"}, 0},
			{RequestQuery{Owner: "j", IDs: []string{"resp-old-0"}}, 0},
			{RequestQuery{Owner: "k", Status: StatusFailure}, 1},
			{RequestQuery{Owner: "k", Status: StatusSuccess}, 3},
			{RequestQuery{Owner: "k", Tag: "key:a", Status: StatusSuccess}, 2},
		} {
			listsAndCounts(t, h, "", c.q, c.want)
		}
		// Everything is past the retention a day later: the sweep leaves no index entry.
		if _, err := h.Sweep(ctx, now.Add(48*time.Hour)); err != nil {
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

// gatedDriver holds every transaction until open is closed.
type gatedDriver struct {
	store.Driver
	open chan struct{}
}

func (d *gatedDriver) Update(ctx context.Context, fn func(tx store.Tx) error) error {
	<-d.open
	return d.Driver.Update(ctx, fn)
}

// A shutdown whose deadline has already passed (other work used it up) still writes the
// few thousand requests queued (on every driver): Close gives the final write its own
// time, and every request is in the store after it returns.
func TestReview25bCloseWritesQueuedRequestsPastTheDeadline(t *testing.T) {
	drivertest.ForEach(t, func(t *testing.T, d store.Driver) {
		const n = 3000
		gd := &gatedDriver{Driver: d, open: make(chan struct{})}
		h := NewHistory(store.New(gd), HistoryOptions{CloseGrace: time.Minute})
		t0 := time.Now().UTC().Add(-time.Hour)
		for i := range n {
			h.ObserveRequest(context.Background(), historyRecord("k", "", t0.Add(time.Duration(i)*time.Millisecond), i))
		}
		past, cancel := context.WithCancel(context.Background())
		cancel()
		close(gd.open) // nothing could be written before the shutdown began
		if err := h.Close(past); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if h.Dropped() != 0 || h.Failed() != 0 {
			t.Fatalf("%d dropped, %d failed", h.Dropped(), h.Failed())
		}
		got, err := d.List(context.Background(), store.RequestLog, store.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != n {
			t.Fatalf("%d requests in the store after Close, want all %d queued", len(got), n)
		}
	})
}

// listsAndCounts checks that h lists and counts want requests for q (when, if not empty,
// says at which point of the test).
func listsAndCounts(t *testing.T, h *History, when string, q RequestQuery, want int) {
	t.Helper()
	ctx := context.Background()
	got, err := Take(ctx, h, q, 0)
	if err != nil {
		t.Fatal(err)
	}
	n, err := h.Count(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != want || n != want {
		t.Fatalf("%s: %+v: listed %d, counted %d, want %d", when, q, len(got), n, want)
	}
}
