package usagelog

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
	"github.com/switchyard-ai/switchyard/store/storetest/drivertest"
)

// historyRecord is a request of owner received at start, with the fields /spend/logs
// reads.
func historyRecord(owner, tag string, start time.Time, i int) completions.RequestRecord {
	r := record(owner, "openai/gpt-4o", completions.RequestOK, 20*time.Millisecond, 0.01, 5)
	r.Tag, r.Start = tag, start
	r.ModelGroup, r.EndUser, r.APIBase = "smart", fmt.Sprint("user-", i), "https://api.openai.com/v1"
	r.Tags = []string{fmt.Sprint("t", i%2)}
	return r
}

func ids(reqs []Request) []string {
	out := make([]string, len(reqs))
	for i, r := range reqs {
		out[i] = r.EndUser
	}
	return out
}

// The history outlives its process (a new History over the same store lists what the last
// one wrote, with every field), and two replicas over one store list each other's requests.
func TestHistoryDurableAndShared(t *testing.T) {
	for _, b := range drivertest.Backends() {
		t.Run(b.Name, func(t *testing.T) { historyDurableAndShared(t, b) })
	}
}

func historyDurableAndShared(t *testing.T, b drivertest.Backend) {
	{
		d := b.Open(t)
		ctx := context.Background()
		st1, st2 := store.New(d), store.New(b.Replica(t, d))
		t0 := time.Now().UTC().Add(-time.Hour)
		a := NewHistory(st1, HistoryOptions{})
		for i := range 3 {
			a.ObserveRequest(ctx, historyRecord("k", "", t0.Add(time.Duration(i)*time.Second), i))
		}
		if err := a.Close(ctx); err != nil {
			t.Fatal(err)
		}
		// A restart: a new History, another replica writing too.
		a2, b2 := NewHistory(st1, HistoryOptions{}), NewHistory(st2, HistoryOptions{})
		defer a2.Close(ctx)
		defer b2.Close(ctx)
		b2.ObserveRequest(ctx, historyRecord("k", "key:vk1", t0.Add(10*time.Second), 3))
		b2.ObserveRequest(ctx, historyRecord("other", "", t0.Add(11*time.Second), 4))
		if err := b2.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		for _, h := range []*History{a2, b2} {
			got, err := Take(ctx, h, RequestQuery{Owner: "k"}, 0)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(ids(got)) != "[user-3 user-2 user-1 user-0]" {
				t.Fatalf("k's requests newest first: %v", ids(got))
			}
			r := got[1]
			if r.ModelGroup != "smart" || r.APIBase != "https://api.openai.com/v1" || r.Model != "openai/gpt-4o" || r.Owner != "k" ||
				r.CostUSD != 0.01 || r.ID != r.Start.UnixMicro() || len(r.Attempts) != 1 || !r.Start.Equal(t0.Add(2*time.Second)) {
				t.Fatalf("request as stored: %+v", r)
			}
		}
		// A scope's own listing, request tags, paging back and a time window.
		vk, _ := Take(ctx, a2, RequestQuery{Owner: "k", Tag: "key:vk1"}, 0)
		if fmt.Sprint(ids(vk)) != "[user-3]" {
			t.Fatalf("the virtual key's requests: %v", ids(vk))
		}
		tagged, _ := Take(ctx, a2, RequestQuery{Owner: "k", RequestTag: "t0"}, 0)
		if fmt.Sprint(ids(tagged)) != "[user-2 user-0]" {
			t.Fatalf("request tag t0: %v", ids(tagged))
		}
		page, _ := Take(ctx, a2, RequestQuery{Owner: "k"}, 2)
		back, _ := Take(ctx, a2, RequestQuery{Owner: "k", Before: page[1].ID}, 0)
		if fmt.Sprint(ids(back)) != "[user-1 user-0]" {
			t.Fatalf("before %d: %v", page[1].ID, ids(back))
		}
		window, _ := Take(ctx, a2, RequestQuery{Owner: "k", From: t0.Add(time.Second), Until: t0.Add(10 * time.Second)}, 0)
		if fmt.Sprint(ids(window)) != "[user-2 user-1]" {
			t.Fatalf("window: %v", ids(window))
		}
	}
}

// Requests past the retention are not listed, and Sweep deletes them with their index
// entries, reading only what expired; what is kept stays.
func TestHistoryRetentionSweep(t *testing.T) {
	drivertest.ForEach(t, func(t *testing.T, d store.Driver) {
		ctx := context.Background()
		st := store.New(d)
		now := time.Now().UTC()
		clock := &fixedClock{t: now}
		h := NewHistory(st, HistoryOptions{Retention: 24 * time.Hour, Now: clock.now})
		defer h.Close(ctx)
		for i := range 5 {
			h.ObserveRequest(ctx, historyRecord("k", "key:vk1", now.Add(-time.Duration(50-i*10)*time.Hour), i)) // 50h .. 10h ago
		}
		got, err := Take(ctx, h, RequestQuery{Owner: "k"}, 0)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(ids(got)) != "[user-4 user-3]" {
			t.Fatalf("within the retention: %v", ids(got))
		}
		n, err := h.Sweep(ctx, now)
		if err != nil || n != 3 {
			t.Fatalf("swept %d, %v; want 3", n, err)
		}
		if n, err := h.Sweep(ctx, now); err != nil || n != 0 {
			t.Fatalf("second sweep: %d, %v", n, err)
		}
		recs, _ := st.List(ctx, store.RequestLog, store.ListOptions{})
		idx, _ := st.List(ctx, store.OwnerIndex, store.ListOptions{Prefix: historyKind + "/"})
		if len(recs) != 2 || len(idx) != 4 {
			t.Fatalf("left %d records and %d index entries; want 2 and 4 (owner and scope each)", len(recs), len(idx))
		}
		clock.set(now.Add(100 * time.Hour))
		if got, _ := Take(ctx, h, RequestQuery{Owner: "k", Tag: "key:vk1"}, 0); len(got) != 0 {
			t.Fatalf("past the retention: %v", ids(got))
		}
	})
}

// A full queue drops requests rather than waiting, and counts them; so does a closed
// History.
func TestHistoryDropsWhenClosed(t *testing.T) {
	ctx := context.Background()
	h := NewHistory(store.New(memstore.NewDriver()), HistoryOptions{})
	if err := h.Close(ctx); err != nil {
		t.Fatal(err)
	}
	h.ObserveRequest(ctx, historyRecord("k", "", time.Now(), 0))
	if h.Dropped() != 1 {
		t.Fatalf("dropped %d", h.Dropped())
	}
	if err := h.Flush(ctx); err != nil {
		t.Fatal(err)
	}
}
