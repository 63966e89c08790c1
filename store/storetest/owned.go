package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/store"
)

// ownedRecord is what the owner index tests keep in store.TrainingJobs.
type ownedRecord struct {
	ID      string    `json:"id"`
	Owner   string    `json:"owner"`
	Status  string    `json:"status"`
	Created time.Time `json:"created"`
}

func (r ownedRecord) ref() store.OwnedRef {
	return store.OwnedRef{Kind: "test_job", Owner: r.Owner, Created: r.Created, ID: r.ID}
}

// putOwned stores r and its index entry in one transaction.
func putOwned(t *testing.T, s *store.Store, r ownedRecord) {
	t.Helper()
	ctx := context.Background()
	err := s.Update(ctx, func(tx store.Tx) error {
		if err := store.PutJSON(ctx, tx, store.TrainingJobs, r.ID, r); err != nil {
			return err
		}
		return store.PutOwned(ctx, tx, r.ref())
	})
	if err != nil {
		t.Fatal(err)
	}
}

// listAll pages through q with the given page size and returns the ids in order.
func listAll(t *testing.T, s *store.Store, q store.OwnedQuery, status string) []string {
	t.Helper()
	ctx := context.Background()
	var ids []string
	for page := 0; ; page++ {
		if page > 1000 {
			t.Fatal("paging does not end")
		}
		items, next, err := store.ListOwned(ctx, s, q, func(id string) (ownedRecord, bool, error) {
			r, err := store.GetJSON[ownedRecord](ctx, s, store.TrainingJobs, id)
			if errors.Is(err, store.ErrNotFound) {
				return r, false, nil
			}
			return r, err == nil && (status == "" || r.Status == status), err
		})
		if err != nil {
			t.Fatal(err)
		}
		limit := q.Limit
		if limit == 0 {
			limit = store.DefaultPageLimit
		}
		if len(items) > limit {
			t.Fatalf("page of %d items with limit %d", len(items), limit)
		}
		if next != "" && len(items) != limit {
			t.Fatalf("a page of %d items (limit %d) has a next cursor", len(items), limit)
		}
		for _, it := range items {
			if it.Owner != q.Owner {
				t.Fatalf("listing of %q returned %s of %q", q.Owner, it.ID, it.Owner)
			}
			ids = append(ids, it.ID)
		}
		if next == "" {
			return ids
		}
		q.Cursor = next
	}
}

func testOwnedPaging(t *testing.T, h Harness) {
	s := open(t, h)
	ctx := context.Background()
	base := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	// 23 records of alice one second apart (two created at the same instant), 5 of
	// "alice/x" (a prefix-like owner), 3 of bob.
	var want []string // newest first
	for i := 0; i < 23; i++ {
		created := base.Add(time.Duration(i) * time.Second)
		if i == 7 {
			created = base.Add(6 * time.Second)
		}
		status := "done"
		if i%3 == 0 {
			status = "running"
		}
		putOwned(t, s, ownedRecord{ID: fmt.Sprintf("a%02d", i), Owner: "alice", Status: status, Created: created})
	}
	for i := 22; i >= 0; i-- {
		want = append(want, fmt.Sprintf("a%02d", i))
	}
	// a06 and a07 share their time; the index orders them by id.
	want[15], want[16] = "a06", "a07"
	for i := 0; i < 5; i++ {
		putOwned(t, s, ownedRecord{ID: fmt.Sprintf("x%02d", i), Owner: "alice/x", Created: base.Add(time.Duration(i) * time.Second)})
	}
	for i := 0; i < 3; i++ {
		putOwned(t, s, ownedRecord{ID: fmt.Sprintf("b%02d", i), Owner: "bob", Created: base.Add(time.Duration(i) * time.Second)})
	}

	for _, limit := range []int{1, 2, 5, 22, 23, 100, 0} {
		got := listAll(t, s, store.OwnedQuery{Kind: "test_job", Owner: "alice", Limit: limit}, "")
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("limit %d:\n got %v\nwant %v", limit, got, want)
		}
	}
	if got := listAll(t, s, store.OwnedQuery{Kind: "test_job", Owner: "bob", Limit: 2}, ""); fmt.Sprint(got) != "[b02 b01 b00]" {
		t.Fatalf("bob: %v", got)
	}
	if got := listAll(t, s, store.OwnedQuery{Kind: "test_job", Owner: "alice/x"}, ""); len(got) != 5 {
		t.Fatalf("alice/x: %v", got)
	}
	if got := listAll(t, s, store.OwnedQuery{Kind: "other_kind", Owner: "alice"}, ""); len(got) != 0 {
		t.Fatalf("another kind: %v", got)
	}

	// A filter applied by load: pages stay full and nothing is missed.
	var running []string
	for _, id := range want {
		var n int
		fmt.Sscanf(id, "a%d", &n)
		if n%3 == 0 {
			running = append(running, id)
		}
	}
	if got := listAll(t, s, store.OwnedQuery{Kind: "test_job", Owner: "alice", Limit: 3}, "running"); fmt.Sprint(got) != fmt.Sprint(running) {
		t.Fatalf("running: got %v want %v", got, running)
	}

	// Time window [after, before): created_after inclusive, created_before exclusive.
	q := store.OwnedQuery{Kind: "test_job", Owner: "alice", Limit: 2,
		CreatedAfter: base.Add(6 * time.Second), CreatedBefore: base.Add(10 * time.Second)}
	if got := listAll(t, s, q, ""); fmt.Sprint(got) != "[a09 a08 a06 a07]" {
		t.Fatalf("window: %v", got)
	}
	// Consecutive windows tile the listing.
	var tiled []string
	for end := 24; end > 0; end -= 4 {
		q := store.OwnedQuery{Kind: "test_job", Owner: "alice", Limit: 3,
			CreatedAfter: base.Add(time.Duration(end-4) * time.Second), CreatedBefore: base.Add(time.Duration(end) * time.Second)}
		tiled = append(tiled, listAll(t, s, q, "")...)
	}
	if fmt.Sprint(tiled) != fmt.Sprint(want) {
		t.Fatalf("tiled windows:\n got %v\nwant %v", tiled, want)
	}

	// Records created or deleted between pages: no repeats, no misses of the others.
	items, next, err := store.ListOwned(ctx, s, store.OwnedQuery{Kind: "test_job", Owner: "alice", Limit: 5},
		func(id string) (string, bool, error) { return id, true, nil })
	if err != nil || next == "" || fmt.Sprint(items) != fmt.Sprint(want[:5]) {
		t.Fatalf("first page: %v %q %v", items, next, err)
	}
	putOwned(t, s, ownedRecord{ID: "a99", Owner: "alice", Created: base.Add(time.Hour)})
	gone := ownedRecord{ID: "a10", Owner: "alice", Created: base.Add(10 * time.Second)}
	if err := s.Update(ctx, func(tx store.Tx) error {
		if err := tx.Delete(ctx, store.TrainingJobs, gone.ID); err != nil {
			return err
		}
		return store.DeleteOwned(ctx, tx, gone.ref())
	}); err != nil {
		t.Fatal(err)
	}
	rest := listAll(t, s, store.OwnedQuery{Kind: "test_job", Owner: "alice", Limit: 4, Cursor: next}, "")
	var wantRest []string
	for _, id := range want[5:] {
		if id != "a10" {
			wantRest = append(wantRest, id)
		}
	}
	if fmt.Sprint(rest) != fmt.Sprint(wantRest) {
		t.Fatalf("after changes:\n got %v\nwant %v", rest, wantRest)
	}
	// An index entry whose record is gone is skipped.
	if err := s.Delete(ctx, store.TrainingJobs, "a22"); err != nil {
		t.Fatal(err)
	}
	if got := listAll(t, s, store.OwnedQuery{Kind: "test_job", Owner: "alice", Limit: 1}, ""); got[0] != "a99" || got[1] != "a21" {
		t.Fatalf("dangling entry: %v", got[:2])
	}

	// Bad queries name their field.
	for _, c := range []struct {
		q     store.OwnedQuery
		field string
	}{
		{store.OwnedQuery{Limit: -1}, "limit"},
		{store.OwnedQuery{Limit: store.MaxPageLimit + 1}, "limit"},
		{store.OwnedQuery{Cursor: "not a cursor"}, "cursor"},
		{store.OwnedQuery{Cursor: "YWJj"}, "cursor"},
		{store.OwnedQuery{CreatedAfter: base, CreatedBefore: base}, "created_after"},
	} {
		c.q.Kind, c.q.Owner = "test_job", "alice"
		_, _, err := store.ListOwned(ctx, s, c.q, func(id string) (string, bool, error) { return id, true, nil })
		var qe *store.QueryError
		if !errors.As(err, &qe) || qe.Field != c.field || !errors.Is(err, store.ErrInvalid) {
			t.Fatalf("%+v: err = %v, want a QueryError naming %s", c.q, err, c.field)
		}
		if c.field == "cursor" && !errors.Is(err, store.ErrBadCursor) {
			t.Fatalf("bad cursor does not match ErrBadCursor: %v", err)
		}
	}
	// A cursor is its listing's: another kind refuses it.
	_, _, err = store.ListOwned(ctx, s, store.OwnedQuery{Kind: "other_job", Owner: "alice", Cursor: next},
		func(id string) (string, bool, error) { return id, true, nil })
	if !errors.Is(err, store.ErrBadCursor) || !strings.Contains(err.Error(), "another listing") {
		t.Fatalf("a cursor of another listing: err = %v", err)
	}
}

func testOwnedBackfill(t *testing.T, h Harness) {
	s := open(t, h)
	ctx := context.Background()
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	// 600 records stored without index entries (as before the index existed).
	for i := 0; i < 600; i++ {
		owner := "alice"
		if i%2 == 1 {
			owner = "bob"
		}
		r := ownedRecord{ID: fmt.Sprintf("r%03d", i), Owner: owner, Created: base.Add(time.Duration(i) * time.Minute)}
		if err := store.PutJSON(ctx, s, store.TrainingJobs, r.ID, r); err != nil {
			t.Fatal(err)
		}
	}
	mustPut(t, s, store.TrainingJobs, "garbage", "not json")
	reads := 0
	ref := func(e store.Entry) (store.OwnedRef, bool) {
		reads++
		r, err := store.GetJSON[ownedRecord](ctx, s, store.TrainingJobs, e.Key)
		if err != nil {
			return store.OwnedRef{}, false
		}
		return r.ref(), true
	}
	var b store.OwnedBackfill
	if err := b.Ensure(ctx, s, "test_job", store.TrainingJobs, ref); err != nil {
		t.Fatal(err)
	}
	if reads != 601 {
		t.Fatalf("backfill read %d records, want 601", reads)
	}
	got := listAll(t, s, store.OwnedQuery{Kind: "test_job", Owner: "bob", Limit: 100}, "")
	if len(got) != 300 || got[0] != "r599" || got[299] != "r001" {
		t.Fatalf("bob after backfill: %d records, %v…%v", len(got), got[:1], got[len(got)-1:])
	}
	// Done once: neither this value nor a new one (another process) scans again.
	if err := b.Ensure(ctx, s, "test_job", store.TrainingJobs, ref); err != nil {
		t.Fatal(err)
	}
	var b2 store.OwnedBackfill
	if err := b2.Ensure(ctx, s, "test_job", store.TrainingJobs, ref); err != nil {
		t.Fatal(err)
	}
	if reads != 601 {
		t.Fatalf("backfill ran again: %d reads", reads)
	}
}
