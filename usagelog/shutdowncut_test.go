package usagelog

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// TestShutdownCutIsRecordedCut: a request the server's graceful shutdown cut (recorded
// cancelled with RequestRecord.CutBy) was in the history as "cancelled", like a caller that
// left, and not counted failed; its caller got a 503, so it is now outcome cut, status
// failure, its error the server's reason, counted in the errors. A caller that left stays
// cancelled.
func TestShutdownCutIsRecordedCut(t *testing.T) {
	shuttingDown := errors.New("server: shutting down, retry it")
	r := New(Options{})
	r.ObserveRequest(context.Background(), completions.RequestRecord{Owner: "a", Model: "p/m",
		Outcome: completions.RequestCancelled, Err: context.Canceled, CutBy: shuttingDown})
	r.ObserveRequest(context.Background(), completions.RequestRecord{Owner: "a", Model: "p/m",
		Outcome: completions.RequestCancelled, Err: context.Canceled})
	got := r.Requests("a", 0, 0)
	if len(got) != 2 {
		t.Fatalf("%d requests", len(got))
	}
	left, cut := got[0], got[1]
	if cut.Outcome != OutcomeCut || cut.status() != StatusFailure || cut.Error != shuttingDown.Error() || cut.Answered {
		t.Errorf("the cut request: outcome %q status %q error %q", cut.Outcome, cut.status(), cut.Error)
	}
	if left.Outcome != completions.RequestCancelled || left.Error != context.Canceled.Error() {
		t.Errorf("the caller that left: outcome %q error %q", left.Outcome, left.Error)
	}
	s := r.Series("a", 0, 0)
	if len(s.Models) != 1 || s.Models[0].Total.Errors != 1 || s.Models[0].Total.Cancelled != 1 {
		t.Fatalf("series: %+v", s.Models)
	}

	// The daily totals (/user/daily/activity's failed_requests) count it failed too.
	ctx := context.Background()
	st := memstore.New()
	ro := NewRollup(st, RollupOptions{FlushEvery: time.Hour})
	defer ro.Close(ctx)
	ro.ObserveRequest(ctx, completions.RequestRecord{Owner: "a", Model: "p/m", Outcome: completions.RequestCancelled, CutBy: shuttingDown})
	ro.ObserveRequest(ctx, completions.RequestRecord{Owner: "a", Model: "p/m", Outcome: completions.RequestCancelled})
	today := time.Now().UTC()
	rows, err := ro.Spend(ctx, "a", today, today, SpendByModel)
	if err != nil || len(rows) != 1 || rows[0].Requests != 2 || rows[0].Errors != 1 {
		t.Fatalf("daily totals: %+v %v; want 2 requests, 1 error", rows, err)
	}
}
