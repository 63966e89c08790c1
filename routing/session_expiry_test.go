package routing_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/routing"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/storetest"
	"github.com/switchyard-ai/switchyard/store/storetest/drivertest"
)

func listKeys(t *testing.T, st *store.Store, c store.Collection) []string {
	t.Helper()
	es, err := st.List(context.Background(), c, store.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Key)
	}
	return out
}

// ExpireSessions with N sessions kept and K past the retention reads the K sessions and at
// most a page of the index past them, not the N+K sessions; it deletes the K with their
// index keys; a session given feedback keeps one index key; the next run reads no session.
func TestExpireSessionsReadsOnlyTheExpired(t *testing.T) {
	drivertest.ForEach(t, func(t *testing.T, drv store.Driver) {
		ctx := context.Background()
		now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		d := storetest.NewReadCounter(drv)
		st := store.New(d)
		s := routing.NewSelector(routing.Options{Store: st, Now: func() time.Time { return now }, SessionRetention: 24 * time.Hour, Scorer: routing.DefaultScorer{}})
		// An empty store: nothing to migrate, then nothing to migrate again a day later (the
		// one rescan, store.MigrationRescanAfter), so the run measured below is a steady one.
		for range 2 {
			if n, err := s.ExpireSessions(ctx); err != nil || n != 0 {
				t.Fatalf("first runs: %d, %v", n, err)
			}
			now = now.Add(store.MigrationRescanAfter)
		}
		const kept, expired = 1100, 40 // kept: more than a page (500)
		req := &routing.Request{Messages: userMsg("hi"), LLMProviders: names("p/a", "p/b")}
		var oldIDs []string
		for range expired {
			oldIDs = append(oldIDs, mustSelect(t, s, "o", req).SessionID)
			now = now.Add(time.Second)
		}
		now = now.Add(20 * time.Hour)
		var keptIDs []string
		for range kept {
			keptIDs = append(keptIDs, mustSelect(t, s, "o", req).SessionID)
			now = now.Add(time.Millisecond)
		}
		one := 1.0
		if _, err := s.Feedback(ctx, "o", &routing.FeedbackRequest{SessionID: keptIDs[0], Provider: routing.Candidate{Name: "p/a"}, Feedback: routing.FeedbackMetrics{Accuracy: &one}}); err != nil {
			t.Fatal(err)
		}
		if got := len(listKeys(t, st, store.SessionExpiry)); got != kept+expired {
			t.Fatalf("%d index keys for %d sessions", got, kept+expired)
		}
		now = now.Add(5 * time.Hour) // the old ones are over 25 h old, the others under 6 h
		d.Reset()
		n, err := s.ExpireSessions(ctx)
		if err != nil || n != expired {
			t.Fatalf("ExpireSessions = %d, %v; want %d", n, err, expired)
		}
		listedSessions, gotSessions := d.Counts(store.Sessions)
		listedIndex, _ := d.Counts(store.SessionExpiry)
		if listedSessions != 0 || gotSessions > expired || listedIndex > expired+500 {
			t.Errorf("the run listed %d sessions, read %d and listed %d index keys; want 0, at most %d and at most %d (%d sessions kept)",
				listedSessions, gotSessions, listedIndex, expired, expired+500, kept)
		}
		for _, id := range oldIDs[:3] {
			if _, err := s.Session(ctx, "o", id); err == nil {
				t.Errorf("expired session %s still found", id)
			}
		}
		if _, err := s.Session(ctx, "o", keptIDs[0]); err != nil {
			t.Errorf("a kept session: %v", err)
		}
		if got, want := len(listKeys(t, st, store.Sessions)), kept; got != want {
			t.Errorf("%d sessions left, want %d", got, want)
		}
		if got := len(listKeys(t, st, store.SessionExpiry)); got != kept {
			t.Errorf("%d index keys left, want %d", got, kept)
		}
		d.Reset()
		if n, err := s.ExpireSessions(ctx); err != nil || n != 0 {
			t.Fatalf("second run: %d, %v", n, err)
		}
		listedSessions, gotSessions = d.Counts(store.Sessions)
		if listedIndex, _ := d.Counts(store.SessionExpiry); listedSessions+gotSessions != 0 || listedIndex > 500 {
			t.Errorf("a run with nothing expired read %d sessions and %d index keys, want 0 and at most 500", listedSessions+gotSessions, listedIndex)
		}
	})
}

// A session written again between the run's listing of the index and its transaction,
// with a later creation time (as another writer would), is read again and kept.
func TestExpireSessionsKeepsASessionWrittenAgainMeanwhile(t *testing.T) {
	drivertest.ForEach(t, func(t *testing.T, drv store.Driver) {
		ctx := context.Background()
		now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		d := storetest.NewReadCounter(drv)
		st := store.New(d)
		s := routing.NewSelector(routing.Options{Store: st, Now: func() time.Time { return now }, SessionRetention: time.Hour, Scorer: routing.DefaultScorer{}})
		if _, err := s.ExpireSessions(ctx); err != nil {
			t.Fatal(err)
		}
		id := mustSelect(t, s, "o", &routing.Request{Messages: userMsg("hi"), LLMProviders: names("p/a", "p/b")}).SessionID
		now = now.Add(2 * time.Hour)
		d.AfterList(store.SessionExpiry, func() {
			sess, err := s.Session(ctx, "o", id)
			if err != nil {
				t.Error(err)
				return
			}
			sess.CreatedAt = now
			if err := store.PutJSON(ctx, st, store.Sessions, id, sess); err != nil {
				t.Error(err)
			}
		})
		if n, err := s.ExpireSessions(ctx); err != nil || n != 0 {
			t.Fatalf("ExpireSessions = %d, %v; want 0", n, err)
		}
		if _, err := s.Session(ctx, "o", id); err != nil {
			t.Fatalf("the session written again: %v", err)
		}
		if got := listKeys(t, st, store.SessionExpiry); len(got) != 1 {
			t.Fatalf("index keys %v, want the rewritten session's one", got)
		}
		now = now.Add(2 * time.Hour) // its time runs out: the key the run put finds it
		if n, err := s.ExpireSessions(ctx); err != nil || n != 1 {
			t.Fatalf("ExpireSessions later = %d, %v; want 1", n, err)
		}
	})
}

// Sessions stored by a build without the index have no index key: the first run reads
// them all once, deletes the expired (and unreadable), indexes the others and records that
// it ran; later runs do not read them, and delete them once they expire.
func TestExpireSessionsIndexesSessionsOfEarlierBuilds(t *testing.T) {
	drivertest.ForEach(t, func(t *testing.T, drv store.Driver) {
		ctx := context.Background()
		now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		d := storetest.NewReadCounter(drv)
		st := store.New(d)
		s := routing.NewSelector(routing.Options{Store: st, Now: func() time.Time { return now }, SessionRetention: 24 * time.Hour, Scorer: routing.DefaultScorer{}})
		for i := range 1200 { // more than a page
			created := now.Add(-time.Duration(i%4) * 10 * time.Hour) // 0, 10, 20 or 30 h old
			sess := routing.Session{ID: fmt.Sprintf("sess_old%04d", i), Owner: "o", CreatedAt: created, Chosen: "p/a"}
			if err := store.PutJSON(ctx, st, store.Sessions, sess.ID, sess); err != nil { // as the earlier build wrote it: no index key
				t.Fatal(err)
			}
		}
		if err := st.Put(ctx, store.Sessions, "sess_garbled", []byte("{")); err != nil {
			t.Fatal(err)
		}
		if n, err := s.ExpireSessions(ctx); err != nil || n != 301 {
			t.Fatalf("first run = %d, %v; want the 300 sessions 30 h old and the garbled one", n, err)
		}
		if got := listKeys(t, st, store.Migrations); len(got) != 1 {
			t.Fatalf("migration markers %v, want one", got)
		}
		if got := len(listKeys(t, st, store.SessionExpiry)); got != 900 {
			t.Fatalf("%d index keys after the migration, want 900", got)
		}
		d.Reset()
		if n, err := s.ExpireSessions(ctx); err != nil || n != 0 {
			t.Fatalf("second run = %d, %v", n, err)
		}
		if listed, _ := d.Counts(store.Sessions); listed != 0 {
			t.Errorf("the run after the migration listed %d sessions, want 0", listed)
		}
		now = now.Add(15 * time.Hour) // those 10 and 20 h old are now over 24 h
		if n, err := s.ExpireSessions(ctx); err != nil || n != 600 {
			t.Fatalf("run 15 h later = %d, %v; want 600", n, err)
		}
		if got := len(listKeys(t, st, store.Sessions)); got != 300 {
			t.Fatalf("%d sessions left, want the 300 made at the start", got)
		}
		// A replica of the earlier build still running (a rolling upgrade) writes a session
		// with no index key after the migration: the one rescan, a day after the first scan,
		// finds it; it would otherwise be kept for ever.
		late := routing.Session{ID: "sess_late", Owner: "o", CreatedAt: now, Chosen: "p/a"}
		if err := store.PutJSON(ctx, st, store.Sessions, late.ID, late); err != nil {
			t.Fatal(err)
		}
		now = now.Add(store.MigrationRescanAfter + time.Hour) // the late one and the first 300 expire
		if n, err := s.ExpireSessions(ctx); err != nil || n != 301 {
			t.Fatalf("the run a day after the migration = %d, %v; want the 300 indexed and the late unindexed one", n, err)
		}
		if got := listKeys(t, st, store.Sessions); len(got) != 0 {
			t.Fatalf("sessions left %v, want none", got)
		}
		if got := listKeys(t, st, store.Migrations); len(got) != 2 {
			t.Fatalf("migration markers %v, want the first scan's and the rescan's", got)
		}
	})
}
