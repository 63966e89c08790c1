package completions

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/boltstore"
	"github.com/switchyard-ai/switchyard/store/memstore"
	"github.com/switchyard-ai/switchyard/store/pgstore"
)

// settableClock is a clock the retention tests move by hand.
type settableClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *settableClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *settableClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// retentionBackends are the stores the retention tests run on: memstore, bbolt and, when
// SWITCHYARD_TEST_POSTGRES names a database (scripts/test.sh sets it), PostgreSQL.
func retentionBackends() map[string]func(t *testing.T) *store.Store {
	return map[string]func(t *testing.T) *store.Store{
		"memstore": func(*testing.T) *store.Store { return memstore.New() },
		"boltstore": func(t *testing.T) *store.Store {
			st, err := boltstore.Open(filepath.Join(t.TempDir(), "retention.db"), boltstore.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		},
		"postgres": func(t *testing.T) *store.Store {
			dsn := os.Getenv("SWITCHYARD_TEST_POSTGRES")
			if dsn == "" {
				t.Skip("SWITCHYARD_TEST_POSTGRES is not set: scripts/test.sh starts a throwaway PostgreSQL cluster and sets it (needs the Debian package postgresql)")
			}
			st, err := pgstore.Open(context.Background(), dsn, pgstore.Options{Schema: fmt.Sprintf("retention_%d_%d", os.Getpid(), time.Now().UnixNano())})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		},
	}
}

func retentionHarness(t *testing.T, st *store.Store, clock *settableClock, native, openai time.Duration) *harness {
	h := newHarness(t, func(o *Options) {
		o.Store = st
		o.Now = clock.now
		o.ConversationRetention = native
		o.OpenAIConversationRetention = openai
	})
	h.store = st
	h.a.on("m", step{text: "Hello."}, step{text: "Again."}, step{text: "More."}, step{text: "Still."})
	return h
}

// newTurn starts a native conversation of owner and returns its id.
func newTurn(t *testing.T, h *harness, owner, convID string) string {
	t.Helper()
	req := userReq("Hi there", "a/m")
	req.ConversationID = convID
	resp, err := h.g.Complete(context.Background(), Scope{Owner: owner}, req)
	if err != nil {
		t.Fatal(err)
	}
	return resp.ConversationID
}

func countPrefix(t *testing.T, st *store.Store, c store.Collection, prefix string) int {
	t.Helper()
	es, err := st.List(context.Background(), c, store.ListOptions{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	return len(es)
}

// TestConversationRetention: a native conversation unused for longer than the retention is
// gone on read at once (before any sweep) and from the store after a sweep, messages and
// index entry included; a younger one, and one whose last turn is recent though it was
// created long ago, are untouched.
func TestConversationRetention(t *testing.T) {
	for name, open := range retentionBackends() {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			clock := &settableClock{t: time.Now().UTC()} // the gateway checks request deadlines against the real clock
			st := open(t)
			h := retentionHarness(t, st, clock, 90*24*time.Hour, -1)
			old := newTurn(t, h, "alice", "")
			extended := newTurn(t, h, "alice", "")
			clock.add(60 * 24 * time.Hour)
			newTurn(t, h, "alice", extended) // its last turn: day 60
			young := newTurn(t, h, "alice", "")
			clock.add(31 * 24 * time.Hour) // day 91: old is past 90 days since its last turn

			if _, _, err := h.g.Conversation(ctx, "alice", old); !errors.Is(err, ErrNotFound) {
				t.Fatalf("expired, not yet swept conversation read: err %v, want ErrNotFound", err)
			}
			if _, err := h.g.Messages(ctx, "alice", old, 0, ""); !errors.Is(err, ErrNotFound) {
				t.Fatalf("messages of an expired conversation: err %v, want ErrNotFound", err)
			}
			req := userReq("continue", "a/m")
			req.ConversationID = old
			if _, err := h.g.Complete(ctx, Scope{Owner: "alice"}, req); !errors.Is(err, ErrNotFound) {
				t.Fatalf("continuing an expired conversation: err %v, want ErrNotFound", err)
			}
			list, err := h.g.ListConversations(ctx, "alice", ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range list.Data {
				if c.ID == old {
					t.Fatal("an expired conversation is listed")
				}
			}
			if len(list.Data) != 2 {
				t.Fatalf("listed %d conversations, want the 2 kept", len(list.Data))
			}

			n, err := h.g.SweepConversations(ctx, clock.now())
			if err != nil {
				t.Fatal(err)
			}
			if n != 1 {
				t.Errorf("swept %d conversations, want 1", n)
			}
			if _, err := st.Get(ctx, store.Conversations, old); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("expired conversation still stored after a sweep: %v", err)
			}
			if got := countPrefix(t, st, store.Messages, old+"/"); got != 0 {
				t.Errorf("%d messages of the expired conversation left", got)
			}
			if got := countPrefix(t, st, store.OwnerIndex, conversationKind+"/"); got != 2 {
				t.Errorf("%d owner index entries left, want the 2 kept conversations'", got)
			}
			for _, id := range []string{extended, young} {
				c, msgs, err := h.g.Conversation(ctx, "alice", id)
				if err != nil {
					t.Fatalf("kept conversation %s: %v", id, err)
				}
				if len(msgs) != c.MessageCount || len(msgs) == 0 {
					t.Errorf("kept conversation %s has %d of its %d messages", id, len(msgs), c.MessageCount)
				}
			}
			if n, err := h.g.SweepConversations(ctx, clock.now()); err != nil || n != 0 {
				t.Errorf("second sweep: %d, %v; want 0 (idempotent)", n, err)
			}
		})
	}
}

// TestConversationRetentionForever: a negative retention, and the default (0), keep
// conversations whatever their age.
func TestConversationRetentionForever(t *testing.T) {
	for _, keep := range []time.Duration{-1, 0} {
		ctx := context.Background()
		clock := &settableClock{t: time.Now().UTC()} // the gateway checks request deadlines against the real clock
		h := retentionHarness(t, memstore.New(), clock, keep, keep)
		id := newTurn(t, h, "alice", "")
		oc, err := h.g.CreateOpenAIConversation(ctx, "alice", []ResponsesItem{userTextItem("hi")}, nil)
		if err != nil {
			t.Fatal(err)
		}
		clock.add(10 * 365 * 24 * time.Hour)
		if n, err := h.g.SweepConversations(ctx, clock.now()); err != nil || n != 0 {
			t.Errorf("retention %v: swept %d (%v), want 0", keep, n, err)
		}
		if n, err := h.g.SweepOpenAIConversations(ctx, clock.now()); err != nil || n != 0 {
			t.Errorf("retention %v: swept %d OpenAI conversations (%v), want 0", keep, n, err)
		}
		if _, _, err := h.g.Conversation(ctx, "alice", id); err != nil {
			t.Errorf("retention %v: conversation lost: %v", keep, err)
		}
		if _, err := h.g.OpenAIConversationOf(ctx, "alice", oc.ID); err != nil {
			t.Errorf("retention %v: OpenAI conversation lost: %v", keep, err)
		}
	}
}

// TestOpenAIConversationRetention: an OpenAI-style conversation unused for longer than the
// retention is not found (before and after a sweep), its items gone after the sweep; adding
// items counts as a use; younger conversations keep all their items.
func TestOpenAIConversationRetention(t *testing.T) {
	for name, open := range retentionBackends() {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			clock := &settableClock{t: time.Now().UTC()} // the gateway checks request deadlines against the real clock
			st := open(t)
			h := retentionHarness(t, st, clock, -1, 30*24*time.Hour)
			mk := func() string {
				c, err := h.g.CreateOpenAIConversation(ctx, "alice", []ResponsesItem{userTextItem("hi"), userTextItem("there")}, nil)
				if err != nil {
					t.Fatal(err)
				}
				return c.ID
			}
			old, used := mk(), mk()
			clock.add(20 * 24 * time.Hour)
			if _, err := h.g.AddOpenAIConversationItems(ctx, "alice", used, []ResponsesItem{userTextItem("later")}); err != nil {
				t.Fatal(err)
			}
			young := mk()
			clock.add(11 * 24 * time.Hour) // day 31

			if _, err := h.g.OpenAIConversationOf(ctx, "alice", old); !errors.Is(err, ErrConversationNotFound) {
				t.Fatalf("expired, not yet swept conversation: err %v, want ErrConversationNotFound", err)
			}
			if _, err := h.g.OpenAIConversationItems(ctx, "alice", old); !errors.Is(err, ErrConversationNotFound) {
				t.Fatalf("items of an expired conversation: err %v, want ErrConversationNotFound", err)
			}
			if _, err := h.g.AddOpenAIConversationItems(ctx, "alice", old, []ResponsesItem{userTextItem("x")}); !errors.Is(err, ErrConversationNotFound) {
				t.Fatalf("adding to an expired conversation: err %v, want ErrConversationNotFound", err)
			}
			n, err := h.g.SweepOpenAIConversations(ctx, clock.now())
			if err != nil {
				t.Fatal(err)
			}
			if n != 1 {
				t.Errorf("swept %d, want 1", n)
			}
			for _, c := range []store.Collection{store.OpenAIConversations, store.OpenAIConversationItems, store.OpenAIConversationItemIDs} {
				if got := countPrefix(t, st, c, old); got != 0 {
					t.Errorf("%d records of the expired conversation left in %s", got, c)
				}
			}
			for id, want := range map[string]int{used: 3, young: 2} {
				items, err := h.g.OpenAIConversationItems(ctx, "alice", id)
				if err != nil {
					t.Fatalf("kept conversation %s: %v", id, err)
				}
				if len(items) != want {
					t.Errorf("kept conversation %s has %d items, want %d", id, len(items), want)
				}
			}
		})
	}
}

// TestConversationSweepStopsOnCancel: a cancelled context stops the sweep with its error,
// having deleted nothing after the cancellation.
func TestConversationSweepStopsOnCancel(t *testing.T) {
	clock := &settableClock{t: time.Now().UTC()} // the gateway checks request deadlines against the real clock
	st := memstore.New()
	h := retentionHarness(t, st, clock, time.Hour, time.Hour)
	for range 3 {
		if _, err := h.g.CreateOpenAIConversation(context.Background(), "alice", []ResponsesItem{userTextItem("hi")}, nil); err != nil {
			t.Fatal(err)
		}
	}
	clock.add(2 * time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	n, err := h.g.SweepOpenAIConversations(ctx, clock.now())
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("sweep with a cancelled context: err %v, want context.Canceled", err)
	}
	if n != 0 || countPrefix(t, st, store.OpenAIConversations, "") != 3 {
		t.Errorf("a cancelled sweep deleted %d conversations", n)
	}
}

// TestOpenAIConversationRetentionLarge: a conversation with more items than one sweep
// transaction deletes goes whole (over several transactions), with the small ones beside
// it; a young large one keeps every item.
func TestOpenAIConversationRetentionLarge(t *testing.T) {
	for name, open := range retentionBackends() {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			clock := &settableClock{t: time.Now().UTC()}
			st := open(t)
			h := retentionHarness(t, st, clock, -1, 24*time.Hour)
			mk := func(items int) string {
				c, err := h.g.CreateOpenAIConversation(ctx, "alice", nil, nil)
				if err != nil {
					t.Fatal(err)
				}
				for i := 0; i < items; i += 20 {
					batch := make([]ResponsesItem, min(20, items-i))
					for j := range batch {
						batch[j] = userTextItem("item")
					}
					if _, err := h.g.AddOpenAIConversationItems(ctx, "alice", c.ID, batch); err != nil {
						t.Fatal(err)
					}
				}
				return c.ID
			}
			var old []string
			for range 5 {
				old = append(old, mk(3))
			}
			old = append(old, mk(300)) // 600 records with its item index
			for range 5 {
				old = append(old, mk(3))
			}
			clock.add(25 * time.Hour)
			young := mk(300)
			n, err := h.g.SweepOpenAIConversations(ctx, clock.now())
			if err != nil {
				t.Fatal(err)
			}
			if n != len(old) {
				t.Errorf("swept %d, want %d", n, len(old))
			}
			for _, c := range []store.Collection{store.OpenAIConversations, store.OpenAIConversationItems, store.OpenAIConversationItemIDs} {
				for _, id := range old {
					if got := countPrefix(t, st, c, id); got != 0 {
						t.Errorf("%d records of expired %s left in %s", got, id, c)
					}
				}
			}
			items, err := h.g.OpenAIConversationItems(ctx, "alice", young)
			if err != nil || len(items) != 300 {
				t.Errorf("young large conversation: %d items, %v; want 300", len(items), err)
			}
			if got := countPrefix(t, st, store.OpenAIConversationItemIDs, young); got != 300 {
				t.Errorf("young large conversation: %d item ids, want 300", got)
			}
		})
	}
}
