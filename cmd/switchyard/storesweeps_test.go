package main

import (
	"context"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
	"github.com/switchyard-ai/switchyard/usagelog"
)

// TestRequestHistorySweptWhenKeptForever: with --request-log-retention 0 (keep forever)
// the request history's hourly sweep still runs, since it also runs the lookup index
// migrations (without them, lookups by status or request id read the whole history
// forever, and successful requests keep their status entries); the sweep deletes nothing
// and records each migration's first run.
func TestRequestHistorySweptWhenKeptForever(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	h := usagelog.NewHistory(st, usagelog.HistoryOptions{Retention: libraryRetention(0)})
	defer h.Close(ctx)
	w := &wiring{cfg: &serveConfig{}, store: st, history: h}
	var sweep func(context.Context, time.Time) (int, error)
	for _, sw := range w.storeSweeps() {
		if sw.kind == "request_log" {
			sweep = sw.sweep
		}
	}
	if sweep == nil {
		t.Fatal("no request history sweep when requests are kept forever")
	}
	now := time.Now()
	if n, err := sweep(ctx, now); err != nil || n != 0 {
		t.Fatalf("sweep: %d, %v; want 0 deleted", n, err)
	}
	for _, m := range []string{"request_log_lookup_index", "request_log_status_failures_only"} {
		if due, err := store.MigrationDue(ctx, st, m, now); err != nil || due {
			t.Fatalf("migration %s due after the sweep: %v, %v", m, due, err)
		}
	}
}
