package usagelog

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// txCountingDriver is a test fake of a store that counts its committed transactions and
// the requests each wrote, and tells commits when one is committed.
type txCountingDriver struct {
	store.Driver
	mu      sync.Mutex
	batches []int // requests (request_log puts) of each committed transaction
	commits chan int
}

func newTxCountingDriver() *txCountingDriver {
	return &txCountingDriver{Driver: memstore.NewDriver(), commits: make(chan int, 1024)}
}

func (d *txCountingDriver) Update(ctx context.Context, fn func(tx store.Tx) error) error {
	var puts map[string]int
	err := d.Driver.Update(ctx, func(tx store.Tx) error {
		puts = map[string]int{}
		return fn(&countingTx{Tx: tx, puts: puts})
	})
	if err == nil && puts[string(store.RequestLog)] > 0 {
		n := puts[string(store.RequestLog)]
		d.mu.Lock()
		d.batches = append(d.batches, n)
		d.mu.Unlock()
		d.commits <- n
	}
	return err
}

// written is the requests of each committed transaction so far.
func (d *txCountingDriver) written() []int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]int(nil), d.batches...)
}

// fakeWindowClock is a test fake of the group window's timer: it records each window the
// writer asks for and fires only when the test calls fire.
type fakeWindowClock struct {
	mu      sync.Mutex
	asked   []time.Duration
	started chan struct{} // one value per window started
	fires   chan time.Time
}

func newFakeWindowClock() *fakeWindowClock {
	return &fakeWindowClock{started: make(chan struct{}, 1024), fires: make(chan time.Time, 1)}
}

func (c *fakeWindowClock) timer(d time.Duration) (<-chan time.Time, func() bool) {
	c.mu.Lock()
	c.asked = append(c.asked, d)
	c.mu.Unlock()
	c.started <- struct{}{}
	return c.fires, func() bool { return true }
}

func (c *fakeWindowClock) fire() { c.fires <- time.Now() }

func (c *fakeWindowClock) windows() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.asked...)
}

// waitFor receives from ch, failing the test after 20 s (a writer stuck).
func waitFor[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(20 * time.Second):
		t.Fatalf("no %s", what)
	}
	var zero T
	return zero
}

// TestHistoryGroupCommit: the requests received within the writer's group window are
// written in one transaction (one disk sync), where each lone request had its own; a lone
// request waits for the window the options set and no longer: the writer asks for that
// window, does not commit before it ends, and commits when it ends (no Flush, no Close).
func TestHistoryGroupCommit(t *testing.T) {
	ctx := context.Background()
	d := newTxCountingDriver()
	clock := newFakeWindowClock()
	const window = 3 * time.Millisecond
	h := newHistory(store.New(d), HistoryOptions{GroupWindow: window}, clock.timer)
	defer h.Close(ctx)
	now := time.Now().UTC()

	// A lone request: the writer takes it and opens the window.
	h.ObserveRequest(ctx, historyRecord("k", "", now, 0))
	waitFor(t, clock.started, "group window")
	if got := d.written(); len(got) != 0 {
		t.Fatalf("committed %v before the group window ended", got)
	}
	// Four more within the window share its transaction.
	for i := 1; i < 5; i++ {
		h.ObserveRequest(ctx, historyRecord("k", "", now.Add(time.Duration(i)*time.Millisecond), i))
	}
	clock.fire()
	if n := waitFor(t, d.commits, "commit when the window ended"); n != 5 {
		t.Fatalf("the window's transaction wrote %d requests, want 5 (all received within it)", n)
	}

	// The next lone request opens a window of its own and is committed when it ends.
	h.ObserveRequest(ctx, historyRecord("k", "", now.Add(time.Second), 5))
	waitFor(t, clock.started, "second group window")
	clock.fire()
	if n := waitFor(t, d.commits, "commit of the lone request"); n != 1 {
		t.Fatalf("the lone request's transaction wrote %d requests, want 1", n)
	}
	if got := d.written(); len(got) != 2 {
		t.Fatalf("transactions %v, want 2 (5 requests, then 1)", got)
	}
	for i, w := range clock.windows() {
		if w != window {
			t.Fatalf("window %d asked for %v, want the option's %v", i, w, window)
		}
	}
	listsAndCounts(t, h, "", RequestQuery{Owner: "k"}, 6)
}

// TestHistoryGroupWindowDefault: the zero options group for DefaultHistoryGroupWindow; a
// negative window commits each request as the writer finds it (no timer started).
func TestHistoryGroupWindowDefault(t *testing.T) {
	ctx := context.Background()
	clock := newFakeWindowClock()
	h := newHistory(store.New(memstore.NewDriver()), HistoryOptions{}, clock.timer)
	h.ObserveRequest(ctx, historyRecord("k", "", time.Now().UTC(), 0))
	waitFor(t, clock.started, "group window")
	if got := clock.windows(); got[0] != DefaultHistoryGroupWindow {
		t.Fatalf("window %v, want DefaultHistoryGroupWindow", got[0])
	}
	if err := h.Close(ctx); err != nil {
		t.Fatal(err)
	}

	d := newTxCountingDriver()
	clock = newFakeWindowClock()
	h = newHistory(store.New(d), HistoryOptions{GroupWindow: -1}, clock.timer)
	defer h.Close(ctx)
	h.ObserveRequest(ctx, historyRecord("k", "", time.Now().UTC(), 0))
	if n := waitFor(t, d.commits, "commit without a window"); n != 1 {
		t.Fatalf("wrote %d, want 1", n)
	}
	if got := clock.windows(); len(got) != 0 {
		t.Fatalf("windows %v started with a negative GroupWindow", got)
	}
}

// TestHistoryGroupWindowEndsAtCloseAndFlush: a window that never ends by itself (the fake
// clock never fires) holds neither Close nor a reader: Flush (Each, Count) has what is
// queued committed at once, and Close writes every request still in the window.
func TestHistoryGroupWindowEndsAtCloseAndFlush(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	d := newTxCountingDriver()
	clock := newFakeWindowClock()
	st := store.New(d)
	h := newHistory(st, HistoryOptions{GroupWindow: time.Hour}, clock.timer)
	now := time.Now().UTC()
	h.ObserveRequest(ctx, historyRecord("k", "", now, 0))
	waitFor(t, clock.started, "group window")
	h.ObserveRequest(ctx, historyRecord("k", "", now.Add(time.Millisecond), 1))
	if err := h.Flush(ctx); err != nil {
		t.Fatalf("Flush: %v (it waited for the group window)", err)
	}
	listsAndCounts(t, h, "", RequestQuery{Owner: "k"}, 2)

	for i := 2; i < 12; i++ {
		h.ObserveRequest(ctx, historyRecord("k", "", now.Add(time.Duration(i)*time.Millisecond), i))
	}
	waitFor(t, clock.started, "second group window")
	if err := h.Close(ctx); err != nil {
		t.Fatalf("Close: %v (requests in the window not written)", err)
	}
	if h.Failed() != 0 || h.Dropped() != 0 {
		t.Fatalf("failed %d, dropped %d", h.Failed(), h.Dropped())
	}
	total := 0
	for _, n := range d.written() {
		total += n
	}
	if total != 12 {
		t.Fatalf("%d requests written by Close, want 12 (transactions %v)", total, d.written())
	}
	h2 := NewHistory(st, HistoryOptions{})
	defer h2.Close(ctx)
	listsAndCounts(t, h2, "", RequestQuery{Owner: "k"}, 12)
}

// TestHistoryGroupWindowEndsAtFullBatch: a window whose queue fills a batch (historyBatch
// requests) commits it without waiting for the window's end (the fake clock never fires).
func TestHistoryGroupWindowEndsAtFullBatch(t *testing.T) {
	ctx := context.Background()
	d := newTxCountingDriver()
	clock := newFakeWindowClock()
	h := newHistory(store.New(d), HistoryOptions{GroupWindow: time.Hour}, clock.timer)
	defer h.Close(ctx)
	now := time.Now().UTC()
	h.ObserveRequest(ctx, historyRecord("k", "", now, 0))
	waitFor(t, clock.started, "group window")
	for i := 1; i < historyBatch; i++ {
		h.ObserveRequest(ctx, historyRecord("k", "", now.Add(time.Duration(i)*time.Millisecond), i))
	}
	if n := waitFor(t, d.commits, "commit of a full batch"); n != historyBatch {
		t.Fatalf("wrote %d requests, want a full batch of %d", n, historyBatch)
	}
}
