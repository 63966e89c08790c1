package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// TestListOwnedOldestFirst: OldestFirst lists the same records in the other order, pages
// by cursor towards newer records, continues after a record named by CursorAfter in both
// orders, and keeps the creation window and load's filter.
func TestListOwnedOldestFirst(t *testing.T) {
	s := memstore.New()
	defer s.Close()
	ctx := context.Background()
	base := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	refs := map[string]store.OwnedRef{}
	for i := range 12 {
		r := store.OwnedRef{Kind: "file", Owner: "alice", Created: base.Add(time.Duration(i) * time.Second), ID: fmt.Sprintf("f%02d", i)}
		refs[r.ID] = r
		if err := store.PutOwned(ctx, s, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := store.PutOwned(ctx, s, store.OwnedRef{Kind: "file", Owner: "bob", Created: base, ID: "b0"}); err != nil {
		t.Fatal(err)
	}
	odd := func(id string) (string, bool, error) {
		var n int
		fmt.Sscanf(id, "f%d", &n)
		return id, n%2 == 1, nil
	}
	all := func(id string) (string, bool, error) { return id, true, nil }
	walk := func(q store.OwnedQuery, load func(string) (string, bool, error)) []string {
		t.Helper()
		return listAllOwned(t, s, q, 20, load)
	}
	q := store.OwnedQuery{Kind: "file", Owner: "alice", Limit: 5, OldestFirst: true}
	if got := fmt.Sprint(walk(q, all)); got != "[f00 f01 f02 f03 f04 f05 f06 f07 f08 f09 f10 f11]" {
		t.Fatalf("oldest first: %s", got)
	}
	if got := fmt.Sprint(walk(q, odd)); got != "[f01 f03 f05 f07 f09 f11]" {
		t.Fatalf("oldest first, filtered: %s", got)
	}
	q.Cursor = store.CursorAfter(refs["f04"])
	if got := fmt.Sprint(walk(q, all)); got != "[f05 f06 f07 f08 f09 f10 f11]" {
		t.Fatalf("oldest first after f04: %s", got)
	}
	newest := store.OwnedQuery{Kind: "file", Owner: "alice", Limit: 4, Cursor: store.CursorAfter(refs["f04"])}
	if got := fmt.Sprint(walk(newest, all)); got != "[f03 f02 f01 f00]" {
		t.Fatalf("newest first after f04: %s", got)
	}
	win := store.OwnedQuery{Kind: "file", Owner: "alice", Limit: 2, OldestFirst: true,
		CreatedAfter: base.Add(3 * time.Second), CreatedBefore: base.Add(7 * time.Second)}
	if got := fmt.Sprint(walk(win, all)); got != "[f03 f04 f05 f06]" {
		t.Fatalf("oldest first in [3s, 7s): %s", got)
	}
	if got := fmt.Sprint(walk(store.OwnedQuery{Kind: "file", Owner: "bob", OldestFirst: true}, all)); got != "[b0]" {
		t.Fatalf("bob: %s", got)
	}
}

// countingReader counts the index entries a listing reads.
type countingReader struct {
	store.Reader
	entries int
}

func (r *countingReader) List(ctx context.Context, c store.Collection, opts store.ListOptions) ([]store.Entry, error) {
	es, err := r.Reader.List(ctx, c, opts)
	r.entries += len(es)
	return es, err
}

// TestListOwnedOldestFirstReadsEachPageOnce: paging oldest first through n records with
// small pages reads about as many index entries as newest first — each page from its
// cursor — not every newer record's entry on every page (n²/page: quadratic).
func TestListOwnedOldestFirstReadsEachPageOnce(t *testing.T) {
	s := memstore.New()
	defer s.Close()
	ctx := context.Background()
	const n, page = 600, 10
	base := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	for i := range n {
		if err := store.PutOwned(ctx, s, store.OwnedRef{Kind: "file", Owner: "alice", Created: base.Add(time.Duration(i) * time.Second), ID: fmt.Sprintf("f%04d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	reads := func(oldest bool) (int, int) {
		r := &countingReader{Reader: s}
		q := store.OwnedQuery{Kind: "file", Owner: "alice", Limit: page, OldestFirst: oldest}
		listed := 0
		for {
			items, next, err := store.ListOwned(ctx, r, q, func(id string) (string, bool, error) { return id, true, nil })
			if err != nil {
				t.Fatal(err)
			}
			listed += len(items)
			if next == "" {
				return listed, r.entries
			}
			q.Cursor = next
		}
	}
	newestListed, newestReads := reads(false)
	oldestListed, oldestReads := reads(true)
	if newestListed != n || oldestListed != n {
		t.Fatalf("listed %d newest first and %d oldest first, want %d", newestListed, oldestListed, n)
	}
	if oldestReads > 2*newestReads {
		t.Errorf("oldest first read %d index entries to list %d records in pages of %d; newest first read %d", oldestReads, n, page, newestReads)
	}
}

// listAllOwned lists q's records page after page (ListOwned, loading each with load),
// failing the test on an error or when the listing does not end within pages pages.
func listAllOwned(t *testing.T, s *store.Store, q store.OwnedQuery, pages int, load func(string) (string, bool, error)) []string {
	t.Helper()
	var out []string
	for range pages {
		page, next, err := store.ListOwned(context.Background(), s, q, load)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, page...)
		if next == "" {
			return out
		}
		q.Cursor = next
	}
	t.Fatal("the listing does not end")
	return nil
}
