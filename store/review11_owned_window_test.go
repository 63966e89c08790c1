package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// TestReview11OwnedWindowOutsideNanosecondRange: the owner index orders entries by the
// complement of UnixNano, which is only defined for 1678-2262. A window bound outside that
// range (both reachable from the HTTP listings: created_after=-1, or Unix seconds in the far
// future) wraps around: "created before 2554" lists nothing and "created after 1969" lists
// nothing, though every record qualifies.
func TestReview11OwnedWindowOutsideNanosecondRange(t *testing.T) {
	s := memstore.New()
	defer s.Close()
	ctx := context.Background()
	now := time.Now()
	for i, id := range []string{"a", "b", "c"} {
		if err := store.PutOwned(ctx, s, store.OwnedRef{Kind: "job", Owner: "alice", Created: now.Add(time.Duration(i) * time.Second), ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	load := func(id string) (string, bool, error) { return id, true, nil }
	for _, c := range []struct {
		name string
		q    store.OwnedQuery
	}{
		{"created_before=18446744074 (year 2554)", store.OwnedQuery{CreatedBefore: time.Unix(18446744074, 0)}},
		{"created_before=9999999999999 (year 318857)", store.OwnedQuery{CreatedBefore: time.Unix(9999999999999, 0)}},
		{"created_after=-1 (1969-12-31T23:59:59Z)", store.OwnedQuery{CreatedAfter: time.Unix(-1, 0)}},
		{"created_after=1600-01-01", store.OwnedQuery{CreatedAfter: time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC)}},
	} {
		q := c.q
		q.Kind, q.Owner = "job", "alice"
		got, _, err := store.ListOwned(ctx, s, q, load)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if len(got) != 3 {
			t.Errorf("%s: listed %v, want all 3 records (all were created inside the window)", c.name, got)
		}
	}
}
