package completions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/switchyard-ai/switchyard/store"
)

// conversationKind names conversations in the store's owner index.
const conversationKind = "conversation"

// ListOptions selects one page of the caller's conversations, newest first by creation
// time. Conversations have no status: a Status filter is a *ValidationError.
type ListOptions = store.ListFilter

// ConversationSummary is a conversation in a listing or a lookup: what it is, without
// its messages.
type ConversationSummary struct {
	// ID is the conversationId to continue it with.
	ID string `json:"id"`
	// Object is "conversation".
	Object string `json:"object"`
	// Title is the conversationTitle made from its first user message.
	Title string `json:"title"`
	// CreatedAt and UpdatedAt are when its first and its latest turn were saved.
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	// MessageCount counts its stored messages (requests' and replies').
	MessageCount int `json:"message_count"`
}

// ConversationList is a page of conversations, newest first.
type ConversationList struct {
	// Data holds the conversations of the page.
	Data []ConversationSummary `json:"data"`
	// NextCursor, when present, fetches the next page (pass it as cursor); absent on the
	// last page.
	NextCursor string `json:"next_cursor,omitempty"`
}

// MessagePage is a page of a conversation's messages, oldest first.
type MessagePage struct {
	// ConversationID is the conversation.
	ConversationID string `json:"conversation_id"`
	// Data holds the messages of the page in order.
	Data []StoredMessage `json:"data"`
	// NextCursor, when present, fetches the next page; absent on the last page.
	NextCursor string `json:"next_cursor,omitempty"`
}

// Deletion is the answer to a delete.
type Deletion struct {
	// ID is the deleted conversation's id.
	ID string `json:"id"`
	// Object is "conversation".
	Object string `json:"object"`
	// Deleted is always true (a failed delete is an error).
	Deleted bool `json:"deleted"`
	// Messages counts the messages deleted with it.
	Messages int `json:"messages"`
}

func (c *Conversation) ref() store.OwnedRef {
	return store.OwnedRef{Kind: conversationKind, Owner: c.Owner, Created: c.Created, ID: c.ID}
}

func (c *Conversation) summary() ConversationSummary {
	return ConversationSummary{ID: c.ID, Object: conversationKind, Title: c.Title, CreatedAt: c.Created,
		UpdatedAt: c.Updated, MessageCount: c.MessageCount}
}

// Summary is the listing view of c.
func (c *Conversation) Summary() ConversationSummary { return c.summary() }

// ListConversations returns one page of owner's conversations, newest first, in the
// creation-time window of opts. With write-behind a conversation appears once its first
// turn is committed. A bad option is a *ValidationError naming it (status, limit, cursor,
// created_after).
func (g *Gateway) ListConversations(ctx context.Context, owner string, opts ListOptions) (ConversationList, error) {
	if len(opts.Status) > 0 {
		return ConversationList{}, invalid("status", "conversations have no status; leave it out")
	}
	if g.opts.Store == nil {
		if err := opts.Query(conversationKind, owner).Check(); err != nil {
			return ConversationList{}, listError(err)
		}
		return ConversationList{Data: []ConversationSummary{}}, nil
	}
	err := g.indexed.Ensure(ctx, g.opts.Store, conversationKind, store.Conversations, func(e store.Entry) (store.OwnedRef, bool) {
		var c Conversation
		if json.Unmarshal(e.Value, &c) != nil || c.ID != e.Key {
			return store.OwnedRef{}, false
		}
		return c.ref(), true
	})
	if err != nil {
		return ConversationList{}, fmt.Errorf("completions: %w", err)
	}
	now := g.opts.Now()
	items, next, err := store.ListOwned(ctx, g.opts.Store, opts.Query(conversationKind, owner), func(id string) (ConversationSummary, bool, error) {
		c, err := store.GetJSON[Conversation](ctx, g.opts.Store, store.Conversations, id)
		if errors.Is(err, store.ErrNotFound) || (err == nil && (c.Owner != owner || g.conversationExpired(&c, now))) {
			return ConversationSummary{}, false, nil
		}
		if err != nil {
			return ConversationSummary{}, false, err
		}
		return c.summary(), true, nil
	})
	if err != nil {
		return ConversationList{}, listError(err)
	}
	return ConversationList{Data: items, NextCursor: next}, nil
}

func listError(err error) error {
	var qe *store.QueryError
	if errors.As(err, &qe) {
		return invalid(qe.Field, "%s", qe.Message)
	}
	return fmt.Errorf("completions: list conversations: %w", err)
}

// Messages returns one page of the messages of owner's conversation id, oldest first:
// limit 1 to store.MaxPageLimit (0 means store.DefaultPageLimit), cursor "" or the
// NextCursor of the previous page. An unknown id, or another owner's, is ErrNotFound.
func (g *Gateway) Messages(ctx context.Context, owner, id string, limit int, cursor string) (MessagePage, error) {
	id = canonicalID(id)
	if limit < 0 || limit > store.MaxPageLimit {
		return MessagePage{}, invalid("limit", "must be 1-%d, got %d", store.MaxPageLimit, limit)
	}
	if limit == 0 {
		limit = store.DefaultPageLimit
	}
	from := 0
	if cursor != "" {
		n, err := strconv.Atoi(cursor)
		if err != nil || n < 1 {
			return MessagePage{}, invalid("cursor", "is not a cursor this server returned (pass next_cursor of the previous page unchanged)")
		}
		from = n
	}
	if _, err := g.conversation(ctx, owner, id); err != nil {
		return MessagePage{}, err
	}
	opts := store.ListOptions{Prefix: id + "/", Limit: limit + 1}
	if from > 0 {
		opts.After = messageKey(id, from-1)
	}
	entries, err := g.opts.Store.List(ctx, store.Messages, opts)
	if err != nil {
		return MessagePage{}, fmt.Errorf("completions: read messages of %s: %w", id, err)
	}
	page := MessagePage{ConversationID: id, Data: make([]StoredMessage, 0, min(len(entries), limit))}
	for i, e := range entries {
		if i == limit {
			page.NextCursor = strconv.Itoa(page.Data[len(page.Data)-1].Seq + 1)
			break
		}
		var m StoredMessage
		if err := json.Unmarshal(e.Value, &m); err != nil {
			return MessagePage{}, fmt.Errorf("completions: decode message %s: %w", e.Key, err)
		}
		page.Data = append(page.Data, m)
	}
	return page, nil
}

// canonicalID is a conversation id as it is stored: UUIDs compare case-insensitively, and
// the gateway writes them in lower case.
func canonicalID(id string) string { return strings.ToLower(id) }

// conversation reads owner's conversation id (or one of a key below owner: store.Owns)
// once its queued turns are committed.
func (g *Gateway) conversation(ctx context.Context, owner, id string) (Conversation, error) {
	return g.conversationWhere(ctx, id, func(o string) bool { return store.Owns(owner, o) })
}

// conversationWhere is conversation for the owners may accepts.
func (g *Gateway) conversationWhere(ctx context.Context, id string, may func(owner string) bool) (Conversation, error) {
	if g.opts.Store == nil || !isUUID(id) {
		return Conversation{}, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	if g.writer != nil {
		if err := g.writer.await(ctx, id); err != nil {
			return Conversation{}, fmt.Errorf("completions: wait for conversation %s: %w", id, err)
		}
	}
	c, err := store.GetJSON[Conversation](ctx, g.opts.Store, store.Conversations, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && (!may(c.Owner) || g.conversationExpired(&c, g.opts.Now()))) {
		return Conversation{}, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	if err != nil {
		return Conversation{}, fmt.Errorf("completions: read conversation %s: %w", id, err)
	}
	return c, nil
}

// DeleteConversation deletes owner's conversation id with all its messages and its index
// entry in one transaction, after its queued write-behind turns are committed. A turn
// still being generated for it when it is deleted is not saved (continuing a deleted
// conversation answers 404). An unknown id, or another owner's, is ErrNotFound.
func (g *Gateway) DeleteConversation(ctx context.Context, owner, id string) (Deletion, error) {
	id = canonicalID(id)
	if _, err := g.conversation(ctx, owner, id); err != nil {
		return Deletion{}, err
	}
	n := 0
	err := g.opts.Store.Update(ctx, func(tx store.Tx) error {
		n = 0
		c, err := store.GetJSON[Conversation](ctx, tx, store.Conversations, id)
		if errors.Is(err, store.ErrNotFound) || (err == nil && c.Owner != owner) {
			return fmt.Errorf("%w: %s", ErrNotFound, id)
		}
		if err != nil {
			return err
		}
		entries, err := tx.List(ctx, store.Messages, store.ListOptions{Prefix: id + "/"})
		if err != nil {
			return err
		}
		for _, e := range entries {
			if err := tx.Delete(ctx, store.Messages, e.Key); err != nil {
				return err
			}
			n++
		}
		if err := tx.Delete(ctx, store.Conversations, id); err != nil {
			return err
		}
		return store.DeleteOwned(ctx, tx, c.ref())
	})
	if errors.Is(err, ErrNotFound) {
		return Deletion{}, err
	}
	if err != nil {
		return Deletion{}, fmt.Errorf("completions: delete conversation %s: %w", id, err)
	}
	return Deletion{ID: id, Object: conversationKind, Deleted: true, Messages: n}, nil
}
