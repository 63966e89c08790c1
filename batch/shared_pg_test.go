package batch_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/batch"
	"github.com/switchyard-ai/switchyard/jobqueue/riverqueue"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/pgstore"
)

// Environment of the worker process TestSharedBatches starts (this test binary again).
const (
	batchHelperEnv   = "SWITCHYARD_BATCH_QUEUE_HELPER" // the schema
	batchHelperLimit = "SWITCHYARD_BATCH_QUEUE_LIMIT"  // lines it answers before it stalls
	sharedStale      = 2 * time.Second
)

// pgDSN returns the test cluster's address, or skips saying how to get one.
func pgDSN(t *testing.T) string {
	t.Helper()
	d := os.Getenv("SWITCHYARD_TEST_POSTGRES")
	if d == "" {
		t.Skip("SWITCHYARD_TEST_POSTGRES is not set: scripts/pg-test-cluster.sh starts a throwaway PostgreSQL cluster and prints it (needs the Debian package postgresql)")
	}
	return d
}

// openShared opens the PostgreSQL store and a River queue on schema: one replica.
func openShared(t *testing.T, schema string, log *slog.Logger) (*store.Store, *riverqueue.Queue) {
	t.Helper()
	ctx := context.Background()
	d, err := pgstore.OpenDriver(ctx, pgDSN(t), pgstore.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	st := store.New(d)
	q, err := riverqueue.Open(ctx, d.Pool(), riverqueue.Options{Schema: schema, StaleAfter: sharedStale,
		RetryDelay: 100 * time.Millisecond, PollInterval: 200 * time.Millisecond, Logger: log})
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st, q
}

// replica starts a batch service with workers on a replica of schema, and its queue.
func replica(t *testing.T, schema string, workers int, exec *scriptedExecutor, log *slog.Logger) *harness {
	t.Helper()
	st, q := openShared(t, schema, log)
	h := newHarness(t, st, exec, batch.Options{Queue: q, Workers: workers, Concurrency: 1})
	ctx := context.Background()
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		h.svc.Close(sctx)
		q.Stop(sctx)
	})
	return h
}

// TestSharedBatchHelper is the worker process of TestSharedBatches; run alone it skips.
func TestSharedBatchHelper(t *testing.T) {
	schema := os.Getenv(batchHelperEnv)
	if schema == "" {
		t.Skip("helper process of TestSharedBatches (runs only when that test starts it)")
	}
	exec := newScripted()
	fmt.Sscanf(os.Getenv(batchHelperLimit), "%d", &exec.limit)
	replica(t, schema, 1, exec, quiet())
	fmt.Fprintln(os.Stderr, "helper ready")
	go func() {
		for id := range exec.blocked {
			fmt.Fprintln(os.Stderr, "stalled at "+id)
		}
	}()
	_, _ = io.Copy(io.Discard, os.Stdin) // until the parent kills us
}

// TestSharedBatches runs batches on PostgreSQL across replicas: a replica without workers
// accepts a batch and the worker of another process runs it; when that worker is killed
// (kill -9) mid-batch, a surviving worker takes the batch over once its heartbeat is
// stale and finishes it, sending none of the lines the dead one had answered; every line
// is answered exactly once.
func TestSharedBatches(t *testing.T) {
	pgDSN(t)
	schema := fmt.Sprintf("batch_queue_%d_%d", os.Getpid(), time.Now().UnixNano())
	front := replica(t, schema, 0, newScripted(), quiet()) // HTTP-only: runs no batch

	const n, answeredBeforeKill = 8, 3
	cmd := exec.Command(os.Args[0], "-test.run=^TestSharedBatchHelper$", "-test.count=1", "-test.timeout=5m")
	cmd.Env = append(os.Environ(), batchHelperEnv+"="+schema, fmt.Sprintf("%s=%d", batchHelperLimit, answeredBeforeKill))
	stdin, _ := cmd.StdinPipe()
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var lines []string
	ready, stalled := make(chan struct{}), make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		var r, s sync.Once
		for sc.Scan() {
			mu.Lock()
			lines = append(lines, sc.Text())
			mu.Unlock()
			switch {
			case sc.Text() == "helper ready":
				r.Do(func() { close(ready) })
			case strings.HasPrefix(sc.Text(), "stalled at"):
				s.Do(func() { close(stalled) })
			}
		}
	}()
	t.Cleanup(func() {
		stdin.Close()
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			mu.Lock()
			t.Logf("helper log:\n%s", strings.Join(lines, "\n"))
			mu.Unlock()
		}
	})
	select {
	case <-ready:
	case <-time.After(60 * time.Second):
		t.Fatal("the helper did not start")
	}

	f := front.upload(t, "alice", jsonl(okModels(n)...))
	b := front.create(t, "alice", f.ID)
	select {
	case <-stalled:
	case <-time.After(60 * time.Second):
		t.Fatal("the helper never ran the batch")
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		es, err := front.st.List(context.Background(), store.BatchResults, store.ListOptions{Prefix: b.ID + "/"})
		if err != nil {
			t.Fatal(err)
		}
		if len(es) == answeredBeforeKill {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d answers stored", len(es))
		}
	}
	if got, _ := front.svc.Get(context.Background(), "alice", b.ID); got.Status != batch.StatusInProgress {
		t.Fatalf("batch %s while the helper runs it", got.Status)
	}
	cmd.Process.Kill() // kill -9: no hand-back, its heartbeat just stops
	cmd.Wait()

	survivor := newScripted()
	replica(t, schema, 1, survivor, quiet())
	deadline := time.Now().Add(60 * time.Second)
	var got batch.Batch
	for {
		var err error
		if got, err = front.svc.Get(context.Background(), "alice", b.ID); err != nil {
			t.Fatal(err)
		}
		if ended(got) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("batch still %s %+v after the worker died", got.Status, got.RequestCounts)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got.Status != batch.StatusCompleted || got.RequestCounts != (batch.RequestCounts{Total: n, Completed: n}) {
		t.Fatalf("ended %s %+v", got.Status, got.RequestCounts)
	}
	for i := range n {
		want := 1
		if i < answeredBeforeKill {
			want = 0 // answered by the dead worker
		}
		if a := survivor.answers(fmt.Sprintf("r%d", i)); a != want {
			t.Errorf("the survivor answered r%d %d times, want %d", i, a, want)
		}
	}
	if ids := customIDs(front.lines(t, "alice", got.OutputFileID)); ids != "r0,r1,r2,r3,r4,r5,r6,r7" {
		t.Fatalf("output %s", ids)
	}
}

// TestSignalLetsLinesInFlightFinishOnPostgres: on River, as with the in-process queue, a
// shutdown's signal does not cut the lines in flight: they may finish while the HTTP
// server drains and Close runs, and are kept; the next worker sends only the rest.
func TestSignalLetsLinesInFlightFinishOnPostgres(t *testing.T) {
	pgDSN(t)
	schema := fmt.Sprintf("batch_signal_%d_%d", os.Getpid(), time.Now().UnixNano())
	st, q := openShared(t, schema, quiet())
	first := newScripted()
	h := newHarness(t, st, first, batch.Options{Queue: q, Workers: 1, Concurrency: 2})
	signal, stop := context.WithCancel(context.Background())
	defer stop()
	if err := q.Start(signal); err != nil {
		t.Fatal(err)
	}
	b := h.create(t, "alice", h.upload(t, "alice", jsonl("wait", "wait", "ok", "ok")).ID)
	<-first.started // both waiting lines are at the upstream
	<-first.started
	stop()
	time.Sleep(300 * time.Millisecond) // the HTTP drain; the lines are still being answered
	go func() { time.Sleep(200 * time.Millisecond); close(first.release) }()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.svc.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := q.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if first.answers("r2") != 0 || first.answers("r3") != 0 {
		t.Fatal("lines were sent after the signal")
	}

	second := newScripted()
	close(second.release)
	st2, q2 := openShared(t, schema, quiet())
	h2 := newHarness(t, st2, second, batch.Options{Queue: q2, Workers: 1, Concurrency: 2})
	if err := q2.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		h2.svc.Close(sctx)
		q2.Stop(sctx)
	})
	got := h2.wait(t, "alice", b.ID, ended)
	if got.Status != batch.StatusCompleted || got.RequestCounts.Completed != 4 {
		t.Fatalf("ended %s %+v", got.Status, got.RequestCounts)
	}
	for _, id := range []string{"r0", "r1"} {
		if n := first.answers(id) + second.answers(id); n != 1 {
			t.Errorf("%s, in flight at the signal, was answered %d times, want once", id, n)
		}
	}
	if n := len(second.started); n != 0 {
		t.Errorf("the next worker sent %d of the lines in flight at the signal again (their calls paid twice)", n)
	}
}
