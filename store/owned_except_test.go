package store_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/storetest/drivertest"
)

// OwnedQuery.Except: a listing of an index leaves out the records a second index has at
// the same position, newest and oldest first, page by page and within a window, without
// loading them; CountOwned counts what the listing lists. Entries of the second index
// that the first lacks (another owner's, one whose record is gone) change nothing.
func TestListOwnedExcept(t *testing.T) {
	drivertest.ForEach(t, func(t *testing.T, d store.Driver) {
		s := store.New(d)
		ctx := context.Background()
		base := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
		put := func(kind, owner string, at time.Duration, id string) {
			t.Helper()
			if err := store.PutOwned(ctx, s, store.OwnedRef{Kind: kind, Owner: owner, Created: base.Add(at), ID: id}); err != nil {
				t.Fatal(err)
			}
		}
		var want []string // newest first
		for i := range 300 {
			id := fmt.Sprintf("r%03d", i)
			put("req", "alice", time.Duration(i)*time.Second, id)
			if i%7 == 0 {
				put("req_failed", "alice", time.Duration(i)*time.Second, id)
			} else {
				want = slices.Insert(want, 0, id)
			}
			put("req_failed", "alice/x", time.Duration(i)*time.Second, id) // another owner's
		}
		put("req_failed", "alice", 5*time.Second, "gone")        // its record is gone
		put("req_failed", "alice", 1000*time.Second, "r999")     // past every record
		put("req_failed", "alice", 3*time.Second+1, "r003_late") // between two records
		except := &store.OwnedIndex{Kind: "req_failed", Owner: "alice"}
		walk := func(q store.OwnedQuery) []string {
			t.Helper()
			return listAllOwned(t, s, q, 400, func(id string) (string, bool, error) {
				var n int
				if _, err := fmt.Sscanf(id, "r%d", &n); err == nil && n%7 == 0 {
					t.Fatalf("loaded %s, which the except index has", id)
				}
				return id, true, nil
			})
		}
		reversed := func(ids []string) []string { r := slices.Clone(ids); slices.Reverse(r); return r }
		for _, limit := range []int{1, 7, 100} {
			q := store.OwnedQuery{Kind: "req", Owner: "alice", Limit: limit, Except: except}
			if got := walk(q); !slices.Equal(got, want) {
				t.Fatalf("limit %d, newest first: %d listed, want %d: %v", limit, len(got), len(want), got)
			}
			q.OldestFirst = true
			if got := walk(q); !slices.Equal(got, reversed(want)) {
				t.Fatalf("limit %d, oldest first: %v", limit, got)
			}
		}
		if n, err := store.CountOwned(ctx, s, store.OwnedQuery{Kind: "req", Owner: "alice", Except: except}); err != nil || n != len(want) {
			t.Fatalf("count: %d, %v; want %d", n, err, len(want))
		}
		// A window: records 50 to 249, 50 and 56 … 245 failed.
		q := store.OwnedQuery{Kind: "req", Owner: "alice", Limit: 9, Except: except,
			CreatedAfter: base.Add(50 * time.Second), CreatedBefore: base.Add(250 * time.Second)}
		var inWindow []string
		for _, id := range want {
			var n int
			fmt.Sscanf(id, "r%d", &n)
			if n >= 50 && n < 250 {
				inWindow = append(inWindow, id)
			}
		}
		if got := walk(q); !slices.Equal(got, inWindow) {
			t.Fatalf("window, newest first: %v", got)
		}
		q.OldestFirst = true
		if got := walk(q); !slices.Equal(got, reversed(inWindow)) {
			t.Fatalf("window, oldest first: %v", got)
		}
		if n, err := store.CountOwned(ctx, s, q); err != nil || n != len(inWindow) {
			t.Fatalf("window count: %d, %v; want %d", n, err, len(inWindow))
		}
		// Without Except the failed ones are listed and counted.
		if n, err := store.CountOwned(ctx, s, store.OwnedQuery{Kind: "req", Owner: "alice"}); err != nil || n != 300 {
			t.Fatalf("count without Except: %d, %v", n, err)
		}
	})
}

// ListOwnedRefs visits every owner's entries of one kind, page by page, each as the
// OwnedRef it was put with, and no entry of another kind.
func TestListOwnedRefs(t *testing.T) {
	drivertest.ForEach(t, func(t *testing.T, d store.Driver) {
		s := store.New(d)
		ctx := context.Background()
		base := time.Date(2025, 3, 1, 12, 0, 0, 123456789, time.UTC)
		var want []store.OwnedRef
		for i := range 10 {
			for _, owner := range []string{"alice", "alice/x y", "bob%2F"} {
				r := store.OwnedRef{Kind: "req_id", Owner: owner, Created: base.Add(time.Duration(i) * time.Minute), ID: fmt.Sprint("k", i)}
				want = append(want, r)
				if err := store.PutOwned(ctx, s, r); err != nil {
					t.Fatal(err)
				}
				r.Kind = "req"
				if err := store.PutOwned(ctx, s, r); err != nil {
					t.Fatal(err)
				}
			}
		}
		var got []store.OwnedRef
		after := ""
		for range 20 {
			page, next, err := store.ListOwnedRefs(ctx, s, "req_id", after, 4)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, page...)
			if next == "" {
				break
			}
			after = next
		}
		if len(got) != len(want) {
			t.Fatalf("%d entries, want %d: %v", len(got), len(want), got)
		}
		for _, w := range want {
			if !slices.ContainsFunc(got, func(g store.OwnedRef) bool {
				return g.Kind == w.Kind && g.Owner == w.Owner && g.ID == w.ID && g.Created.Equal(w.Created)
			}) {
				t.Fatalf("%+v not listed: %v", w, got)
			}
		}
		if _, _, err := store.ListOwnedRefs(ctx, s, "req_id", "", 0); err == nil {
			t.Fatal("a page of 0 entries was accepted")
		}
	})
}
