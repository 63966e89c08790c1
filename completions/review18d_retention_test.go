package completions

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// review18dDriver is a memstore driver that calls after once each Update has returned.
type review18dDriver struct {
	*memstore.Driver
	mu    sync.Mutex
	after func()
}

func (d *review18dDriver) Update(ctx context.Context, fn func(tx store.Tx) error) error {
	err := d.Driver.Update(ctx, fn)
	d.mu.Lock()
	after := d.after
	d.mu.Unlock()
	if after != nil {
		after()
	}
	return err
}

// review18dProvider runs hook (once) inside the upstream call, before answering.
type review18dProvider struct {
	*fakeProvider
	mu   sync.Mutex
	hook func()
}

func (p *review18dProvider) Complete(ctx context.Context, req *providers.Request) (*providers.Response, error) {
	p.mu.Lock()
	hook := p.hook
	p.hook = nil
	p.mu.Unlock()
	if hook != nil {
		hook()
	}
	return p.fakeProvider.Complete(ctx, req)
}

// TestReview18dTurnRevivesPartlySweptConversation: a turn prepared while its native
// conversation was live, and saved once it has expired, must not bring back a conversation
// a sweep has already half deleted (a large conversation goes over several transactions;
// a sweep stopped at shutdown leaves the rest "for the next one to find"). turnUpdate
// does not check the retention, so the turn sets Updated=now on the expired record: the
// next sweep finds it live and keeps it, with its first 256 messages gone for good while
// message_count still counts them.
func TestReview18dTurnRevivesPartlySweptConversation(t *testing.T) {
	ctx := context.Background()
	clock := &settableClock{t: time.Now().UTC()}
	drv := &review18dDriver{Driver: memstore.NewDriver()}
	st := store.New(drv)
	fake := newFake("a")
	fake.on("m", step{text: "Hello."})
	prov := &review18dProvider{fakeProvider: fake}
	h := newHarness(t, func(o *Options) {
		o.Providers = fakeRegistry{"a": prov}
		o.Store = st
		o.Now = clock.now
		o.ConversationRetention = 24 * time.Hour
	})

	// A conversation of 301 messages: more than one sweep transaction deletes.
	first := &Request{Models: []string{"a/m"}}
	for range 300 {
		first.Messages = append(first.Messages, Message{Role: "user", Content: []ContentBlock{{Type: "text", Text: "hi"}}})
	}
	resp, err := h.g.Complete(ctx, Scope{Owner: "alice"}, first)
	if err != nil {
		t.Fatal(err)
	}
	conv := resp.ConversationID
	clock.add(24*time.Hour - time.Minute) // still live: the next turn is accepted

	prov.hook = func() { // while the answer is being generated, the conversation expires and a sweep starts
		clock.add(2 * time.Minute)
		sctx, cancel := context.WithCancel(ctx)
		defer cancel()
		updates := 0
		drv.mu.Lock()
		drv.after = func() {
			updates++
			if updates == 2 { // the first transaction of deleteLarge committed: shutdown
				cancel()
			}
		}
		drv.mu.Unlock()
		_, err := h.g.SweepConversations(sctx, clock.now())
		drv.mu.Lock()
		drv.after = nil
		drv.mu.Unlock()
		if !errors.Is(err, context.Canceled) {
			t.Errorf("sweep: err %v, want context.Canceled", err)
		}
	}
	next := userReq("continue", "a/m")
	next.ConversationID = conv
	late, err := h.g.Complete(ctx, Scope{Owner: "alice"}, next)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(late.ConversationNotSaved, "expired") {
		t.Errorf("a turn refused on an expired conversation says %q", late.ConversationNotSaved)
	}
	// The next sweep (the next hour) is the one that should finish the job.
	clock.add(time.Hour)
	if _, err := h.g.SweepConversations(ctx, clock.now()); err != nil {
		t.Fatal(err)
	}

	c, msgs, err := h.g.Conversation(ctx, "alice", conv)
	if errors.Is(err, ErrNotFound) {
		return // expired and gone: fine
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != c.MessageCount || len(msgs) == 0 || msgs[0].Seq != 0 {
		first := -1
		if len(msgs) > 0 {
			first = msgs[0].Seq
		}
		t.Fatalf("the conversation came back half swept: message_count %d, %d messages kept, the first with seq %d", c.MessageCount, len(msgs), first)
	}
}

// TestReview18dFailedResponseExtendsOpenAIConversation: README and the flag's help count an
// OpenAI-style conversation's retention from its last use — "an answer on it, items added
// or deleted, metadata updated". A /v1/responses request on it that fails (upstream error,
// or refused after ContinueResponse) adds nothing, yet taking and releasing its lease go
// through putConversationRecord, which stamps UsedAt: each failed attempt restarts the
// retention, so a client retrying a broken model keeps a conversation alive for ever.
func TestReview18dFailedResponseExtendsOpenAIConversation(t *testing.T) {
	ctx := context.Background()
	clock := &settableClock{t: time.Now().UTC()}
	h := retentionHarness(t, memstore.New(), clock, -1, 24*time.Hour)
	c, err := h.g.CreateOpenAIConversation(ctx, "alice", []ResponsesItem{userTextItem("hi")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	clock.add(23 * time.Hour)
	var failed ResponsesRequest
	if err := json.Unmarshal([]byte(`{"model":"a/m","conversation":"`+c.ID+`","input":"again"}`), &failed); err != nil {
		t.Fatal(err)
	}
	if err := h.g.ContinueResponse(ctx, "alice", &failed); err != nil {
		t.Fatal(err)
	}
	h.g.ReleaseResponse(ctx, "alice", &failed) // the upstream call failed: no answer, nothing added
	if items, err := h.g.OpenAIConversationItems(ctx, "alice", c.ID); err != nil || len(items) != 1 {
		t.Fatalf("after a failed request: %d items, %v; want the 1 it had", len(items), err)
	}
	clock.add(time.Hour + time.Minute) // 24h01m after its last use (its creation)
	if _, err := h.g.OpenAIConversationOf(ctx, "alice", c.ID); err == nil {
		t.Fatal("a conversation unused (no answer, no items, no metadata) for longer than its retention is still found: the failed request's lease counted as a use")
	}
}
