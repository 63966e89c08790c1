package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/pgstore"
)

// hotReplicas opens a store per element of retries on one fresh schema (processes sharing
// the database), each running a transaction again at most its retries times after a
// serialization failure (0: pgstore's default).
func hotReplicas(t *testing.T, retries ...int) []*store.Store {
	t.Helper()
	addr := dsn(t)
	schema := freshSchema()
	out := make([]*store.Store, len(retries))
	for i := range out {
		s, err := pgstore.Open(context.Background(), addr, pgstore.Options{Schema: schema, MaxRetries: retries[i], MaxConns: 16})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		out[i] = s
	}
	return out
}

// increment adds one to the counter under c/key in tx (a missing record counts 0).
func increment(ctx context.Context, tx store.Tx, c store.Collection, key string) error {
	v, err := tx.Get(ctx, c, key)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	n, _ := strconv.Atoi(string(v))
	return tx.Put(ctx, c, key, []byte(strconv.Itoa(n+1)))
}

func readCount(t *testing.T, s *store.Store, c store.Collection, key string) int {
	t.Helper()
	v, err := s.Get(context.Background(), c, key)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(string(v))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestHotRecordWritersWait: 32 goroutines over two processes' stores each add one to the
// same record 25 times (a budget account every request charges), with one run again
// allowed after a serialization failure. Under SERIALIZABLE alone most of them abort each
// other past their retries (with the default 20 retries about 1 in 2,000–4,000 budgeted
// requests still failed, a 500); named to UpdateLocked they wait for each other, so none
// fails and every increment is there.
func TestHotRecordWritersWait(t *testing.T) {
	sts := hotReplicas(t, 1, 1)
	ctx := context.Background()
	const goroutines, each = 32, 25
	hot := []store.Ref{{Collection: store.Budgets, Key: "hot"}}
	var failed atomic.Int64
	var lastErr atomic.Value
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := sts[g%len(sts)]
			for range each {
				err := st.UpdateLocked(ctx, hot, func(tx store.Tx) error {
					if err := increment(ctx, tx, store.Budgets, "hot"); err != nil {
						return err
					}
					// A record of its own beside the hot one, as a request's other writes.
					return increment(ctx, tx, store.Budgets, fmt.Sprintf("own/%02d", g))
				})
				if err != nil {
					failed.Add(1)
					lastErr.Store(err)
				}
			}
		}()
	}
	wg.Wait()
	if n := failed.Load(); n > 0 {
		t.Errorf("%d of %d updates failed; the last: %v", n, goroutines*each, lastErr.Load())
	}
	if got := readCount(t, sts[0], store.Budgets, "hot"); got != goroutines*each-int(failed.Load()) || got != goroutines*each {
		t.Errorf("hot record = %d, want %d (failed %d)", got, goroutines*each, failed.Load())
	}
	for g := range goroutines {
		if got := readCount(t, sts[1], store.Budgets, fmt.Sprintf("own/%02d", g)); got != each {
			t.Errorf("own/%02d = %d, want %d", g, got, each)
		}
	}
}

// TestRunAgainWaitsForTheLockers: a writer of the hot record that does not name it (plain
// Update, as an operator's change of an account's limits) among 16 that do (on two other
// processes' stores): its run again after losing to them takes the record's lock first,
// so it waits for them instead of losing again; with one run again allowed none of its 200
// updates fails.
func TestRunAgainWaitsForTheLockers(t *testing.T) {
	sts := hotReplicas(t, 0, 0, 1)
	ctx := context.Background()
	hot := []store.Ref{{Collection: store.Budgets, Key: "hot"}}
	var wg sync.WaitGroup
	var stop atomic.Bool
	var lockerFailed atomic.Int64
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				// The default retries: a plain run (unlocked) may still make one abort.
				if err := sts[g%2].UpdateLocked(ctx, hot, func(tx store.Tx) error { return increment(ctx, tx, store.Budgets, "hot") }); err != nil {
					lockerFailed.Add(1)
				}
			}
		}()
	}
	const plain = 200
	var plainFailed []error
	for range plain {
		if err := sts[2].Update(ctx, func(tx store.Tx) error { return increment(ctx, tx, store.Budgets, "hot") }); err != nil {
			plainFailed = append(plainFailed, err)
		}
	}
	stop.Store(true)
	wg.Wait()
	if len(plainFailed) > 0 {
		t.Errorf("%d of %d plain updates of the hot record failed; the first: %v", len(plainFailed), plain, plainFailed[0])
	}
	if n := lockerFailed.Load(); n > 0 {
		t.Errorf("%d locked updates failed", n)
	}
}

// TestLocksEndWithTheirTransaction: the locks of an UpdateLocked that failed (fn's error,
// a commit that rolled back) or whose context ended while it waited for one are not left
// held: the next UpdateLocked
// of the record goes through, and the failed one wrote nothing.
func TestLocksEndWithTheirTransaction(t *testing.T) {
	sts := hotReplicas(t, 1, 1)
	ctx := context.Background()
	hot := []store.Ref{{Collection: store.Budgets, Key: "hot"}, {Collection: store.Budgets, Key: "other"}}
	boom := errors.New("boom")
	err := sts[0].UpdateLocked(ctx, hot, func(tx store.Tx) error {
		if err := increment(ctx, tx, store.Budgets, "hot"); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("UpdateLocked = %v, want fn's error", err)
	}
	// A statement that failed inside, fn going on: the commit is a rollback, an error.
	err = sts[0].UpdateLocked(ctx, hot, func(tx store.Tx) error {
		if err := increment(ctx, tx, store.Budgets, "hot"); err != nil {
			return err
		}
		ptx, _ := pgstore.PgxTx(tx)
		ptx.Exec(ctx, "SELECT 1/0") // its error ignored
		return nil
	})
	if !errors.Is(err, pgx.ErrTxCommitRollback) {
		t.Fatalf("UpdateLocked after a failed statement = %v, want pgx.ErrTxCommitRollback", err)
	}
	// One holds the record's lock; another waits for it until its context ends.
	holding, release := make(chan struct{}), make(chan struct{})
	held := make(chan error, 1)
	go func() {
		held <- sts[0].UpdateLocked(ctx, hot[:1], func(tx store.Tx) error {
			close(holding)
			<-release
			return increment(ctx, tx, store.Budgets, "hot")
		})
	}()
	<-holding
	wctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	ran := false
	err = sts[1].UpdateLocked(wctx, hot, func(tx store.Tx) error { ran = true; return nil })
	cancel()
	if err == nil || ran {
		t.Fatalf("UpdateLocked waiting for a held lock until its context ended: ran %v, %v", ran, err)
	}
	close(release)
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	for i, st := range sts {
		if err := st.UpdateLocked(ctx, hot, func(tx store.Tx) error { return increment(ctx, tx, store.Budgets, "hot") }); err != nil {
			t.Fatalf("store %d: UpdateLocked after the others ended: %v", i, err)
		}
	}
	if got := readCount(t, sts[1], store.Budgets, "hot"); got != 3 {
		t.Errorf("hot = %d, want 3 (the failed update wrote nothing)", got)
	}
}
