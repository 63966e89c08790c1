package completions

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/storetest"
	"github.com/switchyard-ai/switchyard/store/storetest/drivertest"
)

// cacheIndex returns the keys of store.ResponseCacheExpiry.
func cacheIndex(t *testing.T, st *store.Store) map[string]bool {
	t.Helper()
	es, err := st.List(context.Background(), store.ResponseCacheExpiry, store.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, e := range es {
		out[e.Key] = true
	}
	return out
}

// A sweep of N unexpired and K expired entries reads the K expired entries and at most a
// page of the index past them, not the N+K entries; it deletes the K with their index
// keys, and the next sweep reads at most one index page and no entry.
func TestStoreCacheSweepReadsOnlyTheExpired(t *testing.T) {
	drivertest.ForEach(t, func(t *testing.T, drv store.Driver) {
		ctx := context.Background()
		d := storetest.NewReadCounter(drv)
		st := store.New(d)
		c := NewStoreCache(st)
		t0 := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
		if n, err := c.Sweep(ctx, t0); err != nil || n != 0 { // an empty store: the migration has nothing to do
			t.Fatalf("first sweep: %d, %v", n, err)
		}
		const kept, expired = 2000, 300
		for i := range kept + expired {
			exp := t0.Add(time.Hour + time.Duration(i)*time.Second)
			if i%7 == 0 && i/7 < expired {
				exp = t0.Add(time.Duration(i) * time.Second / 100)
			}
			if err := c.Put(ctx, fmt.Sprintf("scope/k%05d", i), []byte("v"), t0, exp); err != nil {
				t.Fatal(err)
			}
		}
		if got := len(cacheIndex(t, st)); got != kept+expired {
			t.Fatalf("%d index keys for %d entries", got, kept+expired)
		}
		d.Reset()
		n, err := c.Sweep(ctx, t0.Add(30*time.Minute))
		if err != nil || n != expired {
			t.Fatalf("Sweep = %d, %v; want %d", n, err, expired)
		}
		listedEntries, gotEntries := d.Counts(store.ResponseCache)
		listedIndex, _ := d.Counts(store.ResponseCacheExpiry)
		if listedEntries != 0 || gotEntries > expired || listedIndex > expired+sweepPage {
			t.Errorf("the sweep listed %d entries, read %d and listed %d index keys; want 0, at most %d and at most %d (%d entries kept)",
				listedEntries, gotEntries, listedIndex, expired, expired+sweepPage, kept)
		}
		left, err := st.List(ctx, store.ResponseCache, store.ListOptions{})
		if err != nil || len(left) != kept {
			t.Fatalf("%d entries left (%v), want %d", len(left), err, kept)
		}
		index := cacheIndex(t, st)
		if len(index) != kept {
			t.Errorf("%d index keys left, want %d", len(index), kept)
		}
		for _, e := range left {
			_, exp, _ := storeCacheTimes(e.Value)
			if !index[cacheExpiryKey(exp, e.Key)] {
				t.Errorf("entry %s kept without its index key", e.Key)
			}
		}
		d.Reset()
		if n, err := c.Sweep(ctx, t0.Add(30*time.Minute)); err != nil || n != 0 {
			t.Fatalf("second sweep: %d, %v", n, err)
		}
		listedEntries, gotEntries = d.Counts(store.ResponseCache)
		listedIndex, _ = d.Counts(store.ResponseCacheExpiry)
		if listedEntries+gotEntries != 0 || listedIndex > sweepPage {
			t.Errorf("a sweep with nothing expired read %d entries and %d index keys, want 0 and at most %d", listedEntries+gotEntries, listedIndex, sweepPage)
		}
	})
}

// An entry written again with a later expiry loses its earlier index key at once, and an
// entry refreshed between the sweep's listing of the index and its transaction survives
// with its new key; Get's and DeletePrefix's deletions take the index key too.
func TestStoreCacheRefreshedEntrySurvivesTheSweep(t *testing.T) {
	drivertest.ForEach(t, func(t *testing.T, drv store.Driver) {
		ctx := context.Background()
		d := storetest.NewReadCounter(drv)
		st := store.New(d)
		c := NewStoreCache(st)
		t0 := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
		if _, err := c.Sweep(ctx, t0); err != nil { // the migration, with nothing to do
			t.Fatal(err)
		}
		if err := c.Put(ctx, "a", []byte("old"), t0, t0.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		if err := c.Put(ctx, "a", []byte("new"), t0, t0.Add(2*time.Hour)); err != nil {
			t.Fatal(err)
		}
		if got := cacheIndex(t, st); len(got) != 1 || !got[cacheExpiryKey(t0.Add(2*time.Hour), "a")] {
			t.Fatalf("index after an overwrite: %v, want only the new expiry's key", got)
		}
		// b expires at 1m; a replica answers again under its key (expiring at 3h) between the
		// sweep's listing of the index and its transaction.
		if err := c.Put(ctx, "b", []byte("old"), t0, t0.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		d.AfterList(store.ResponseCacheExpiry, func() {
			if err := c.Put(ctx, "b", []byte("fresh"), t0.Add(29*time.Minute), t0.Add(3*time.Hour)); err != nil {
				t.Error(err)
			}
		})
		n, err := c.Sweep(ctx, t0.Add(30*time.Minute))
		if err != nil || n != 0 {
			t.Fatalf("Sweep = %d, %v; want 0 (b was refreshed)", n, err)
		}
		if v, _, err := c.Get(ctx, "b", t0.Add(30*time.Minute)); err != nil || string(v) != "fresh" {
			t.Fatalf("the refreshed entry: %q, %v", v, err)
		}
		want := map[string]bool{cacheExpiryKey(t0.Add(2*time.Hour), "a"): true, cacheExpiryKey(t0.Add(3*time.Hour), "b"): true}
		if got := cacheIndex(t, st); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("index after the sweep: %v, want %v", got, want)
		}
		// A read past a's expiry deletes it with its key; DeletePrefix deletes b with its key.
		if _, _, err := c.Get(ctx, "a", t0.Add(2*time.Hour)); !errors.Is(err, ErrCacheMiss) {
			t.Fatalf("expired a: %v", err)
		}
		if n, err := c.DeletePrefix(ctx, "b"); err != nil || n != 1 {
			t.Fatalf("DeletePrefix = %d, %v", n, err)
		}
		if got := cacheIndex(t, st); len(got) != 0 {
			t.Fatalf("index keys left with no entry: %v", got)
		}
	})
}

// Entries kept by a build without the expiry index have no index key: the first sweep
// reads them all once, deletes the expired, indexes the others and records that it ran;
// later sweeps do not read them, and delete them once they expire.
func TestStoreCacheSweepIndexesEntriesOfEarlierBuilds(t *testing.T) {
	drivertest.ForEach(t, func(t *testing.T, drv store.Driver) {
		ctx := context.Background()
		d := storetest.NewReadCounter(drv)
		st := store.New(d)
		c := NewStoreCache(st)
		t0 := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
		// As the earlier build wrote them: the entry alone.
		old := func(key string, expires time.Time) {
			b := make([]byte, storeCacheHeader+1)
			binary.BigEndian.PutUint64(b, uint64(t0.UnixNano()))
			binary.BigEndian.PutUint64(b[8:], uint64(expires.UnixNano()))
			if err := st.Put(ctx, store.ResponseCache, key, b); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 150 {
			old(fmt.Sprintf("old%03d", i), t0.Add(time.Duration(1+i%3)*time.Hour)) // a third expire at 1h
		}
		if err := st.Put(ctx, store.ResponseCache, "garbled", []byte("short")); err != nil {
			t.Fatal(err)
		}
		if err := c.Put(ctx, "new", []byte("v"), t0, t0.Add(5*time.Hour)); err != nil {
			t.Fatal(err)
		}
		n, err := c.Sweep(ctx, t0.Add(90*time.Minute))
		if err != nil || n != 51 {
			t.Fatalf("first sweep = %d, %v; want the 50 expired entries and the garbled one", n, err)
		}
		if _, err := st.Get(ctx, store.Migrations, cacheIndexMigration); err != nil {
			t.Fatalf("the migration left no marker: %v", err)
		}
		if got := len(cacheIndex(t, st)); got != 101 {
			t.Fatalf("%d index keys after the migration, want 101 (100 earlier entries kept and the new one)", got)
		}
		d.Reset()
		if n, err := c.Sweep(ctx, t0.Add(90*time.Minute)); err != nil || n != 0 {
			t.Fatalf("second sweep = %d, %v", n, err)
		}
		if listed, _ := d.Counts(store.ResponseCache); listed != 0 {
			t.Errorf("the sweep after the migration listed %d entries, want 0", listed)
		}
		if n, err := c.Sweep(ctx, t0.Add(150*time.Minute)); err != nil || n != 50 {
			t.Fatalf("sweep at 2h30 = %d, %v; want the 50 earlier entries expiring at 2h", n, err)
		}
		left, _ := st.List(ctx, store.ResponseCache, store.ListOptions{})
		var keys []string
		for _, e := range left {
			keys = append(keys, e.Key)
		}
		if len(left) != 51 || !strings.Contains(strings.Join(keys, " "), "new") {
			t.Fatalf("left: %v, want the 50 expiring at 3h and new", keys)
		}
		// A replica of the earlier build still running (a rolling upgrade) writes an entry with
		// no index key after the migration: the one rescan, a day after the first sweep, finds it.
		old("late", t0.Add(4*time.Hour))
		if n, err := c.Sweep(ctx, t0.Add(90*time.Minute+store.MigrationRescanAfter)); err != nil || n != 52 {
			t.Fatalf("the sweep a day after the migration = %d, %v; want the 50 at 3h, new and the late unindexed one", n, err)
		}
		if left, _ := st.List(ctx, store.ResponseCache, store.ListOptions{}); len(left) != 0 {
			t.Fatalf("%d entries left, want none", len(left))
		}
	})
}
