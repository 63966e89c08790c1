package completions

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// gatedDriver is a memstore whose Update waits until the gate opens.
type gatedDriver struct {
	*memstore.Driver
	gate    chan struct{}
	updates sync.WaitGroup
}

func (d *gatedDriver) Update(ctx context.Context, fn func(tx store.Tx) error) error {
	select {
	case <-d.gate:
	case <-ctx.Done():
		return ctx.Err()
	}
	return d.Driver.Update(ctx, fn)
}

func gatedHarness(t *testing.T) (*harness, *gatedDriver) {
	d := &gatedDriver{Driver: memstore.NewDriver(), gate: make(chan struct{})}
	st := store.New(d)
	h := newHarness(t, func(o *Options) {
		o.Store = st
		o.ConversationWrites = WriteBehind
	})
	h.store = st
	return h, d
}

func TestWriteBehindAnswersBeforeTheCommitAndReadsItsOwnTurns(t *testing.T) {
	h, d := gatedHarness(t)
	h.a.on("m", step{text: "Paris."})
	ctx := context.Background()

	// The answer comes back while the store cannot commit.
	resp, err := h.g.Complete(ctx, Scope{Owner: "k1"}, userReq("Capital of France?", "a/m"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.store.Get(ctx, store.Conversations, resp.ConversationID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("conversation committed before the gate opened: %v", err)
	}

	// A request continuing the conversation waits for the queued turn, then sees it.
	next := userReq("And of Spain?", "a/m")
	next.ConversationID = resp.ConversationID
	type result struct {
		resp *Response
		err  error
	}
	done := make(chan result, 1)
	go func() {
		r, err := h.g.Complete(ctx, Scope{Owner: "k1"}, next)
		done <- result{r, err}
	}()
	select {
	case r := <-done:
		t.Fatalf("continued the conversation before its first turn was committed: %+v, %v", r.resp, r.err)
	case <-time.After(50 * time.Millisecond):
	}
	close(d.gate)
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	sent := h.a.lastRequest().Messages
	if len(sent) != 3 || sent[0].Content != "Capital of France?" || sent[1].Content != "Paris." || sent[2].Content != "And of Spain?" {
		t.Fatalf("upstream got %+v, want the stored history then the new message", sent)
	}

	// Close commits what is queued: both turns are stored, in order.
	if err := h.g.Close(ctx); err != nil {
		t.Fatal(err)
	}
	c, msgs, err := h.g.Conversation(ctx, "k1", resp.ConversationID)
	if err != nil {
		t.Fatal(err)
	}
	if c.MessageCount != 4 || len(msgs) != 4 || msgs[3].Role != "assistant" {
		t.Fatalf("conversation %+v with %d messages, want 4", c, len(msgs))
	}
	// Another key still cannot read it.
	if _, _, err := h.g.Conversation(ctx, "k2", resp.ConversationID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("other key: err = %v", err)
	}
}

func TestWriteBehindCloseCommitsQueuedTurnsThenWritesThrough(t *testing.T) {
	h, d := gatedHarness(t)
	h.a.on("m", step{text: "ok"})
	ctx := context.Background()
	var ids []string
	for i := range 20 {
		resp, err := h.g.Complete(ctx, Scope{Owner: "k"}, userReq(fmt.Sprintf("question %d", i), "a/m"))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, resp.ConversationID)
	}
	closed := make(chan error, 1)
	go func() { closed <- h.g.Close(ctx) }()
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) before the queued turns could be committed", err)
	case <-time.After(30 * time.Millisecond):
	}
	close(d.gate)
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if _, err := h.store.Get(ctx, store.Conversations, id); err != nil {
			t.Fatalf("conversation %s lost at Close: %v", id, err)
		}
	}
	// After Close a turn is written before the answer returns.
	resp, err := h.g.Complete(ctx, Scope{Owner: "k"}, userReq("late", "a/m"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.store.Get(ctx, store.Conversations, resp.ConversationID); err != nil {
		t.Fatalf("turn after Close not written through: %v", err)
	}
}

// TestWriteBehindKeepsEveryTurnUnderConcurrency: many callers, several conversations each
// continued in turn; every turn is stored exactly once and in order.
func TestWriteBehindKeepsEveryTurnUnderConcurrency(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.ConversationWrites = WriteBehind; o.WriteBehindQueue = 4 })
	h.a.on("m", step{text: "answer"})
	ctx := context.Background()
	const convs, turns = 16, 5
	ids := make([]string, convs)
	var wg sync.WaitGroup
	errs := make(chan error, convs)
	for c := range convs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for turn := range turns {
				req := userReq(fmt.Sprintf("c%d t%d", c, turn), "a/m")
				req.ConversationID = ids[c]
				resp, err := h.g.Complete(ctx, Scope{Owner: "k"}, req)
				if err != nil {
					errs <- err
					return
				}
				ids[c] = resp.ConversationID
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if err := h.g.Close(ctx); err != nil {
		t.Fatal(err)
	}
	for c, id := range ids {
		_, msgs, err := h.g.Conversation(ctx, "k", id)
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) != 2*turns {
			t.Fatalf("conversation %d: %d messages, want %d", c, len(msgs), 2*turns)
		}
		for turn := range turns {
			if got, want := msgs[2*turn].Content[0].Text, fmt.Sprintf("c%d t%d", c, turn); got != want {
				t.Fatalf("conversation %d message %d = %q, want %q", c, 2*turn, got, want)
			}
		}
	}
}

// TestTurnWriterIsolatesAFailingTurn: a turn that cannot be written does not take the
// turns committed with it down.
func TestTurnWriterIsolatesAFailingTurn(t *testing.T) {
	st := memstore.New()
	var logged strings.Builder
	w := newTurnWriter(st, 16, slogTo(&logged))
	ctx := context.Background()
	put := func(key string) func(context.Context, store.Tx) error {
		return func(ctx context.Context, tx store.Tx) error {
			return tx.Put(ctx, store.Conversations, key, []byte(`{}`))
		}
	}
	// Hold the writer on a first turn so the next three are committed as one batch.
	gate := make(chan struct{})
	w.enqueue(ctx, turnJob{convID: "first", apply: func(ctx context.Context, tx store.Tx) error {
		<-gate
		return put("first")(ctx, tx)
	}})
	w.enqueue(ctx, turnJob{convID: "good-1", apply: put("good-1")})
	w.enqueue(ctx, turnJob{convID: "bad", apply: func(context.Context, store.Tx) error { return errors.New("disk on fire") }})
	w.enqueue(ctx, turnJob{convID: "good-2", apply: put("good-2")})
	close(gate)
	if err := w.close(ctx); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"first", "good-1", "good-2"} {
		if _, err := st.Get(ctx, store.Conversations, k); err != nil {
			t.Errorf("%s: %v", k, err)
		}
	}
	if !strings.Contains(logged.String(), "disk on fire") || !strings.Contains(logged.String(), "conversation=bad") {
		t.Fatalf("failure not logged: %s", logged.String())
	}
	// Nothing is left pending, so readers never hang on a failed turn.
	if err := w.await(ctx, "bad"); err != nil {
		t.Fatal(err)
	}
	if err := w.enqueue(ctx, turnJob{convID: "late", apply: put("late")}); !errors.Is(err, errWriterClosed) {
		t.Fatalf("enqueue after close: %v", err)
	}
}

// slogTo is a logger writing text lines to b (safe for the writer's goroutine).
func slogTo(b *strings.Builder) *slog.Logger {
	return slog.New(slog.NewTextHandler(&lockedWriter{b: b}, nil))
}

type lockedWriter struct {
	mu sync.Mutex
	b  *strings.Builder
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// TestConversationIDsAreTimeOrdered: new conversations get version-7 UUIDs in increasing
// order, so their store keys are appended rather than scattered.
func TestConversationIDsAreTimeOrdered(t *testing.T) {
	h := newHarness(t, nil)
	h.a.on("m", step{text: "ok"})
	prev := ""
	for i := range 50 {
		resp, err := h.g.Complete(context.Background(), Scope{}, userReq(fmt.Sprint("q", i), "a/m"))
		if err != nil {
			t.Fatal(err)
		}
		id, err := uuid.Parse(resp.ConversationID)
		if err != nil || id.Version() != 7 {
			t.Fatalf("conversationId %q: version %v, err %v", resp.ConversationID, id.Version(), err)
		}
		if resp.ConversationID <= prev {
			t.Fatalf("conversationId %s not after %s", resp.ConversationID, prev)
		}
		prev = resp.ConversationID
	}
}
