package completions

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// fullDiskDriver is a memstore whose transactions fail while full is set, as a database on
// a full disk does.
type fullDiskDriver struct {
	*memstore.Driver
	full atomic.Bool
}

var errDiskFull = errors.New("write switchyard.db: no space left on device")

func (d *fullDiskDriver) Update(ctx context.Context, fn func(tx store.Tx) error) error {
	if d.full.Load() {
		return errDiskFull
	}
	return d.Driver.Update(ctx, fn)
}

// TestAnswerKeptWhenTheTurnCannotBeSaved: an answer generated and billed is returned even
// when the store cannot save its turn, streamed or not, marked conversationNotSaved; a new
// conversation's id is not handed out (it was never created), an existing one's is, and it
// keeps the turns it had. The cause is logged, not returned.
func TestAnswerKeptWhenTheTurnCannotBeSaved(t *testing.T) {
	d := &fullDiskDriver{Driver: memstore.NewDriver()}
	var logged strings.Builder
	h := newHarness(t, func(o *Options) {
		o.Store = store.New(d)
		o.Logger = slog.New(slog.NewTextHandler(&logged, nil))
	})
	h.a.on("m", step{text: "The answer is 42", usage: providers.Usage{PromptTokens: 10, CompletionTokens: 5}})
	ctx := context.Background()

	first, err := h.g.Complete(ctx, Scope{Owner: "o"}, userReq("Question?", "a/m"))
	if err != nil || first.ConversationID == "" || first.ConversationNotSaved != "" {
		t.Fatalf("with room on disk: %+v, %v", first, err)
	}

	d.full.Store(true)
	r, err := h.g.Complete(ctx, Scope{Owner: "o"}, userReq("Another?", "a/m"))
	if err != nil {
		t.Fatalf("new conversation, disk full: %v", err)
	}
	if r.Text() != "The answer is 42" || r.ConversationNotSaved == "" || r.ConversationID != "" || r.ConversationTitle != "" || r.Usage.TotalTokens != 15 {
		t.Errorf("new conversation, disk full: %+v", r)
	}
	if strings.Contains(r.ConversationNotSaved, "no space") {
		t.Errorf("the store's error reached the caller: %q", r.ConversationNotSaved)
	}

	req := userReq("Follow-up?", "a/m")
	req.ConversationID = first.ConversationID
	r, err = h.g.Complete(ctx, Scope{Owner: "o"}, req)
	if err != nil || r.ConversationNotSaved == "" || r.ConversationID != first.ConversationID {
		t.Errorf("existing conversation, disk full: %+v, %v", r, err)
	}

	st, err := h.g.Stream(ctx, Scope{Owner: "o"}, req)
	if err != nil {
		t.Fatal(err)
	}
	frags, err := drain(t, st)
	if err != nil || strings.Join(frags, "") != "The answer is 42" {
		t.Fatalf("streamed, disk full: %q, %v", frags, err)
	}
	if f := st.Response(); f == nil || f.ConversationNotSaved == "" || f.ConversationID != first.ConversationID {
		t.Errorf("streamed, disk full: final %+v", f)
	}

	d.full.Store(false)
	if _, msgs, err := h.g.Conversation(ctx, "o", first.ConversationID); err != nil || len(msgs) != 2 {
		t.Errorf("the conversation holds %d messages (%v), want its first turn's 2", len(msgs), err)
	}
	if n := strings.Count(logged.String(), "no space left on device"); n != 3 {
		t.Errorf("the cause was logged %d times, want 3:\n%s", n, logged.String())
	}
}
