package usagelog

import (
	"context"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/storetest"
	"github.com/switchyard-ai/switchyard/store/storetest/drivertest"
)

// A lookup by request id with Status success (/spend/logs/v2?request_id=…&
// status_filter=success) reads the id's entries and the requests they name, as without
// the status: not the owner's failure entries newer than the request, which a listing of
// the successful requests reads beside its own.
func TestReview26cSuccessLookupByIDReadsNoFailureEntries(t *testing.T) {
	drivertest.ForEach(t, func(t *testing.T, d store.Driver) {
		ctx := context.Background()
		rc := storetest.NewReadCounter(d)
		st := store.New(rc)
		now := time.Now().UTC()
		h := NewHistory(st, HistoryOptions{Now: func() time.Time { return now }})
		defer h.Close(ctx)
		r25b3Settle(t, h, now)
		t0 := now.Add(-3 * time.Hour)
		h.ObserveRequest(ctx, r25b3Record("", t0, 0, false))
		const failures = 1500
		for i := 1; i <= failures; i++ {
			h.ObserveRequest(ctx, r25b3Record("", t0.Add(time.Duration(i)*time.Second), i, true))
		}
		if err := h.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		for _, status := range []string{StatusSuccess, StatusFailure, ""} {
			rc.Reset()
			q := RequestQuery{Owner: "k", Status: status, IDs: []string{"req_0"}}
			got, err := Take(ctx, h, q, 0)
			if err != nil {
				t.Fatal(err)
			}
			want := 1
			if status == StatusFailure {
				want = 0
			}
			if len(got) != want || want == 1 && got[0].RequestID != "req_0" {
				t.Fatalf("status %q: %v, want %d request (req_0)", status, idsOf(got), want)
			}
			if listed, _ := rc.Counts(store.OwnerIndex); listed > 10 {
				t.Errorf("status %q: a lookup of one request listed %d index entries", status, listed)
			}
		}
	})
}
