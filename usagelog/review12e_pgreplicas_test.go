package usagelog

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/store/pgstore"
)

// Exploratory (expected to pass): replicas on one PostgreSQL add up without lost updates.
func TestReview12eReplicasOnPostgresAddUp(t *testing.T) {
	dsn := os.Getenv("SWITCHYARD_TEST_POSTGRES")
	if dsn == "" {
		t.Skip("SWITCHYARD_TEST_POSTGRES not set")
	}
	ctx := context.Background()
	schema := fmt.Sprintf("review12e_rep_%d", time.Now().UnixNano())
	var rs []*Rollup
	for range 4 {
		st, err := pgstore.Open(ctx, dsn, pgstore.Options{Schema: schema})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		rs = append(rs, NewRollup(st, RollupOptions{FlushEvery: 3 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(os.Stderr, nil))}))
	}
	const n = 300
	var wg sync.WaitGroup
	for _, r := range rs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range n {
				rec := record("k", "p/m", completions.RequestOK, time.Second, 1, 1)
				rec.Tags = []string{"a", fmt.Sprint("t", i%7)}
				r.ObserveRequest(ctx, rec)
				if i%50 == 0 {
					r.Flush(ctx)
				}
			}
		}()
	}
	wg.Wait()
	for _, r := range rs {
		if err := r.Close(ctx); err != nil {
			t.Fatal(err)
		}
	}
	today := time.Now().UTC()
	rows, err := rs[0].Spend(ctx, "k", today, today, SpendByTag)
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range rows {
		if row.Tag == "a" && row.Requests != 4*n {
			t.Fatalf("tag a: %d requests, want %d", row.Requests, 4*n)
		}
	}
	t.Logf("%d rows", len(rows))
}

// A flush whose context ends while PostgreSQL commits gets "pgstore: commit: timeout" although
// the transaction may be committed; Flush merges the batch back and writes it again. The
// writer's flush has FlushEvery as its deadline and Spend's has the HTTP request's context,
// so this happens under load or when a client hangs up.
func TestReview12eCommitTimeoutOnPostgresDoubleCounts(t *testing.T) {
	dsn := os.Getenv("SWITCHYARD_TEST_POSTGRES")
	if dsn == "" {
		t.Skip("SWITCHYARD_TEST_POSTGRES not set")
	}
	ctx := context.Background()
	st, err := pgstore.Open(ctx, dsn, pgstore.Options{Schema: fmt.Sprintf("review12e_ct_%d", time.Now().UnixNano())})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r := NewRollup(st, RollupOptions{FlushEvery: time.Hour})
	const n = 1500
	for i := range n {
		r.ObserveRequest(ctx, record("k", "p/m", completions.RequestOK, time.Second, 1, 1))
		fctx, cancel := context.WithTimeout(ctx, time.Duration(i%40)*25*time.Microsecond)
		r.Flush(fctx)
		cancel()
	}
	if err := r.Close(ctx); err != nil {
		t.Fatal(err)
	}
	today := time.Now().UTC()
	rows, err := r.Spend(ctx, "k", today, today, SpendByModel)
	if err != nil || len(rows) != 1 || rows[0].Requests != n {
		t.Fatalf("%d requests counted as %+v (err %v)", n, rows, err)
	}
}
