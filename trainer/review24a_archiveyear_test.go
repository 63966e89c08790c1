package trainer

import (
	"context"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/store/memstore"
)

// The spec's router model lifecycle archives a model after "1 year of inactivity" (Limits:
// model inactivity before archiving, 1 year). A year from the last use is a calendar year:
// across a 29 February it is 366 days, so a model last used on 1 March 2027 is still active
// on 29 February 2028 (365 days later) and archived from 1 March 2028.
func TestReview24aArchiveAfterACalendarYear(t *testing.T) {
	trained := time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC)
	clk := &clock{t: trained}
	srv := files(t, map[string]string{"/a.json": asJSON(syntheticRecords(30, 6))})
	s := newService(t, memstore.New(), WithClock(clk.now))
	ctx := context.Background()
	id := train(t, s, "k", srv.URL+"/a.json").ModelID
	if id == "" {
		t.Fatal("training failed")
	}
	if d, _ := s.Model(ctx, "k", id); d.LastUsedAt != trained.Format(time.RFC3339Nano) {
		t.Fatalf("last_used_at = %q, want the training time %s", d.LastUsedAt, trained)
	}

	clk.add(365 * 24 * time.Hour) // 2028-02-29: 365 days, not yet a year
	if rep, err := s.Cleanup(ctx); err != nil || rep.Archived != 0 {
		t.Fatalf("Cleanup on %s = %+v, %v; a model idle 365 days over a leap day is not a year idle", clk.now().Format(time.DateOnly), rep, err)
	}
	if d, _ := s.Model(ctx, "k", id); d.Status != ModelActive {
		t.Fatalf("model on %s = %s, want active", clk.now().Format(time.DateOnly), d.Status)
	}

	clk.add(24 * time.Hour) // 2028-03-01: a year
	if rep, err := s.Cleanup(ctx); err != nil || rep.Archived != 1 {
		t.Fatalf("Cleanup on %s = %+v, %v; want the model archived after a year", clk.now().Format(time.DateOnly), rep, err)
	}
}
