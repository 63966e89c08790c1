package batch_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/batch"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/boltstore"
)

func okModels(n int) []string {
	m := make([]string, n)
	for i := range m {
		m[i] = "ok"
	}
	return m
}

// checkAllAnsweredOnce asserts the batch completed with every one of n lines in its output
// file in order, and that the executors together answered each line exactly once.
func checkAllAnsweredOnce(t *testing.T, h *harness, b batch.Batch, n int, execs ...*scriptedExecutor) {
	t.Helper()
	if b.Status != batch.StatusCompleted || b.RequestCounts != (batch.RequestCounts{Total: n, Completed: n}) || b.Usage.TotalTokens != 10*n {
		t.Fatalf("ended %s %+v usage %+v", b.Status, b.RequestCounts, b.Usage)
	}
	var want []string
	for i := range n {
		want = append(want, fmt.Sprintf("r%d", i))
		sum := 0
		for _, e := range execs {
			sum += e.answers(fmt.Sprintf("r%d", i))
		}
		if sum != 1 {
			t.Errorf("r%d was answered %d times", i, sum)
		}
	}
	if got := customIDs(h.lines(t, "alice", b.OutputFileID)); got != strings.Join(want, ",") {
		t.Fatalf("output %s", got)
	}
}

// TestBatchResumesAfterRestart (bbolt): a server stopped mid-batch cuts the lines in
// flight and hands the batch back; after a restart on the same file the batch resumes and
// completes, and no line answered before the stop is sent again (nothing is paid twice).
func TestBatchResumesAfterRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "switchyard.db")
	st, err := boltstore.Open(path, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	first := newScripted()
	first.limit = 4
	h := newHarness(t, st, first, batch.Options{Concurrency: 2})
	f := h.upload(t, "alice", jsonl(okModels(12)...))
	b := h.create(t, "alice", f.ID)
	<-first.blocked // two lines in flight when the server stops
	<-first.blocked
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
	second := newScripted()
	h2 := newHarness(t, st, second, batch.Options{Concurrency: 2})
	got := h2.wait(t, "alice", b.ID, ended)
	checkAllAnsweredOnce(t, h2, got, 12, first, second)
	n := 0
	for i := range 12 {
		n += first.answers(fmt.Sprintf("r%d", i))
	}
	if n != 4 {
		t.Fatalf("the first server answered %d lines, want 4 before it stopped", n)
	}
	// The stored answers are deleted once the files hold them (just after the batch shows
	// completed).
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		es, _ := st.List(context.Background(), store.BatchResults, store.ListOptions{})
		if len(es) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d answered lines left in the store after the end", len(es))
		}
	}
}

// TestBatchResumedAfterCrash: a process that dies mid-batch (here: it stops answering and
// never hands the batch back) leaves it running in the store; the next process resumes it
// at its start, the first one's run finds it taken over and stops, and every line is
// answered once.
func TestBatchResumedAfterCrash(t *testing.T) {
	path := filepath.Join(t.TempDir(), "switchyard.db")
	st, err := boltstore.Open(path, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	dead := newScripted()
	dead.limit = 5
	h := newHarness(t, st, dead, batch.Options{Concurrency: 1})
	f := h.upload(t, "alice", jsonl(okModels(9)...))
	b := h.create(t, "alice", f.ID)
	<-dead.blocked
	// The five answers are stored as they come: wait for the last one.
	for {
		es, err := st.List(context.Background(), store.BatchResults, store.ListOptions{Prefix: b.ID + "/"})
		if err != nil {
			t.Fatal(err)
		}
		if len(es) == 5 {
			break
		}
	}
	next := newScripted()
	h2 := newHarness(t, st, next, batch.Options{Concurrency: 1})
	got := h2.wait(t, "alice", b.ID, ended)
	checkAllAnsweredOnce(t, h2, got, 9, dead, next)
	if next.answers("r0") != 0 || next.answers("r8") != 1 { // concurrency 1: r0-r4 were the first's
		t.Fatalf("the second process answered r0 %d times, r8 %d times", next.answers("r0"), next.answers("r8"))
	}
}

// TestCloseLetsLinesInFlightFinish: a server stopped with time to spare (serve's
// --shutdown-timeout) sends no more lines but lets the ones in flight finish and keeps
// their answers, so the next run does not send (and pay for) them again.
func TestCloseLetsLinesInFlightFinish(t *testing.T) {
	path := filepath.Join(t.TempDir(), "switchyard.db")
	st, err := boltstore.Open(path, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	first := newScripted()
	h := newHarness(t, st, first, batch.Options{Concurrency: 2})
	f := h.upload(t, "alice", jsonl("wait", "wait", "ok", "ok"))
	b := h.create(t, "alice", f.ID)
	<-first.started // both waiting lines are at the upstream
	<-first.started
	go func() { time.Sleep(200 * time.Millisecond); close(first.release) }() // they answer during the stop
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.svc.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if first.answers("r2") != 0 || first.answers("r3") != 0 {
		t.Fatal("lines were sent after the stop began")
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st, err = boltstore.Open(path, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	second := newScripted()
	close(second.release)
	h2 := newHarness(t, st, second, batch.Options{Concurrency: 2})
	got := h2.wait(t, "alice", b.ID, ended)
	if got.Status != batch.StatusCompleted || got.RequestCounts.Completed != 4 {
		t.Fatalf("ended %s %+v", got.Status, got.RequestCounts)
	}
	for _, id := range []string{"r0", "r1"} {
		if n := first.answers(id) + second.answers(id); n != 1 {
			t.Errorf("%s, in flight at the stop, was answered %d times, want once", id, n)
		}
	}
	if n := len(second.started); n != 0 {
		t.Errorf("the next run sent %d of the lines in flight at the stop again (their calls paid twice)", n)
	}
}
