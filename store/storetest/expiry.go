package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/store"
)

// testMigrations checks store.MigrationDue and store.MigrationRan on the driver: a data
// migration is due until it ran, then again once store.MigrationRescanAfter after its
// first run (for records replicas of the earlier build wrote meanwhile), then never; a
// marker that is no time counts as long ago.
func testMigrations(t *testing.T, h Harness) {
	st := h.Open(t)
	t.Cleanup(func() { st.Close() }) // the reopened store, when the test reopens it
	ctx := context.Background()
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	due := func(name string, at time.Time) bool {
		t.Helper()
		d, err := store.MigrationDue(ctx, st, name, at)
		if err != nil {
			t.Fatalf("MigrationDue %s: %v", name, err)
		}
		return d
	}
	if !due("m", t0) {
		t.Fatal("a migration that never ran is not due")
	}
	if err := store.MigrationRan(ctx, st, "m", t0); err != nil {
		t.Fatal(err)
	}
	if due("m", t0.Add(time.Hour)) || due("m", t0.Add(store.MigrationRescanAfter-time.Second)) {
		t.Fatal("due again within a day of its first run")
	}
	if !due("m", t0.Add(store.MigrationRescanAfter)) {
		t.Fatal("not due a day after its first run")
	}
	if !due("other", t0.Add(time.Hour)) {
		t.Fatal("another migration's marker made this one not due")
	}
	if err := store.MigrationRan(ctx, st, "m", t0.Add(store.MigrationRescanAfter)); err != nil {
		t.Fatal(err)
	}
	if due("m", t0.Add(30*24*time.Hour)) {
		t.Fatal("due a third time")
	}
	markers, err := st.List(ctx, store.Migrations, store.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(markers) != 2 || markers[0].Key != "m" || string(markers[0].Value) != t0.Format(time.RFC3339) {
		t.Fatalf("markers %v, want m at %s and its second run's", markers, t0.Format(time.RFC3339))
	}
	mustPut(t, st, store.Migrations, "bad", "not a time")
	if d, err := store.MigrationDue(ctx, st, "bad", t0); err != nil || !d {
		t.Fatalf("a marker that is no time: due %v, %v; want due (long ago)", d, err)
	}
	// The markers outlive the process that wrote them.
	if h.Reopen != nil {
		if err := store.MigrationRan(ctx, st, "n", t0); err != nil {
			t.Fatal(err)
		}
		st = h.Reopen(t, st)
		if d, err := store.MigrationDue(ctx, st, "n", t0.Add(time.Hour)); err != nil || d {
			t.Fatalf("after reopening, a migration that ran an hour ago: due %v, %v", d, err)
		}
		if d, err := store.MigrationDue(ctx, st, "m", t0.Add(90*24*time.Hour)); err != nil || d {
			t.Fatalf("after reopening, a migration that ran twice: due %v, %v", d, err)
		}
	}
}

// expiryKey is a key of the expiry indexes (store.ResponseCacheExpiry,
// store.SessionExpiry, store.RealtimeSecretExpiry): the time in Unix nanoseconds, 19 digits, then the record's key.
func expiryKey(at time.Time, key string) string {
	return fmt.Sprintf("%019d/%s", max(at.UnixNano(), 0), key)
}

// testExpiryIndexes checks what the expiry indexes (store.ResponseCacheExpiry,
// store.SessionExpiry, store.RealtimeSecretExpiry) ask of a driver: a key with an empty value is kept and listed;
// keys list in time order whatever the record keys after the time; a sweep pages through
// them with After and Limit and stops at a time; an index key written or deleted with its
// record in one Update is kept or lost with it, and a failed Update leaves both.
func testExpiryIndexes(t *testing.T, h Harness) {
	for _, pair := range []struct{ records, index store.Collection }{
		{store.ResponseCache, store.ResponseCacheExpiry},
		{store.Sessions, store.SessionExpiry},
		{store.RealtimeSecrets, store.RealtimeSecretExpiry},
	} {
		t.Run(string(pair.index), func(t *testing.T) { testExpiryIndex(t, h, pair.records, pair.index) })
	}
}

func testExpiryIndex(t *testing.T, h Harness, records, index store.Collection) {
	st := open(t, h)
	ctx := context.Background()
	t0 := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	// Record keys as the capabilities write them (a cache key is a scope and a hash, a
	// session id a prefix and random letters), some sorting before the digits and '/'.
	recordKeys := []string{"scope/abc", "sess_Zz9", "-dash", "0zero", "~tilde", "a/b/c", "sess_aa", "ÿhigh"}
	var want []string
	for i, k := range recordKeys {
		// Times out of write order, one before 1970 (kept as 0), two sharing a nanosecond.
		at := t0.Add(time.Duration((i*5)%len(recordKeys)) * time.Second)
		switch i {
		case 3:
			at = time.Unix(-5, 0)
		case 4:
			at = t0.Add(2 * time.Second)
		}
		key := expiryKey(at, k)
		err := st.Update(ctx, func(tx store.Tx) error {
			if err := tx.Put(ctx, records, k, []byte("record "+k)); err != nil {
				return err
			}
			return tx.Put(ctx, index, key, nil)
		})
		if err != nil {
			t.Fatalf("Update putting %s and %s: %v", k, key, err)
		}
		want = append(want, key)
	}
	slices.Sort(want)
	all, err := st.List(ctx, index, store.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := entryKeys(all); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("index = %v\nwant    %v", got, want)
	}
	for _, e := range all {
		if len(e.Value) != 0 {
			t.Fatalf("index key %s: value %q, want empty", e.Key, e.Value)
		}
	}
	if v, err := st.Get(ctx, index, want[0]); err != nil || len(v) != 0 {
		t.Fatalf("Get of an index key: %q, %v", v, err)
	}
	// A sweep's walk: pages of 3 up to a cutoff, oldest first.
	cutoff := expiryKey(t0.Add(4*time.Second), "")
	var walked []string
	for after := ""; ; {
		page, err := st.List(ctx, index, store.ListOptions{After: after, Limit: 3})
		if err != nil {
			t.Fatal(err)
		}
		stop := false
		for _, e := range page {
			if e.Key >= cutoff {
				stop = true
				break
			}
			walked = append(walked, e.Key)
		}
		if stop || len(page) < 3 {
			break
		}
		after = page[len(page)-1].Key
	}
	var wantWalked []string
	for _, k := range want {
		if k < cutoff {
			wantWalked = append(wantWalked, k)
		}
	}
	if fmt.Sprint(walked) != fmt.Sprint(wantWalked) {
		t.Fatalf("walk up to %s = %v, want %v", cutoff, walked, wantWalked)
	}
	// Delete the walked records with their keys in one Update; a failing Update after
	// the same deletions keeps everything.
	deleteWalked := func(tx store.Tx) error {
		for _, k := range walked {
			if err := tx.Delete(ctx, index, k); err != nil {
				return err
			}
			if err := tx.Delete(ctx, records, k[20:]); err != nil {
				return err
			}
		}
		return nil
	}
	errStop := errors.New("stop")
	if err := st.Update(ctx, func(tx store.Tx) error {
		if err := deleteWalked(tx); err != nil {
			return err
		}
		return errStop
	}); !errors.Is(err, errStop) {
		t.Fatalf("failing Update: %v", err)
	}
	if got, _ := st.List(ctx, index, store.ListOptions{}); len(got) != len(want) {
		t.Fatalf("a failed Update deleted index keys: %d left of %d", len(got), len(want))
	}
	if got, _ := st.List(ctx, records, store.ListOptions{}); len(got) != len(recordKeys) {
		t.Fatalf("a failed Update deleted records: %d left of %d", len(got), len(recordKeys))
	}
	if err := st.Update(ctx, deleteWalked); err != nil {
		t.Fatal(err)
	}
	left, err := st.List(ctx, index, store.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := entryKeys(left); fmt.Sprint(got) != fmt.Sprint(want[len(walked):]) {
		t.Fatalf("index after the sweep = %v, want %v", got, want[len(walked):])
	}
	for _, k := range left {
		if _, err := st.Get(ctx, records, k.Key[20:]); err != nil {
			t.Fatalf("record %s of a kept index key: %v", k.Key[20:], err)
		}
	}
	for _, k := range walked {
		if _, err := st.Get(ctx, records, k[20:]); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("record %s swept: %v, want ErrNotFound", k[20:], err)
		}
	}
}
