package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
	"github.com/switchyard-ai/switchyard/usagelog"
)

// failingListDriver is a memstore driver whose List of one collection fails (a record the
// sweep cannot read, a flaky connection): a fake for tests.
type failingListDriver struct {
	*memstore.Driver
	fail store.Collection
}

func (d failingListDriver) List(ctx context.Context, c store.Collection, opts store.ListOptions) ([]store.Entry, error) {
	if c == d.fail {
		return nil, errors.New("fake: listing " + string(c) + " failed")
	}
	return d.Driver.List(ctx, c, opts)
}

// TestReview19fCleanupSweepErrorRunsTheOthers: a retention sweep that fails (here the
// stored responses', the first) does not leave the others unrun: serve runs each on its
// own, and cleanup, which says it runs every sweep once, reports the failure and still
// deletes the expired daily spend totals.
func TestReview19fCleanupSweepErrorRunsTheOthers(t *testing.T) {
	ctx := context.Background()
	st := store.New(failingListDriver{Driver: memstore.NewDriver(), fail: store.ResponseExpiry})
	past := time.Now().Add(-40 * 24 * time.Hour)
	spend := usagelog.NewRollup(st, usagelog.RollupOptions{Now: func() time.Time { return past }})
	spend.ObserveRequest(ctx, completions.RequestRecord{Owner: "key_owner", Outcome: completions.RequestOK, Provider: "openai", Model: "gpt-4o-mini", Start: past})
	if err := spend.Close(ctx); err != nil {
		t.Fatal(err)
	}
	rows := func() int {
		page, err := st.List(ctx, store.SpendRollups, store.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return len(page)
	}
	if rows() == 0 {
		t.Fatal("no spend rows seeded")
	}
	var out strings.Builder
	err := sweepOnce(ctx, st, retentionFlags{Spend: 720 * time.Hour}, &out)
	if err == nil || !strings.Contains(err.Error(), "stored response") {
		t.Errorf("sweepOnce: err %v, want the stored responses' failure", err)
	}
	if n := rows(); n != 0 {
		t.Errorf("%d expired spend rows left after a failed stored responses sweep; out %q", n, out.String())
	}
}
