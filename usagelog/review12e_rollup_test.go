package usagelog

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/boltstore"
	"github.com/switchyard-ai/switchyard/store/memstore"
	"github.com/switchyard-ai/switchyard/store/pgstore"
)

// One request whose key the store cannot hold (a model name longer than bbolt's 32 KiB key
// limit; on PostgreSQL anything past the ~2.7 KB btree row limit) fails the single Update
// every Flush makes, so nobody's spend is ever written again: the victim's Spend fails (the
// route answers 500) and the batch is re-queued forever.
func TestReview12eOneUnwritableKeyBlocksEveryOwnersSpend(t *testing.T) {
	st, err := boltstore.Open(filepath.Join(t.TempDir(), "s.db"), boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	r := NewRollup(st, RollupOptions{FlushEvery: time.Hour})
	defer r.Close(ctx)
	r.ObserveRequest(ctx, record("attacker", "up/"+strings.Repeat("x", 40000), completions.RequestOK, time.Second, 0.01, 1))
	r.ObserveRequest(ctx, record("victim", "p/m", completions.RequestOK, time.Second, 0.5, 1))
	today := time.Now().UTC()
	rows, err := r.Spend(ctx, "victim", today, today, SpendByModel)
	if err != nil || len(rows) != 1 || rows[0].Requests != 1 {
		t.Fatalf("victim's spend blocked by another key's unwritable row: rows=%+v err=%v", rows, err)
	}
}

func TestReview12eOneUnwritableKeyBlocksEveryOwnersSpendPostgres(t *testing.T) {
	dsn := os.Getenv("SWITCHYARD_TEST_POSTGRES")
	if dsn == "" {
		t.Skip("SWITCHYARD_TEST_POSTGRES not set")
	}
	ctx := context.Background()
	st, err := pgstore.Open(ctx, dsn, pgstore.Options{Schema: fmt.Sprintf("review12e_%d_%d", os.Getpid(), time.Now().UnixNano())})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r := NewRollup(st, RollupOptions{FlushEvery: time.Hour})
	defer r.Close(ctx)
	// random-ish so that btree compression cannot squeeze it under the row limit
	var b strings.Builder
	for i := 0; b.Len() < 9000; i++ {
		fmt.Fprintf(&b, "%x", uint32(i)*2654435761)
	}
	r.ObserveRequest(ctx, record("attacker", "up/"+b.String(), completions.RequestOK, time.Second, 0.01, 1))
	r.ObserveRequest(ctx, record("victim", "p/m", completions.RequestOK, time.Second, 0.5, 1))
	today := time.Now().UTC()
	rows, err := r.Spend(ctx, "victim", today, today, SpendByModel)
	if err != nil || len(rows) != 1 || rows[0].Requests != 1 {
		t.Fatalf("victim's spend blocked by another key's unwritable row: rows=%+v err=%v", rows, err)
	}
}

// slowDriver is memstore whose transactional reads take a while (a remote PostgreSQL: one
// round trip per Get and per Put).
type slowDriver struct {
	store.Driver
	delay time.Duration
}

type slowTx struct {
	store.Tx
	delay time.Duration
}

func (d slowDriver) Update(ctx context.Context, fn func(tx store.Tx) error) error {
	return d.Driver.Update(ctx, func(tx store.Tx) error {
		if err := fn(slowTx{tx, d.delay}); err != nil {
			return err
		}
		return ctx.Err() // the commit sees the deadline, as pgx's Commit(ctx) does
	})
}

func (t slowTx) Get(ctx context.Context, c store.Collection, key string) ([]byte, error) {
	time.Sleep(t.delay)
	return t.Tx.Get(ctx, c, key)
}

// The writer's flush gets FlushEvery as its deadline and writes every pending key in one
// transaction; once a batch needs longer than that it fails, is merged back and grows, so
// the writer never writes anything again (no chunking).
func TestReview12eWriterNeverCatchesUpOnceABatchOutgrowsFlushEvery(t *testing.T) {
	st := store.New(slowDriver{Driver: memstore.NewDriver(), delay: 2 * time.Millisecond})
	ctx := context.Background()
	r := NewRollup(st, RollupOptions{FlushEvery: 50 * time.Millisecond})
	for i := range 60 { // 60 keys * 2 ms > 50 ms
		rec := record(fmt.Sprint("k", i), "p/m", completions.RequestOK, time.Second, 0.01, 1)
		r.ObserveRequest(ctx, rec)
	}
	time.Sleep(600 * time.Millisecond) // ~12 ticks
	entries, err := st.List(ctx, store.SpendRollups, store.ListOptions{})
	r.Close(ctx)
	if err != nil || len(entries) == 0 {
		t.Fatalf("after 12 ticks the writer wrote %d rows (err %v): every flush timed out", len(entries), err)
	}
}

// ambiguousDriver commits, then reports a failure (pgx's Commit when its context ends while
// COMMIT is on the wire; a dropped connection after the server committed).
type ambiguousDriver struct {
	store.Driver
	mu   sync.Mutex
	fail bool
}

func (d *ambiguousDriver) Update(ctx context.Context, fn func(tx store.Tx) error) error {
	err := d.Driver.Update(ctx, fn)
	d.mu.Lock()
	defer d.mu.Unlock()
	if err == nil && d.fail {
		d.fail = false
		return errors.New("pgstore: commit: context deadline exceeded")
	}
	return err
}

// A flush whose commit succeeded but reported an error is merged back and written again:
// the increments are counted twice.
func TestReview12eAmbiguousCommitDoubleCounts(t *testing.T) {
	d := &ambiguousDriver{Driver: memstore.NewDriver(), fail: true}
	st := store.New(d)
	ctx := context.Background()
	r := NewRollup(st, RollupOptions{FlushEvery: time.Hour})
	defer r.Close(ctx)
	r.ObserveRequest(ctx, record("k", "p/m", completions.RequestOK, time.Second, 1, 1))
	if err := r.Flush(ctx); err == nil {
		t.Fatal("the injected failure did not happen")
	}
	today := time.Now().UTC()
	rows, err := r.Spend(ctx, "k", today, today, SpendByModel)
	if err != nil || len(rows) != 1 || rows[0].Requests != 1 {
		t.Fatalf("one request counted as %+v (err %v)", rows, err)
	}
}

// MaxSpendDays "bounds the days one Spend call reads", but Spend does not check it.
func TestReview12eSpendDoesNotBoundDays(t *testing.T) {
	r := NewRollup(memstore.New(), RollupOptions{FlushEvery: time.Hour})
	defer r.Close(context.Background())
	from := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	to := from.AddDate(0, 0, 5*MaxSpendDays)
	if _, err := r.Spend(context.Background(), "k", from, to, SpendByTag); err == nil {
		t.Fatalf("Spend read %d days without error (MaxSpendDays %d)", int(to.Sub(from).Hours()/24)+1, MaxSpendDays)
	}
}
