package riverqueue_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/switchyard-ai/switchyard/jobqueue"
	"github.com/switchyard-ai/switchyard/jobqueue/riverqueue"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
	"github.com/switchyard-ai/switchyard/store/pgstore"
)

var schemas atomic.Int64

// open returns a queue on a fresh schema of the test cluster, or skips saying how to get
// one.
func open(t *testing.T) *riverqueue.Queue {
	t.Helper()
	dsn := os.Getenv("SWITCHYARD_TEST_POSTGRES")
	if dsn == "" {
		t.Skip("SWITCHYARD_TEST_POSTGRES is not set: scripts/pg-test-cluster.sh starts a throwaway PostgreSQL cluster and prints it (needs the Debian package postgresql)")
	}
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	schema := fmt.Sprintf("riverqueue_%d_%d", os.Getpid(), schemas.Add(1))
	q, err := riverqueue.Open(ctx, pool, riverqueue.Options{Schema: schema, StaleAfter: time.Second,
		RetryDelay: 50 * time.Millisecond, PollInterval: 50 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		q.Stop(ctx)
	})
	return q
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestUniqueRetryLaterAndCancel: an id enqueued several times (before and after it ran)
// runs once; RetryLater runs a job again; Cancel ends a running handler's context with
// ErrCancelled.
func TestUniqueRetryLaterAndCancel(t *testing.T) {
	q := open(t)
	ctx := context.Background()
	var mu sync.Mutex
	runs := map[string]int{}
	cancelled := make(chan error, 1)
	started := make(chan struct{}, 1)
	err := q.Register("test", jobqueue.Kind{Workers: 2, Run: func(ctx context.Context, id string) error {
		mu.Lock()
		runs[id]++
		n := runs[id]
		mu.Unlock()
		switch id {
		case "later":
			if n == 1 {
				return jobqueue.RetryLater(100 * time.Millisecond)
			}
		case "block":
			started <- struct{}{}
			<-ctx.Done()
			cancelled <- context.Cause(ctx)
			return ctx.Err()
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Register("test", jobqueue.Kind{Workers: 1, Run: func(context.Context, string) error { return nil }}); err == nil {
		t.Error("a kind registered twice")
	}
	for range 3 {
		if err := q.Enqueue(ctx, "test", "once"); err != nil {
			t.Fatal(err)
		}
	}
	if err := q.Enqueue(ctx, "test", "later"); err != nil {
		t.Fatal(err)
	}
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := q.Register("late", jobqueue.Kind{Workers: 1, Run: func(context.Context, string) error { return nil }}); err == nil {
		t.Error("registered after Start")
	}
	count := func(id string) int { mu.Lock(); defer mu.Unlock(); return runs[id] }
	waitFor(t, "once to run", func() bool { return count("once") == 1 })
	waitFor(t, "later to run again", func() bool { return count("later") == 2 })
	if err := q.Enqueue(ctx, "test", "once"); err != nil { // after it completed
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if n := count("once"); n != 1 {
		t.Errorf("an id enqueued 4 times ran %d times", n)
	}

	if err := q.Enqueue(ctx, "test", "block"); err != nil {
		t.Fatal(err)
	}
	<-started
	if err := q.Cancel(ctx, "test", "block"); err != nil {
		t.Fatal(err)
	}
	select {
	case cause := <-cancelled:
		if !errors.Is(cause, jobqueue.ErrCancelled) {
			t.Errorf("cause = %v, want ErrCancelled", cause)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Cancel did not reach the running handler")
	}
	if err := q.Cancel(ctx, "test", "unknown"); err != nil {
		t.Errorf("Cancel of an id the queue does not hold: %v", err)
	}
}

// TestEnqueueTxCommitsWithTheRecord: a job enqueued inside a store Update exists only if
// the Update commits; a transaction of another store is refused (false) without error.
func TestEnqueueTxCommitsWithTheRecord(t *testing.T) {
	dsn := os.Getenv("SWITCHYARD_TEST_POSTGRES")
	if dsn == "" {
		t.Skip("SWITCHYARD_TEST_POSTGRES is not set: scripts/pg-test-cluster.sh starts a throwaway PostgreSQL cluster and prints it (needs the Debian package postgresql)")
	}
	ctx := context.Background()
	schema := fmt.Sprintf("riverqueue_tx_%d_%d", os.Getpid(), schemas.Add(1))
	d, err := pgstore.OpenDriver(ctx, dsn, pgstore.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	st := store.New(d)
	t.Cleanup(func() { st.Close() })
	q, err := riverqueue.Open(ctx, d.Pool(), riverqueue.Options{Schema: schema, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	jobs := func(id string) int {
		var n int
		if err := d.Pool().QueryRow(ctx, "SELECT count(*) FROM "+schema+".river_job WHERE args->>'id' = $1", id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	boom := errors.New("boom")
	err = st.Update(ctx, func(tx store.Tx) error {
		if err := tx.Put(ctx, store.TrainingJobs, "rolled-back", []byte("{}")); err != nil {
			return err
		}
		if ok, err := q.EnqueueTx(ctx, tx, "t", "rolled-back"); !ok || err != nil {
			return fmt.Errorf("EnqueueTx = %v, %v", ok, err)
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatal(err)
	}
	if n := jobs("rolled-back"); n != 0 {
		t.Fatalf("a rolled-back Update left %d queue entries", n)
	}
	err = st.Update(ctx, func(tx store.Tx) error {
		if err := tx.Put(ctx, store.TrainingJobs, "kept", []byte("{}")); err != nil {
			return err
		}
		_, err := q.EnqueueTx(ctx, tx, "t", "kept")
		return err
	})
	if err != nil || jobs("kept") != 1 {
		t.Fatalf("committed Update: %v, %d queue entries", err, jobs("kept"))
	}
	err = memstore.New().Update(ctx, func(tx store.Tx) error {
		ok, err := q.EnqueueTx(ctx, tx, "t", "elsewhere")
		if ok || err != nil {
			return fmt.Errorf("EnqueueTx on a memstore transaction = %v, %v", ok, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestSignalStopsFetchingNotRunningJobs: when Start's context ends (a shutdown's signal)
// the queue takes no more jobs but the running ones go on — a batch lets its lines in
// flight finish — until Stop, which ends those still running with ErrShutdown.
func TestSignalStopsFetchingNotRunningJobs(t *testing.T) {
	q := open(t)
	started := make(chan string, 4)
	release := make(chan struct{})
	causes := make(chan error, 4)
	err := q.Register("test", jobqueue.Kind{Workers: 2, Run: func(ctx context.Context, id string) error {
		started <- id
		if id == "finishes" {
			select {
			case <-release:
				return ctx.Err() // nil unless the signal cut it
			case <-ctx.Done():
				causes <- context.Cause(ctx)
				return ctx.Err()
			}
		}
		<-ctx.Done()
		causes <- context.Cause(ctx)
		return ctx.Err()
	}})
	if err != nil {
		t.Fatal(err)
	}
	bg := context.Background()
	for _, id := range []string{"finishes", "held"} {
		if err := q.Enqueue(bg, "test", id); err != nil {
			t.Fatal(err)
		}
	}
	signal, stop := context.WithCancel(bg)
	if err := q.Start(signal); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		select {
		case <-started:
		case <-time.After(15 * time.Second):
			t.Fatal("the jobs did not start")
		}
	}
	stop()
	if err := q.Enqueue(bg, "test", "late"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // ten poll intervals
	select {
	case cause := <-causes:
		t.Fatalf("the signal ended a running job (%v)", cause)
	case id := <-started:
		t.Fatalf("job %s started after the signal", id)
	default:
	}
	close(release) // "finishes" returns by itself
	ctx, cancel := context.WithTimeout(bg, 10*time.Second)
	defer cancel()
	if err := q.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case cause := <-causes:
		if !errors.Is(cause, jobqueue.ErrShutdown) {
			t.Errorf("Stop ended the held job with %v, want ErrShutdown", cause)
		}
	default:
		t.Error("Stop returned before the held job's handler did")
	}
	select {
	case cause := <-causes:
		t.Errorf("a second job was ended (%v): the released one should have finished by itself", cause)
	default:
	}
}
