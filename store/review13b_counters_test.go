package store_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
	"github.com/switchyard-ai/switchyard/store/pgstore"
)

type r13bGot struct {
	mu sync.Mutex
	m  map[string]int64
}

func (g *r13bGot) get(k string) int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.m[k]
}

func r13bSubscribe(c *store.Counters) *r13bGot {
	g := &r13bGot{m: map[string]int64{}}
	c.Subscribe("rpm/", func(key string, delta int64, _ time.Time) {
		g.mu.Lock()
		g.m[key] += delta
		g.mu.Unlock()
	})
	return g
}

// TestReview13bNewReplicaBurstNeverShared: b is running and has synced. A new replica a
// starts (autoscaling, a rolling deploy, a restart: a fresh process id), admits a burst
// before its first Sync and publishes it. a's counts are since a started, so every one of
// them is new to b — but b takes a's first record as "where it stands" and never applies
// them: the burst a admitted before b first read its record is lost for good.
func TestReview13bNewReplicaBurstNeverShared(t *testing.T) {
	st := memstore.New()
	ctx := context.Background()
	now := time.Now()
	b := store.NewCounters(st, "limits")
	gb := r13bSubscribe(b)
	if err := b.Sync(ctx, now); err != nil { // b is up and has synced (alone)
		t.Fatal(err)
	}
	a := store.NewCounters(st, "limits") // the new replica
	r13bSubscribe(a)
	a.Add("rpm/key/k", 5, now) // its first second's requests
	for _, c := range []*store.Counters{a, b, a, b} {
		if err := c.Sync(ctx, now.Add(time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	if got := gb.get("rpm/key/k"); got != 5 {
		t.Errorf("b applied %d of the 5 requests the new replica a admitted before b first saw its record; want 5", got)
	}
}

// failingList wraps a driver whose List can be made to fail (Put still works).
type failingList struct {
	store.Driver
	fail atomic.Bool
}

func (f *failingList) List(ctx context.Context, c store.Collection, o store.ListOptions) ([]store.Entry, error) {
	if f.fail.Load() {
		return nil, errors.New("list: connection reset")
	}
	return f.Driver.List(ctx, c, o)
}

// TestReview13bReaddedKeyUndercountAfterFailedSync: a key idle for two minutes leaves a's
// record and restarts from 0 when a adds to it again. If b misses the one record without
// the key (b's Sync failed midway: Put ok, List failed), b compares a's new count with the
// old one and applies the difference: 7 new requests are applied as 2.
func TestReview13bReaddedKeyUndercountAfterFailedSync(t *testing.T) {
	fl := &failingList{Driver: memstore.NewDriver()}
	st := store.New(fl)
	ctx := context.Background()
	now := time.Now()
	a, b := store.NewCounters(st, "limits"), store.NewCounters(st, "limits")
	gb := r13bSubscribe(b)
	for _, c := range []*store.Counters{a, b} {
		if err := c.Sync(ctx, now); err != nil {
			t.Fatal(err)
		}
	}
	a.Add("rpm/key/k", 5, now)
	for _, c := range []*store.Counters{a, b} {
		if err := c.Sync(ctx, now.Add(time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	if got := gb.get("rpm/key/k"); got != 5 {
		t.Fatalf("setup: b applied %d, want 5", got)
	}
	later := now.Add(3 * time.Minute)
	if err := a.Sync(ctx, later); err != nil { // k idle: dropped from a's record
		t.Fatal(err)
	}
	fl.fail.Store(true)
	if err := b.Sync(ctx, later); err == nil { // b's Put is fine, its List fails
		t.Fatal("b's Sync should have failed")
	}
	fl.fail.Store(false)
	a.Add("rpm/key/k", 7, later.Add(time.Second)) // 7 new requests: a's count of k is 7 again
	for _, c := range []*store.Counters{a, b} {
		if err := c.Sync(ctx, later.Add(2*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	if got := gb.get("rpm/key/k") - 5; got != 7 {
		t.Errorf("b applied %d of a's 7 new requests after one failed Sync; want 7", got)
	}
}

// TestReview13bClockSkewDisablesSharing: staleness is judged by the reader's clock against
// the writer's At. With a's clock six minutes behind b's (or b's ahead), b deletes a's live
// record on every Sync and forgets it, so it never applies anything a admits — silently
// (Sync returns nil). One replica with a clock ahead does this to every other one.
func TestReview13bClockSkewDisablesSharing(t *testing.T) {
	st := memstore.New()
	ctx := context.Background()
	now := time.Now()
	skew := 6 * time.Minute
	a, b := store.NewCounters(st, "limits"), store.NewCounters(st, "limits")
	gb := r13bSubscribe(b)
	for i := range 5 {
		at := now.Add(time.Duration(i) * time.Second)
		a.Add("rpm/key/k", 1, at.Add(-skew))
		if err := a.Sync(ctx, at.Add(-skew)); err != nil {
			t.Fatal(err)
		}
		if err := b.Sync(ctx, at); err != nil {
			t.Fatal(err)
		}
	}
	if got := gb.get("rpm/key/k"); got < 3 {
		t.Errorf("b applied %d of the 5 requests a live replica (clock %s behind) admitted; want at least 3", got, skew)
	}
}

// TestReview13bRecordSizeManyKeys: every Sync rewrites the whole record of each key active in
// the last two minutes, changed or not, and reads every other replica's whole record. With
// 100k active keys that is megabytes written and read per replica per second (README: "one
// write and one read of the database per replica and interval, whatever the number of
// keys"). On PostgreSQL (SWITCHYARD_TEST_POSTGRES) it also times one Sync of two replicas.
func TestReview13bRecordSizeManyKeys(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	if dsn := os.Getenv("SWITCHYARD_TEST_POSTGRES"); dsn != "" {
		var err error
		st, err = pgstore.Open(ctx, dsn, pgstore.Options{Schema: fmt.Sprintf("r13b_counters_%d", os.Getpid())})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
	}
	now := time.Now()
	a, b := store.NewCounters(st, "limits"), store.NewCounters(st, "limits")
	for i := range 100_000 {
		k := fmt.Sprintf("rpm/key/key_%016x", i)
		a.Add(k, 1, now)
		b.Add(k, 1, now)
	}
	for _, c := range []*store.Counters{a, b} {
		if err := c.Sync(ctx, now); err != nil {
			t.Fatal(err)
		}
	}
	// (Mended after review: a key changed stays in the record for two Syncs, so that a
	// reader missing one record loses nothing; the record shrinks on the Sync after.)
	for _, c := range []*store.Counters{a, b, b} {
		if err := c.Sync(ctx, now.Add(time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	a.Add("rpm/key/key_0000000000000000", 1, now) // one request since the last Sync
	start := time.Now()
	if err := a.Sync(ctx, now.Add(2*time.Second)); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	entries, err := st.List(ctx, store.SharedCounters, store.ListOptions{Prefix: "limits/"})
	if err != nil {
		t.Fatal(err)
	}
	size := 0
	for _, e := range entries {
		size += len(e.Value)
	}
	t.Logf("2 replicas, 100k keys: %d records, %d bytes; one Sync (write own, read all) took %s", len(entries), size, took)
	if per := size / len(entries); per > 256<<10 {
		t.Errorf("one replica's record with 100k active keys is %d bytes, rewritten and re-read every --limits-sync-interval (1s) though one key changed", per)
	}
}

// slowDelete wraps a driver whose Delete hangs until released (a slow or unreachable
// database).
type slowDelete struct {
	store.Driver
	entered chan struct{}
	release chan struct{}
}

func (s *slowDelete) Delete(ctx context.Context, c store.Collection, key string) error {
	close(s.entered)
	select {
	case <-s.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	return s.Driver.Delete(ctx, c, key)
}

// TestReview13bAddBlockedBySyncDatabaseCall: Sync deletes a gone process's record (and
// decodes every other record) while holding the mutex that Add — on every admitted request
// (server withinRate, the spend gate's tokens) — takes. While that Delete waits on the
// database (Run's context has no deadline), every request of every key waits with it.
func TestReview13bAddBlockedBySyncDatabaseCall(t *testing.T) {
	sd := &slowDelete{Driver: memstore.NewDriver(), entered: make(chan struct{}), release: make(chan struct{})}
	st := store.New(sd)
	ctx := context.Background()
	now := time.Now()
	// A crashed replica's record, ten minutes old.
	if err := st.Put(ctx, store.SharedCounters, "limits/deadbeef", []byte(fmt.Sprintf(`{"at":%q,"counts":{}}`, now.Add(-10*time.Minute).Format(time.RFC3339Nano)))); err != nil {
		t.Fatal(err)
	}
	c := store.NewCounters(st, "limits")
	// (Mended after review: a record is gone once it stays unchanged five minutes by the
	// reader's clock, so the reader sees it, then finds it unchanged six minutes on.)
	if err := c.Sync(ctx, now); err != nil {
		t.Fatal(err)
	}
	go c.Sync(ctx, now.Add(6*time.Minute))
	select {
	case <-sd.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the stale record was never deleted")
	}
	defer close(sd.release)
	added := make(chan struct{})
	go func() { c.Add("rpm/key/k", 1, now); close(added) }()
	select {
	case <-added:
	case <-time.After(2 * time.Second):
		t.Error("Add (a request's admission) blocked for 2s behind Sync's Delete of a stale record on the database")
	}
}

// TestReview13bAddLatencyDuringSyncManyKeys: while Sync reads the other replicas' records
// (a List that waits on the database), a request's Add does not wait with it.
// (Mended after review: the review measured Add's worst wait against a threshold while Sync
// decoded 4 × 100k keys under the lock; timings are not pass/fail here, so the test now
// holds Sync inside List — the lock is not held across the store's calls, nor the decoding
// after them — and checks that Add completes.)
func TestReview13bAddLatencyDuringSyncManyKeys(t *testing.T) {
	sl := &slowList{Driver: memstore.NewDriver(), entered: make(chan struct{}), release: make(chan struct{})}
	st := store.New(sl)
	ctx := context.Background()
	now := time.Now()
	c := store.NewCounters(st, "limits")
	go c.Sync(ctx, now)
	select {
	case <-sl.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("Sync never listed the records")
	}
	defer close(sl.release)
	added := make(chan struct{})
	go func() { c.Add("rpm/key/x", 1, now); close(added) }()
	select {
	case <-added:
	case <-time.After(10 * time.Second):
		t.Error("Add (a request's admission) waited behind Sync's read of the other records")
	}
}

// slowList wraps a driver whose List of the shared counters waits until released.
type slowList struct {
	store.Driver
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

func (s *slowList) List(ctx context.Context, c store.Collection, opts store.ListOptions) ([]store.Entry, error) {
	if c == store.SharedCounters {
		s.once.Do(func() { close(s.entered) })
		select {
		case <-s.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return s.Driver.List(ctx, c, opts)
}
