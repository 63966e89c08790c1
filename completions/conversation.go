package completions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/switchyard-ai/switchyard/store"
)

// MaxTitleLength is the longest conversationTitle, in characters.
const MaxTitleLength = 60

// Conversation is a stored conversation (store.Conversations, keyed by its id). Its
// messages live in store.Messages under "<id>/<seq, 8 digits>".
type Conversation struct {
	ID           string    `json:"id"`
	Owner        string    `json:"owner"`
	Title        string    `json:"title"`
	Created      time.Time `json:"created"`
	Updated      time.Time `json:"updated"`
	MessageCount int       `json:"message_count"`
	// Swept marks a conversation a retention sweep has started deleting (its messages go
	// over several transactions): it is not found and takes no turn from then on.
	Swept bool `json:"swept,omitempty"`
}

// StoredMessage is one message of a stored conversation.
type StoredMessage struct {
	Seq     int            `json:"seq"`
	Role    string         `json:"role"`
	Content []ContentBlock `json:"content"`
	// ID is the responseMessageId of an assistant message.
	ID string `json:"id,omitempty"`
	// Model is the "provider/model" that wrote an assistant message.
	Model   string    `json:"model,omitempty"`
	Created time.Time `json:"created"`
}

// newConversationID returns a time-ordered UUID (version 7): new conversations and their
// messages then land at the end of the store's key order instead of at random places, so a
// commit of many new turns rewrites a few B+tree pages rather than one per turn.
func newConversationID() string {
	id, err := uuid.NewV7()
	if err != nil { // only if the system's random source fails
		return uuid.NewString()
	}
	return id.String()
}

func messageKey(conversationID string, seq int) string {
	return fmt.Sprintf("%s/%08d", conversationID, seq)
}

// Conversation returns the conversation id of owner (or of a key below owner: store.Owns)
// with its messages in order, or an error matching ErrNotFound when it does not exist or
// belongs to someone else.
func (g *Gateway) Conversation(ctx context.Context, owner, id string) (*Conversation, []StoredMessage, error) {
	return g.conversationWithMessages(ctx, canonicalID(id), func(o string) bool { return store.Owns(owner, o) })
}

// scopeConversation is Conversation for a request of scope, which continues the
// conversations Scope.continues says.
func (g *Gateway) scopeConversation(ctx context.Context, scope Scope, id string) (*Conversation, []StoredMessage, error) {
	return g.conversationWithMessages(ctx, canonicalID(id), scope.continues)
}

// conversationWithMessages reads conversation id, when may lets its owner reach it, with
// its messages.
func (g *Gateway) conversationWithMessages(ctx context.Context, id string, may func(owner string) bool) (*Conversation, []StoredMessage, error) {
	c, err := g.conversationWhere(ctx, id, may)
	if err != nil {
		return nil, nil, err
	}
	entries, err := g.opts.Store.List(ctx, store.Messages, store.ListOptions{Prefix: id + "/"})
	if err != nil {
		return nil, nil, fmt.Errorf("completions: read messages of %s: %w", id, err)
	}
	msgs := make([]StoredMessage, 0, len(entries))
	for _, e := range entries {
		var m StoredMessage
		if err := json.Unmarshal(e.Value, &m); err != nil {
			return nil, nil, fmt.Errorf("completions: decode message %s: %w", e.Key, err)
		}
		msgs = append(msgs, m)
	}
	return &c, msgs, nil
}

// saveTurn appends the request's messages and the assistant reply to the conversation,
// creating it when new, all in one transaction: before it returns (WriteThrough) or queued
// for the background writer (WriteBehind).
func (g *Gateway) saveTurn(ctx context.Context, p *plan, reply *Response) error {
	if g.opts.Store == nil || p.convID == "" {
		return nil
	}
	apply := g.turnUpdate(p, reply, g.opts.Now().UTC())
	if g.writer != nil {
		err := g.writer.enqueue(ctx, turnJob{convID: p.convID, apply: apply})
		if !errors.Is(err, errWriterClosed) {
			return err
		}
		// Closed (shutting down): this late turn is written through.
	}
	return g.opts.Store.Update(ctx, func(tx store.Tx) error { return apply(ctx, tx) })
}

// turnUpdate returns the transaction body that saves p's turn. It acts only through tx, so
// it may run more than once.
func (g *Gateway) turnUpdate(p *plan, reply *Response, now time.Time) func(context.Context, store.Tx) error {
	return func(ctx context.Context, tx store.Tx) error {
		var c Conversation
		if p.convNew {
			c = Conversation{ID: p.convID, Owner: p.scope.conversationOwner(), Title: p.convTitle, Created: now}
			if err := store.PutOwned(ctx, tx, c.ref()); err != nil {
				return err
			}
		} else {
			var err error
			c, err = store.GetJSON[Conversation](ctx, tx, store.Conversations, p.convID)
			if err != nil {
				return fmt.Errorf("completions: read conversation %s: %w", p.convID, err)
			}
			// Expired (by the rule reads and the sweep use, at the time of the write): the turn
			// is not saved, as on a deleted conversation. Stamping Updated would revive it,
			// with the messages a sweep has already deleted missing.
			if !p.scope.continues(c.Owner) || g.conversationExpired(&c, g.opts.Now()) {
				return fmt.Errorf("%w: %s", ErrNotFound, p.convID)
			}
		}
		seq := c.MessageCount
		for _, m := range p.req.Messages {
			sm := StoredMessage{Seq: seq, Role: m.Role, Content: m.Content, Created: now}
			if err := store.PutJSON(ctx, tx, store.Messages, messageKey(c.ID, seq), sm); err != nil {
				return err
			}
			seq++
		}
		sm := StoredMessage{Seq: seq, Role: "assistant", Content: reply.Message.Content, ID: reply.ResponseMessageID,
			Model: reply.Provider + "/" + reply.Model, Created: now}
		if err := store.PutJSON(ctx, tx, store.Messages, messageKey(c.ID, seq), sm); err != nil {
			return err
		}
		c.MessageCount = seq + 1
		c.Updated = now
		return store.PutJSON(ctx, tx, store.Conversations, c.ID, c)
	}
}

// Title makes a conversation title from a message's text: whitespace (newlines included)
// collapsed to single spaces, control characters dropped, cut at a word boundary to at most
// MaxTitleLength characters with an ellipsis.
func Title(text string) string {
	text = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) && !unicode.IsSpace(r) {
			return -1
		}
		return r
	}, text)
	s := strings.Join(strings.Fields(text), " ")
	if utf8.RuneCountInString(s) <= MaxTitleLength {
		return s
	}
	r := []rune(s)[:MaxTitleLength-1]
	cut := string(r)
	if i := strings.LastIndexByte(cut, ' '); i >= MaxTitleLength/2 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " ,.;:-") + "…"
}

// titleFor picks the first user message (else the first message) of msgs.
func titleFor(msgs []Message) string {
	for _, m := range msgs {
		if m.Role == "user" {
			if t := Title(m.Text()); t != "" {
				return t
			}
		}
	}
	for _, m := range msgs {
		if t := Title(m.Text()); t != "" {
			return t
		}
	}
	return "New conversation"
}

// notSaved marks resp as an answer whose turn the store could not save (see
// Response.ConversationNotSaved) and logs why.
func (g *Gateway) notSaved(ctx context.Context, p *plan, resp *Response, err error) {
	g.log.ErrorContext(ctx, "completions: the answer is returned but its conversation turn was not saved",
		"conversation", p.convID, "new", p.convNew, "err", err)
	resp.ConversationNotSaved = "the store could not save this turn; the answer is not part of the conversation"
	if errors.Is(err, ErrNotFound) || errors.Is(err, ErrConversationNotFound) {
		// deleted, or past its retention, while the answer was being made
		resp.ConversationNotSaved = "the conversation was deleted or expired while this answer was made; the answer is not part of it"
	}
	if p.convNew {
		resp.ConversationID, resp.ConversationTitle = "", ""
	}
}
