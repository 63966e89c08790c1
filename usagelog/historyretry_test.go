package usagelog

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// fakeDownDriver is a test fake of a database that is unreachable for its first down
// transactions (a PostgreSQL restart under a replica), then answers.
type fakeDownDriver struct {
	store.Driver
	down atomic.Int64
}

func (d *fakeDownDriver) Update(ctx context.Context, fn func(tx store.Tx) error) error {
	if d.down.Add(-1) >= 0 {
		return errors.New("failed to connect: dial unix /tmp/pg/.s.PGSQL.5432: connect: no such file or directory")
	}
	return d.Driver.Update(ctx, fn)
}

// TestHistoryWritesAgainAfterStoreOutage: requests answered while the database restarts
// were dropped from the request history (/spend/logs) while the daily spend
// (/user/daily/activity) kept them for its next write, so the two disagreed; the writer
// now writes them again once the store answers.
func TestHistoryWritesAgainAfterStoreOutage(t *testing.T) {
	ctx := context.Background()
	d := &fakeDownDriver{Driver: memstore.NewDriver()}
	d.down.Store(7) // the batch of two and each request alone, twice, then one more
	h := NewHistory(store.New(d), HistoryOptions{RetryWait: time.Nanosecond})
	defer h.Close(ctx)
	now := time.Now().UTC()
	h.ObserveRequest(ctx, historyRecord("k", "", now.Add(-2*time.Second), 1))
	h.ObserveRequest(ctx, historyRecord("k", "", now.Add(-time.Second), 2))
	if err := h.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if h.Failed() != 0 {
		t.Fatalf("%d requests failed after an outage shorter than the retries", h.Failed())
	}
	listsAndCounts(t, h, "", RequestQuery{Owner: "k"}, 2)
}

// TestHistoryGivesUpAfterLongOutage: an outage longer than the retries still ends with the
// requests counted failed, not a writer stuck for ever.
func TestHistoryGivesUpAfterLongOutage(t *testing.T) {
	ctx := context.Background()
	d := &fakeDownDriver{Driver: memstore.NewDriver()}
	d.down.Store(1 << 40)
	h := NewHistory(store.New(d), HistoryOptions{RetryWait: time.Nanosecond})
	defer h.Close(ctx)
	h.ObserveRequest(ctx, historyRecord("k", "", time.Now().UTC(), 1))
	if err := h.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if h.Failed() != 1 {
		t.Fatalf("Failed() = %d, want 1", h.Failed())
	}
}
