// Package storetest is the conformance suite every store driver must pass.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/switchyard-ai/switchyard/store"
)

// Harness opens stores for the suite.
type Harness struct {
	// Open returns a fresh, empty store. The suite closes it.
	Open func(t *testing.T) *store.Store
	// Reopen, when set, closes s and opens the same database again; the suite then checks
	// that everything written before is still there.
	Reopen func(t *testing.T, s *store.Store) *store.Store
}

// Run runs the conformance suite.
func Run(t *testing.T, h Harness) {
	t.Run("PutGetDelete", func(t *testing.T) { testPutGetDelete(t, h) })
	t.Run("NotFoundIsTyped", func(t *testing.T) { testNotFound(t, h) })
	t.Run("InvalidKey", func(t *testing.T) { testInvalid(t, h) })
	t.Run("ListOrderPrefixPaging", func(t *testing.T) { testList(t, h) })
	t.Run("CollectionsAreSeparate", func(t *testing.T) { testCollections(t, h) })
	t.Run("ValuesAreCopied", func(t *testing.T) { testCopies(t, h) })
	t.Run("UpdateAllOrNothing", func(t *testing.T) { testUpdate(t, h) })
	t.Run("ConcurrentWriters", func(t *testing.T) { testConcurrent(t, h) })
	t.Run("ConcurrentCompareAndSwap", func(t *testing.T) { testCompareAndSwap(t, h) })
	t.Run("UpdateLocked", func(t *testing.T) { testUpdateLocked(t, h) })
	t.Run("NestedUpdateIsRefused", func(t *testing.T) { testNested(t, h) })
	t.Run("JSONHelpers", func(t *testing.T) { testJSON(t, h) })
	t.Run("GetMany", func(t *testing.T) { testGetMany(t, h) })
	t.Run("Closed", func(t *testing.T) { testClosed(t, h) })
	t.Run("OwnerIndexPaging", func(t *testing.T) { testOwnedPaging(t, h) })
	t.Run("OwnerIndexBackfill", func(t *testing.T) { testOwnedBackfill(t, h) })
	t.Run("MigrationMarkers", func(t *testing.T) { testMigrations(t, h) })
	t.Run("ExpiryIndexes", func(t *testing.T) { testExpiryIndexes(t, h) })
	if h.Reopen != nil {
		t.Run("ReopenKeepsEverything", func(t *testing.T) { testReopen(t, h) })
	}
}

func open(t *testing.T, h Harness) *store.Store {
	t.Helper()
	s := h.Open(t)
	t.Cleanup(func() { s.Close() })
	return s
}

func mustPut(t *testing.T, s *store.Store, c store.Collection, k, v string) {
	t.Helper()
	if err := s.Put(context.Background(), c, k, []byte(v)); err != nil {
		t.Fatalf("Put %s/%s: %v", c, k, err)
	}
}

func mustGet(t *testing.T, s *store.Store, c store.Collection, k string) string {
	t.Helper()
	v, err := s.Get(context.Background(), c, k)
	if err != nil {
		t.Fatalf("Get %s/%s: %v", c, k, err)
	}
	return string(v)
}

func testPutGetDelete(t *testing.T, h Harness) {
	s := open(t, h)
	ctx := context.Background()
	mustPut(t, s, store.TrainingJobs, "job1", "one")
	if got := mustGet(t, s, store.TrainingJobs, "job1"); got != "one" {
		t.Fatalf("Get = %q, want one", got)
	}
	mustPut(t, s, store.TrainingJobs, "job1", "uno")
	if got := mustGet(t, s, store.TrainingJobs, "job1"); got != "uno" {
		t.Fatalf("Get after overwrite = %q, want uno", got)
	}
	if err := s.Delete(ctx, store.TrainingJobs, "job1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, store.TrainingJobs, "job1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Get after delete: err = %v, want ErrNotFound", err)
	}
	if err := s.Delete(ctx, store.TrainingJobs, "job1"); err != nil {
		t.Fatalf("Delete of missing key: %v", err)
	}
	if err := s.Delete(ctx, store.Sessions, "never-existed"); err != nil {
		t.Fatalf("Delete in empty collection: %v", err)
	}
	// Empty values are values, not absences.
	mustPut(t, s, store.Artifacts, "empty", "")
	if got := mustGet(t, s, store.Artifacts, "empty"); got != "" {
		t.Fatalf("empty value = %q", got)
	}
}

func testNotFound(t *testing.T, h Harness) {
	s := open(t, h)
	_, err := s.Get(context.Background(), store.RouterModels, "missing")
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("err = %v, want ErrNotFound", err)
	}
	mustPut(t, s, store.RouterModels, "present", "x")
	_, err = s.Get(context.Background(), store.RouterModels, "missing")
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("err in existing collection = %v, want ErrNotFound", err)
	}
}

func testInvalid(t *testing.T, h Harness) {
	s := open(t, h)
	ctx := context.Background()
	if err := s.Put(ctx, store.Artifacts, "", []byte("x")); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("Put empty key: %v", err)
	}
	if _, err := s.Get(ctx, "", "k"); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("Get empty collection: %v", err)
	}
}

func testList(t *testing.T, h Harness) {
	s := open(t, h)
	ctx := context.Background()
	keys := []string{"b/2", "a/1", "b/10", "b/1", "c", "b/3", "ba"}
	for _, k := range keys {
		mustPut(t, s, store.Messages, k, "v"+k)
	}
	all, err := s.List(ctx, store.Messages, store.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a/1", "b/1", "b/10", "b/2", "b/3", "ba", "c"}
	if got := entryKeys(all); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("List = %v, want %v", got, want)
	}
	if all[0].Value == nil || string(all[0].Value) != "va/1" {
		t.Fatalf("List value = %q", all[0].Value)
	}
	pre, err := s.List(ctx, store.Messages, store.ListOptions{Prefix: "b/"})
	if err != nil {
		t.Fatal(err)
	}
	if got := entryKeys(pre); fmt.Sprint(got) != "[b/1 b/10 b/2 b/3]" {
		t.Fatalf("prefix b/ = %v", got)
	}
	// Page through the prefix two at a time.
	var paged []string
	after := ""
	for i := 0; i < 10; i++ {
		page, err := s.List(ctx, store.Messages, store.ListOptions{Prefix: "b/", After: after, Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		if len(page) > 2 {
			t.Fatalf("page of %d entries with Limit 2", len(page))
		}
		if len(page) == 0 {
			break
		}
		paged = append(paged, entryKeys(page)...)
		after = page[len(page)-1].Key
	}
	if fmt.Sprint(paged) != "[b/1 b/10 b/2 b/3]" {
		t.Fatalf("paged = %v", paged)
	}
	// After before the prefix range still honours the prefix.
	page, err := s.List(ctx, store.Messages, store.ListOptions{Prefix: "b/", After: "a"})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(entryKeys(page)) != "[b/1 b/10 b/2 b/3]" {
		t.Fatalf("After=a prefix=b/ = %v", entryKeys(page))
	}
	empty, err := s.List(ctx, store.Conversations, store.ListOptions{})
	if err != nil || len(empty) != 0 {
		t.Fatalf("List of empty collection = %v, %v", empty, err)
	}
	testListDescending(t, s)
}

// testListDescending: Descending lists the same selection in reverse, pages continue
// strictly before After, and After outside the prefix's range ("zzz" above it with "ba"
// between, "a" below it) still honours the prefix.
func testListDescending(t *testing.T, s *store.Store) {
	ctx := context.Background()
	list := func(opts store.ListOptions) string {
		t.Helper()
		opts.Descending = true
		es, err := s.List(ctx, store.Messages, opts)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(entryKeys(es))
	}
	if got := list(store.ListOptions{}); got != "[c ba b/3 b/2 b/10 b/1 a/1]" {
		t.Fatalf("descending = %v", got)
	}
	if got := list(store.ListOptions{Prefix: "b/"}); got != "[b/3 b/2 b/10 b/1]" {
		t.Fatalf("descending prefix b/ = %v", got)
	}
	var paged []string
	after := ""
	for i := 0; i < 10; i++ {
		es, err := s.List(ctx, store.Messages, store.ListOptions{Prefix: "b/", After: after, Limit: 3, Descending: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(es) == 0 {
			break
		}
		paged = append(paged, entryKeys(es)...)
		after = es[len(es)-1].Key
	}
	if fmt.Sprint(paged) != "[b/3 b/2 b/10 b/1]" {
		t.Fatalf("descending pages = %v", paged)
	}
	if got := list(store.ListOptions{Prefix: "b/", After: "b/2"}); got != "[b/10 b/1]" {
		t.Fatalf("descending after b/2 = %v", got)
	}
	if got := list(store.ListOptions{Prefix: "b/", After: "zzz"}); got != "[b/3 b/2 b/10 b/1]" {
		t.Fatalf("descending prefix b/ after zzz = %v", got)
	}
	if got := list(store.ListOptions{Prefix: "b/", After: "a"}); got != "[]" {
		t.Fatalf("descending prefix b/ after a = %v", got)
	}
	if got := list(store.ListOptions{After: "b/10", Limit: 2}); got != "[b/1 a/1]" {
		t.Fatalf("descending after b/10 limit 2 = %v", got)
	}
}

func entryKeys(es []store.Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Key
	}
	return out
}

func testCollections(t *testing.T, h Harness) {
	s := open(t, h)
	mustPut(t, s, store.Sessions, "k", "session")
	mustPut(t, s, store.APIKeys, "k", "key")
	if mustGet(t, s, store.Sessions, "k") != "session" || mustGet(t, s, store.APIKeys, "k") != "key" {
		t.Fatal("collections share keys")
	}
}

func testCopies(t *testing.T, h Harness) {
	s := open(t, h)
	buf := []byte("original")
	if err := s.Put(context.Background(), store.Artifacts, "f", buf); err != nil {
		t.Fatal(err)
	}
	copy(buf, "XXXXXXXX")
	got, _ := s.Get(context.Background(), store.Artifacts, "f")
	if string(got) != "original" {
		t.Fatalf("store kept caller's slice: %q", got)
	}
	got[0] = 'Y'
	if mustGet(t, s, store.Artifacts, "f") != "original" {
		t.Fatal("Get returned the store's own slice")
	}
}

func testUpdate(t *testing.T, h Harness) {
	s := open(t, h)
	ctx := context.Background()
	mustPut(t, s, store.Conversations, "c1", "v1")
	boom := errors.New("boom")
	err := s.Update(ctx, func(tx store.Tx) error {
		if err := tx.Put(ctx, store.Conversations, "c1", []byte("v2")); err != nil {
			return err
		}
		if err := tx.Put(ctx, store.Messages, "c1/0001", []byte("m")); err != nil {
			return err
		}
		// Reads inside the transaction see its own writes.
		if v, err := tx.Get(ctx, store.Conversations, "c1"); err != nil || string(v) != "v2" {
			return fmt.Errorf("read own write: %q %v", v, err)
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Update err = %v, want boom", err)
	}
	if got := mustGet(t, s, store.Conversations, "c1"); got != "v1" {
		t.Fatalf("failed Update changed c1 to %q", got)
	}
	if _, err := s.Get(ctx, store.Messages, "c1/0001"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("failed Update left a message: %v", err)
	}
	err = s.Update(ctx, func(tx store.Tx) error {
		if err := tx.Put(ctx, store.Conversations, "c1", []byte("v3")); err != nil {
			return err
		}
		if err := tx.Put(ctx, store.Messages, "c1/0001", []byte("m1")); err != nil {
			return err
		}
		if err := tx.Put(ctx, store.Messages, "c1/0002", []byte("m2")); err != nil {
			return err
		}
		if err := tx.Delete(ctx, store.Messages, "c1/0002"); err != nil {
			return err
		}
		es, err := tx.List(ctx, store.Messages, store.ListOptions{Prefix: "c1/"})
		if err != nil {
			return err
		}
		if len(es) != 1 || es[0].Key != "c1/0001" {
			return fmt.Errorf("List inside tx = %v", entryKeys(es))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if mustGet(t, s, store.Conversations, "c1") != "v3" || mustGet(t, s, store.Messages, "c1/0001") != "m1" {
		t.Fatal("committed Update not visible")
	}
	if _, err := s.Get(ctx, store.Messages, "c1/0002"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("deleted-in-tx key present: %v", err)
	}
}

func testConcurrent(t *testing.T, h Harness) {
	s := open(t, h)
	ctx := context.Background()
	const writers, each = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				k := fmt.Sprintf("w%02d/%03d", w, i)
				if err := s.Put(ctx, store.EmbeddingCache, k, []byte(k)); err != nil {
					errs <- err
					return
				}
			}
		}(w)
	}
	// A read-modify-write counter: Update must serialise these.
	mustPut(t, s, store.Sessions, "counter", "0")
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				err := s.Update(ctx, func(tx store.Tx) error {
					v, err := tx.Get(ctx, store.Sessions, "counter")
					if err != nil {
						return err
					}
					var n int
					fmt.Sscan(string(v), &n)
					return tx.Put(ctx, store.Sessions, "counter", []byte(fmt.Sprint(n+1)))
				})
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	all, err := s.List(ctx, store.EmbeddingCache, store.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != writers*each {
		t.Fatalf("%d records after concurrent writes, want %d", len(all), writers*each)
	}
	if got := mustGet(t, s, store.Sessions, "counter"); got != fmt.Sprint(writers*each) {
		t.Fatalf("counter = %s, want %d (lost updates)", got, writers*each)
	}
}

// testCompareAndSwap: writers that all read one record's version, then each replace it
// in an Update only if it still has that version (the check-and-write of a conditional
// request, such as a key rotation with If-Match): exactly one succeeds, the others see the
// winner's write inside their transaction and fail, and the record is the winner's.
func testCompareAndSwap(t *testing.T, h Harness) {
	s := open(t, h)
	ctx := context.Background()
	mustPut(t, s, store.VirtualKeys, "owner/vk", "v0")
	stale := errors.New("stale")
	const writers = 16
	var ready, wg sync.WaitGroup
	ready.Add(writers)
	errs := make([]error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			seen, err := s.Get(ctx, store.VirtualKeys, "owner/vk")
			ready.Done()
			if err != nil {
				errs[w] = err
				return
			}
			ready.Wait() // every writer has read v0 before any writes
			errs[w] = s.Update(ctx, func(tx store.Tx) error {
				cur, err := tx.Get(ctx, store.VirtualKeys, "owner/vk")
				if err != nil {
					return err
				}
				if string(cur) != string(seen) {
					return stale
				}
				return tx.Put(ctx, store.VirtualKeys, "owner/vk", []byte(fmt.Sprintf("v1-%02d", w)))
			})
		}()
	}
	wg.Wait()
	winner := -1
	for w, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Fatalf("writers %d and %d both replaced the record they read", winner, w)
		case err == nil:
			winner = w
		case !errors.Is(err, stale):
			t.Fatalf("writer %d: %v, want the stale error or success", w, err)
		}
	}
	if winner < 0 {
		t.Fatal("no writer replaced the record")
	}
	if got, want := mustGet(t, s, store.VirtualKeys, "owner/vk"), fmt.Sprintf("v1-%02d", winner); got != want {
		t.Fatalf("record = %q, want the winner's %q", got, want)
	}
}

func testJSON(t *testing.T, h Harness) {
	s := open(t, h)
	ctx := context.Background()
	type rec struct {
		ID    string  `json:"id"`
		Score float64 `json:"score"`
	}
	if err := store.PutJSON(ctx, s, store.RouterModels, "m1", rec{"m1", 0.5}); err != nil {
		t.Fatal(err)
	}
	got, err := store.GetJSON[rec](ctx, s, store.RouterModels, "m1")
	if err != nil || got != (rec{"m1", 0.5}) {
		t.Fatalf("GetJSON = %+v, %v", got, err)
	}
	if _, err := store.GetJSON[rec](ctx, s, store.RouterModels, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("GetJSON missing: %v", err)
	}
}

func testClosed(t *testing.T, h Harness) {
	s := h.Open(t)
	mustPut(t, s, store.Artifacts, "a", "b")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(context.Background(), store.Artifacts, "a"); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("Get after Close: %v, want ErrClosed", err)
	}
	if err := s.Put(context.Background(), store.Artifacts, "a", nil); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("Put after Close: %v, want ErrClosed", err)
	}
}

func testReopen(t *testing.T, h Harness) {
	s := h.Open(t)
	ctx := context.Background()
	mustPut(t, s, store.RouterWeights, "m1", "weights")
	mustPut(t, s, store.APIKeys, "hash", "meta")
	if err := s.Update(ctx, func(tx store.Tx) error {
		tx.Put(ctx, store.Conversations, "c", []byte("conv"))
		return tx.Put(ctx, store.Messages, "c/0001", []byte("msg"))
	}); err != nil {
		t.Fatal(err)
	}
	mustPut(t, s, store.Sessions, "gone", "x")
	if err := s.Delete(ctx, store.Sessions, "gone"); err != nil {
		t.Fatal(err)
	}
	s = h.Reopen(t, s)
	t.Cleanup(func() { s.Close() })
	for _, kv := range [][3]string{
		{string(store.RouterWeights), "m1", "weights"},
		{string(store.APIKeys), "hash", "meta"},
		{string(store.Conversations), "c", "conv"},
		{string(store.Messages), "c/0001", "msg"},
	} {
		if got := mustGet(t, s, store.Collection(kv[0]), kv[1]); got != kv[2] {
			t.Fatalf("after reopen %s/%s = %q, want %q", kv[0], kv[1], got, kv[2])
		}
	}
	if _, err := s.Get(ctx, store.Sessions, "gone"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("deleted key came back after reopen: %v", err)
	}
}

// testUpdateLocked: Store.UpdateLocked is Update on every driver (all or nothing, its
// read-modify-writes never lost, also beside plain Updates of the same record and with
// locks naming a record not stored yet), and refuses an unusable lock as Put does.
func testUpdateLocked(t *testing.T, h Harness) {
	s := open(t, h)
	ctx := context.Background()
	if err := s.UpdateLocked(ctx, []store.Ref{{Collection: store.Budgets}}, func(store.Tx) error { return nil }); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("UpdateLocked naming an empty key: %v, want ErrInvalid", err)
	}
	boom := errors.New("boom")
	locks := []store.Ref{{Collection: store.Budgets, Key: "acct"}, {Collection: store.Budgets, Key: "new"}, {Collection: store.Budgets, Key: "acct"}}
	err := s.UpdateLocked(ctx, locks, func(tx store.Tx) error {
		if err := tx.Put(ctx, store.Budgets, "acct", []byte("1")); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("UpdateLocked err = %v, want boom", err)
	}
	if _, err := s.Get(ctx, store.Budgets, "acct"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("failed UpdateLocked left its write: %v", err)
	}
	add := func(tx store.Tx, key string) error {
		v, err := tx.Get(ctx, store.Budgets, key)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		var n int
		fmt.Sscan(string(v), &n)
		return tx.Put(ctx, store.Budgets, key, []byte(fmt.Sprint(n+1)))
	}
	const writers, each = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				var err error
				if w == 0 { // one writer not naming the record
					err = s.Update(ctx, func(tx store.Tx) error { return add(tx, "acct") })
				} else {
					err = s.UpdateLocked(ctx, locks, func(tx store.Tx) error {
						if err := add(tx, "acct"); err != nil {
							return err
						}
						return add(tx, "new")
					})
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if got, want := mustGet(t, s, store.Budgets, "acct"), fmt.Sprint(writers*each); got != want {
		t.Errorf("acct = %s after %d increments", got, writers*each)
	}
	if got, want := mustGet(t, s, store.Budgets, "new"), fmt.Sprint((writers-1)*each); got != want {
		t.Errorf("new = %s after %d increments", got, (writers-1)*each)
	}
}
