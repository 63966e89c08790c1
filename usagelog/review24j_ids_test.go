package usagelog

import (
	"context"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/storetest/drivertest"
)

// Requests received in the same microsecond (here the same instant, by this process and by
// another replica over the same store) each get their own id, and paging back with before
// = the last id seen lists every request exactly once.
func TestReview24jHistoryIDsUniqueAndPageable(t *testing.T) {
	for _, b := range drivertest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			d := b.Open(t)
			ctx := context.Background()
			h1 := NewHistory(store.New(d), HistoryOptions{})
			h2 := NewHistory(store.New(b.Replica(t, d)), HistoryOptions{})
			defer h1.Close(ctx)
			defer h2.Close(ctx)
			t0 := time.Now().UTC().Add(-time.Minute).Truncate(time.Microsecond)
			for i := range 4 {
				h1.ObserveRequest(ctx, historyRecord("k", "", t0, i))
				h2.ObserveRequest(ctx, historyRecord("k", "", t0, 10+i))
			}
			h1.ObserveRequest(ctx, historyRecord("k", "", t0.Add(-time.Microsecond), 99))
			if err := h2.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			all, err := Take(ctx, h1, RequestQuery{Owner: "k"}, 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(all) != 9 {
				t.Fatalf("%d requests listed, want 9", len(all))
			}
			seen := map[int64]bool{}
			for i, r := range all {
				if seen[r.ID] {
					t.Fatalf("id %d given twice: %v", r.ID, idsOf(all))
				}
				seen[r.ID] = true
				if i > 0 && r.ID >= all[i-1].ID {
					t.Fatalf("ids not in listing order (newest first): %d after %d", r.ID, all[i-1].ID)
				}
			}
			// Page back two at a time with before.
			var paged []Request
			before := int64(0)
			for range 20 {
				page, err := Take(ctx, h1, RequestQuery{Owner: "k", Before: before}, 3)
				if err != nil {
					t.Fatal(err)
				}
				if len(page) > 2 {
					paged = append(paged, page[:2]...)
					before = page[1].ID
					continue
				}
				paged = append(paged, page...)
				break
			}
			if len(paged) != len(all) {
				t.Fatalf("paging with before listed %d requests, want %d", len(paged), len(all))
			}
		})
	}
}

func idsOf(reqs []Request) []int64 {
	out := make([]int64, len(reqs))
	for i, r := range reqs {
		out[i] = r.ID
	}
	return out
}
