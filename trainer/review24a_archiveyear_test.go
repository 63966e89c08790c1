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
// on 29 February 2028 (365 days later) and archived on 1 March 2028.
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

	clk.add(24*time.Hour + touchEvery) // 2028-03-01: a year (after any unrecorded use, TestReview24aArchiveCountsUnrecordedUse)
	if rep, err := s.Cleanup(ctx); err != nil || rep.Archived != 1 {
		t.Fatalf("Cleanup on %s = %+v, %v; want the model archived after a year", clk.now().Format(time.DateOnly), rep, err)
	}
}

// A prediction less than an hour after the recorded last use is not written (touchEvery),
// so the record may be up to an hour older than the real last use; archiving on the record
// alone cut that hour off the year of inactivity.
func TestReview24aArchiveCountsUnrecordedUse(t *testing.T) {
	trained := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := &clock{t: trained}
	srv := files(t, map[string]string{"/a.json": asJSON(syntheticRecords(30, 6))})
	s := newService(t, memstore.New(), WithClock(clk.now))
	ctx := context.Background()
	id := train(t, s, "k", srv.URL+"/a.json").ModelID
	if id == "" {
		t.Fatal("training failed")
	}
	clk.add(30 * time.Minute)
	if _, err := s.Predict(ctx, "k", id, []string{"integral"}); err != nil {
		t.Fatal(err)
	}
	lastUse := clk.now()

	clk.add(lastUse.AddDate(1, 0, 0).Sub(lastUse) - time.Minute) // a minute short of a year after the last use
	if rep, err := s.Cleanup(ctx); err != nil || rep.Archived != 0 {
		t.Fatalf("Cleanup at %s = %+v, %v; the model was used at %s, less than a year ago", clk.now(), rep, err, lastUse)
	}
	clk.add(time.Minute + touchEvery) // the record cannot tell a use within touchEvery of it
	if rep, err := s.Cleanup(ctx); err != nil || rep.Archived != 1 {
		t.Fatalf("Cleanup at %s = %+v, %v; want the model archived once a year has passed since any use it may have had", clk.now(), rep, err)
	}
}
