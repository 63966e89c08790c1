package batch_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/batch"
	"github.com/switchyard-ai/switchyard/jobqueue"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/boltstore"
	"github.com/switchyard-ai/switchyard/store/memstore"
	"github.com/switchyard-ai/switchyard/store/pgstore"
)

// overdueStores are the stores the overdue tests run on: memory, bbolt, and PostgreSQL
// when SWITCHYARD_TEST_POSTGRES is set (each a fresh one).
var overdueStores = []struct {
	name string
	open func(t *testing.T) *store.Store
}{
	{"memory", func(t *testing.T) *store.Store {
		st := memstore.New()
		t.Cleanup(func() { st.Close() })
		return st
	}},
	{"bbolt", func(t *testing.T) *store.Store {
		st, err := boltstore.Open(filepath.Join(t.TempDir(), "switchyard.db"), boltstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}},
	{"postgres", func(t *testing.T) *store.Store {
		dsn := pgDSN(t)
		schema := fmt.Sprintf("batch_overdue_%d_%d", os.Getpid(), time.Now().UnixNano())
		st, err := pgstore.Open(context.Background(), dsn, pgstore.Options{Schema: schema})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}},
}

// fakeClock is a clock tests move by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *fakeClock) Add(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

// parked starts a service on st whose queue is not started: its batches wait (as behind
// busy workers, or on a replica whose workers are down) until the test starts q.
func parked(t *testing.T, st *store.Store, exec *scriptedExecutor, o batch.Options) (*harness, *jobqueue.Local) {
	t.Helper()
	q := jobqueue.NewLocal(10 * time.Millisecond)
	// Registered before the harness: runs after the service's Close.
	t.Cleanup(func() { q.Stop(context.Background()) })
	o.Queue = q
	if o.Workers == 0 {
		o.Workers = 1
	}
	if o.ExpireInterval == 0 {
		o.ExpireInterval = -1
	}
	return newHarness(t, st, exec, o), q
}

// checkExpiredUnrun asserts b expired with none of its n lines sent: no output file, every
// line in the error file, in order, as batch_expired.
func checkExpiredUnrun(t *testing.T, h *harness, owner string, b batch.Batch, n int) {
	t.Helper()
	if b.Status != batch.StatusExpired || b.ExpiredAt == nil || b.CompletedAt != nil || b.CancelledAt != nil {
		t.Fatalf("batch %s: status %s expired_at %v", b.ID, b.Status, b.ExpiredAt)
	}
	if b.RequestCounts != (batch.RequestCounts{Total: n, Failed: n}) {
		t.Fatalf("batch %s: counts %+v", b.ID, b.RequestCounts)
	}
	if b.OutputFileID != nil {
		t.Fatalf("batch %s: an output file %s though no line was answered", b.ID, *b.OutputFileID)
	}
	errs := h.lines(t, owner, b.ErrorFileID)
	var want []string
	for i := range n {
		want = append(want, fmt.Sprintf("r%d", i))
	}
	if got := customIDs(errs); got != strings.Join(want, ",") {
		t.Fatalf("batch %s: error file %s, want %s", b.ID, got, strings.Join(want, ","))
	}
	for _, l := range errs {
		if l.Response != nil || l.Error == nil || l.Error.Code != batch.CodeExpired || !strings.HasPrefix(l.ID, "batch_req_") {
			t.Fatalf("batch %s: expired line %+v", b.ID, l)
		}
	}
}

// TestOverdueQueuedBatchReadsExpired: a batch still queued when its completion window
// ends reads expired at once — by Get and by List, before any worker picks it up — with
// every line in its error file as batch_expired, and its input file released; the worker
// that picks it up later sends nothing.
func TestOverdueQueuedBatchReadsExpired(t *testing.T) {
	for _, sc := range overdueStores {
		t.Run(sc.name, func(t *testing.T) {
			clock := newFakeClock()
			exec := newScripted()
			h, q := parked(t, sc.open(t), exec, batch.Options{Clock: clock.Now})
			ctx := context.Background()
			f1 := h.upload(t, "alice", jsonl("ok", "ok", "ok"))
			f2 := h.upload(t, "alice", jsonl("ok", "bad"))
			b1 := h.create(t, "alice", f1.ID)
			b2 := h.create(t, "alice", f2.ID)

			clock.Add(24*time.Hour - time.Second)
			if got, err := h.svc.Get(ctx, "alice", b1.ID); err != nil || got.Status != batch.StatusValidating {
				t.Fatalf("within its window: %s %v", got.Status, err)
			}
			clock.Add(2 * time.Second)

			got1, err := h.svc.Get(ctx, "alice", b1.ID)
			if err != nil {
				t.Fatal(err)
			}
			checkExpiredUnrun(t, h, "alice", got1, 3)
			// b2 is first read through List.
			list, err := h.svc.List(ctx, "alice", "", 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(list.Data) != 2 {
				t.Fatalf("list %d batches", len(list.Data))
			}
			for _, b := range list.Data {
				n := map[string]int{b1.ID: 3, b2.ID: 2}[b.ID]
				checkExpiredUnrun(t, h, "alice", b, n)
			}
			// Reads after the first show the same batch.
			again, err := h.svc.Get(ctx, "alice", b2.ID)
			if err != nil {
				t.Fatal(err)
			}
			if *again.ErrorFileID != *list.Data[0].ErrorFileID && *again.ErrorFileID != *list.Data[1].ErrorFileID {
				t.Fatalf("a second read shows another error file")
			}
			for _, f := range []string{f1.ID, f2.ID} {
				if err := h.files.Delete(ctx, "alice", f); err != nil {
					t.Fatalf("the expired batch still holds its input %s: %v", f, err)
				}
			}

			// The workers pick the batches up later: they have ended, nothing is sent.
			if err := q.Start(ctx); err != nil {
				t.Fatal(err)
			}
			if err := q.Stop(ctx); err != nil {
				t.Fatal(err)
			}
			exec.mu.Lock()
			calls := len(exec.calls)
			exec.mu.Unlock()
			if calls != 0 {
				t.Fatalf("%d lines of expired batches were sent", calls)
			}
			final, err := h.svc.Get(ctx, "alice", b1.ID)
			if err != nil || final.Status != batch.StatusExpired || *final.ErrorFileID != *got1.ErrorFileID || final.RequestCounts != got1.RequestCounts {
				t.Fatalf("after the workers: %+v %v", final, err)
			}
		})
	}
}

// TestOverdueHandedBackBatchKeepsItsAnswers (bbolt): a batch handed back at a shutdown
// mid-run, whose window ends before a worker resumes it, reads expired at once with the
// lines answered before the shutdown in its output file and the others as batch_expired.
func TestOverdueHandedBackBatchKeepsItsAnswers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "switchyard.db")
	st, err := boltstore.Open(path, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	clock := newFakeClock()
	first := newScripted()
	first.limit = 3
	h := newHarness(t, st, first, batch.Options{Concurrency: 1, Clock: clock.Now})
	f := h.upload(t, "alice", jsonl(okModels(6)...))
	b := h.create(t, "alice", f.ID)
	<-first.blocked // r3 in flight when the server stops
	if err := h.svc.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st, err = boltstore.Open(path, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	clock.Add(25 * time.Hour)
	second := newScripted()
	h2, _ := parked(t, st, second, batch.Options{Concurrency: 1, Clock: clock.Now})
	got, err := h2.svc.Get(context.Background(), "alice", b.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != batch.StatusExpired || got.ExpiredAt == nil || got.RequestCounts != (batch.RequestCounts{Total: 6, Completed: 3, Failed: 3}) {
		t.Fatalf("read after the window: %s %+v", got.Status, got.RequestCounts)
	}
	if ids := customIDs(h2.lines(t, "alice", got.OutputFileID)); ids != "r0,r1,r2" {
		t.Fatalf("output %s", ids)
	}
	errs := h2.lines(t, "alice", got.ErrorFileID)
	if ids := customIDs(errs); ids != "r3,r4,r5" || errs[0].Error == nil || errs[0].Error.Code != batch.CodeExpired {
		t.Fatalf("errors %s %+v", ids, errs[0])
	}
	if err := h2.files.Delete(context.Background(), "alice", f.ID); err != nil {
		t.Fatalf("the expired batch still holds its input: %v", err)
	}
}

// TestOverdueEndedBatchesUntouched: a completed or a cancelled batch stays as it ended
// when its window has passed.
func TestOverdueEndedBatchesUntouched(t *testing.T) {
	for _, sc := range overdueStores {
		t.Run(sc.name, func(t *testing.T) {
			clock := newFakeClock()
			exec := newScripted()
			h, q := parked(t, sc.open(t), exec, batch.Options{Clock: clock.Now, ExpireInterval: time.Millisecond})
			ctx := context.Background()
			cancelled := h.create(t, "alice", h.upload(t, "alice", jsonl("ok")).ID)
			cancelled, err := h.svc.Cancel(ctx, "alice", cancelled.ID)
			if err != nil || cancelled.Status != batch.StatusCancelled {
				t.Fatalf("cancel: %s %v", cancelled.Status, err)
			}
			done := h.create(t, "alice", h.upload(t, "alice", jsonl("ok", "bad")).ID)
			if err := q.Start(ctx); err != nil {
				t.Fatal(err)
			}
			done = h.wait(t, "alice", done.ID, ended)
			if done.Status != batch.StatusCompleted {
				t.Fatalf("ended %s", done.Status)
			}

			clock.Add(48 * time.Hour)
			for _, want := range []batch.Batch{cancelled, done} {
				got, err := h.svc.Get(ctx, "alice", want.ID)
				if err != nil {
					t.Fatal(err)
				}
				g, _ := json.Marshal(got)
				w, _ := json.Marshal(want)
				if string(g) != string(w) {
					t.Fatalf("after the window:\n got %s\nwant %s", g, w)
				}
			}
			list, err := h.svc.List(ctx, "alice", "", 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range list.Data {
				if b.Status == batch.StatusExpired || b.ExpiredAt != nil {
					t.Fatalf("listed %s as %s", b.ID, b.Status)
				}
			}
		})
	}
}

// TestOverdueSweepEndsUnreadBatches: the service's periodic check ends a queued batch
// past its window that nobody reads: its input file is released.
func TestOverdueSweepEndsUnreadBatches(t *testing.T) {
	clock := newFakeClock()
	h, _ := parked(t, nil, newScripted(), batch.Options{Clock: clock.Now, ExpireInterval: time.Millisecond})
	f := h.upload(t, "alice", jsonl("ok", "ok"))
	b := h.create(t, "alice", f.ID)
	clock.Add(25 * time.Hour)
	ctx := context.Background()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if h.files.Delete(ctx, "alice", f.ID) == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the overdue batch still holds its input: no sweep ended it")
		}
	}
	got, err := h.svc.Get(ctx, "alice", b.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != batch.StatusExpired || got.RequestCounts != (batch.RequestCounts{Total: 2, Failed: 2}) {
		t.Fatalf("after the sweep: %s %+v", got.Status, got.RequestCounts)
	}
}

// TestOverdueExpiryRacesWorkers (run with -race): reads, the sweep and the workers picking
// up the same overdue batches at once end each exactly once — one error file per batch
// with each line once, counts not doubled, nothing sent.
func TestOverdueExpiryRacesWorkers(t *testing.T) {
	for _, sc := range overdueStores {
		t.Run(sc.name, func(t *testing.T) {
			clock := newFakeClock()
			exec := newScripted()
			h, q := parked(t, sc.open(t), exec, batch.Options{Clock: clock.Now, Workers: 4, ExpireInterval: time.Millisecond})
			ctx := context.Background()
			const n = 12
			var ids, inputs []string
			for range n {
				f := h.upload(t, "alice", jsonl("ok", "ok", "ok"))
				inputs = append(inputs, f.ID)
				ids = append(ids, h.create(t, "alice", f.ID).ID)
			}
			clock.Add(25 * time.Hour)

			var wg sync.WaitGroup
			for g := range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range n {
						id := ids[(i+g*3)%n]
						if g%2 == 0 {
							if _, err := h.svc.Get(ctx, "alice", id); err != nil {
								t.Error(err)
							}
						} else if _, err := h.svc.List(ctx, "alice", "", 0); err != nil {
							t.Error(err)
						}
					}
				}()
			}
			if err := q.Start(ctx); err != nil {
				t.Fatal(err)
			}
			wg.Wait()
			for _, id := range ids {
				got := h.wait(t, "alice", id, ended)
				checkExpiredUnrun(t, h, "alice", got, 3)
			}
			outs, err := h.files.List(ctx, "alice", batch.FileQuery{Purpose: batch.PurposeBatchOutput})
			if err != nil {
				t.Fatal(err)
			}
			if len(outs.Data) != n {
				t.Fatalf("%d batch_output files for %d expired batches", len(outs.Data), n)
			}
			for _, f := range inputs {
				if err := h.files.Delete(ctx, "alice", f); err != nil {
					t.Fatalf("input still held: %v", err)
				}
			}
			exec.mu.Lock()
			calls := len(exec.calls)
			exec.mu.Unlock()
			if calls != 0 {
				t.Fatalf("%d lines of expired batches were sent", calls)
			}
		})
	}
}

// TestOverdueExpiryAcrossReplicasOnPostgres (River): two replicas on one database — one
// reads (and its periodic check runs) while the other's workers pick up the same overdue
// batches — end each batch once.
func TestOverdueExpiryAcrossReplicasOnPostgres(t *testing.T) {
	pgDSN(t)
	schema := fmt.Sprintf("batch_overdue_rep_%d_%d", os.Getpid(), time.Now().UnixNano())
	clock := newFakeClock()
	ctx := context.Background()
	stopQueue := func(q interface{ Stop(context.Context) error }) {
		t.Cleanup(func() {
			sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			q.Stop(sctx)
		})
	}
	stA, qA := openShared(t, schema, quiet())
	stopQueue(qA)
	execA := newScripted()
	a := newHarness(t, stA, execA, batch.Options{Queue: qA, Workers: 4, Clock: clock.Now, ExpireInterval: -1})
	stB, qB := openShared(t, schema, quiet())
	stopQueue(qB)
	b := newHarness(t, stB, newScripted(), batch.Options{Queue: qB, Workers: 0, Clock: clock.Now, ExpireInterval: time.Millisecond})
	if err := qB.Start(ctx); err != nil {
		t.Fatal(err)
	}
	const n = 8
	var ids []string
	for range n {
		ids = append(ids, b.create(t, "alice", b.upload(t, "alice", jsonl("ok", "ok", "ok")).ID).ID)
	}
	clock.Add(25 * time.Hour)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for _, id := range ids {
			if _, err := b.svc.Get(ctx, "alice", id); err != nil {
				t.Error(err)
			}
		}
	}()
	if err := qA.Start(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for _, id := range ids {
		checkExpiredUnrun(t, a, "alice", a.wait(t, "alice", id, ended), 3)
	}
	outs, err := a.files.List(ctx, "alice", batch.FileQuery{Purpose: batch.PurposeBatchOutput})
	if err != nil {
		t.Fatal(err)
	}
	if len(outs.Data) != n {
		t.Fatalf("%d batch_output files for %d expired batches", len(outs.Data), n)
	}
	execA.mu.Lock()
	defer execA.mu.Unlock()
	if len(execA.calls) != 0 {
		t.Fatalf("%d lines of expired batches were sent", len(execA.calls))
	}
}

// TestOverdueCancelAnswersExpired: cancelling a queued batch past its window finds it
// expired (a 409), as a read just before would have shown it.
func TestOverdueCancelAnswersExpired(t *testing.T) {
	clock := newFakeClock()
	h, _ := parked(t, nil, newScripted(), batch.Options{Clock: clock.Now})
	b := h.create(t, "alice", h.upload(t, "alice", jsonl("ok")).ID)
	clock.Add(25 * time.Hour)
	var ce *batch.ConflictError
	if _, err := h.svc.Cancel(context.Background(), "alice", b.ID); !errors.As(err, &ce) {
		t.Fatalf("cancel past the window: %v", err)
	}
	got, err := h.svc.Get(context.Background(), "alice", b.ID)
	if err != nil {
		t.Fatal(err)
	}
	checkExpiredUnrun(t, h, "alice", got, 1)
}
