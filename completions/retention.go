package completions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/switchyard-ai/switchyard/store"
)

// DefaultConversationRetention is what a zero Options.ConversationRetention and
// Options.OpenAIConversationRetention mean: keep conversations until they are deleted, as
// OpenAI keeps its Conversations API's conversations and as a chat history is expected to
// stay. A negative duration, this one included, keeps them forever.
const DefaultConversationRetention time.Duration = -1

// retentionPage is how many records a retention sweep reads, or deletes in one transaction,
// at a time: each transaction stays short, so requests writing meanwhile barely wait.
const retentionPage = 256

// retention resolves an Options retention: 0 is the default; the result is positive, or
// negative for forever.
func retention(d time.Duration) time.Duration {
	if d == 0 {
		return DefaultConversationRetention
	}
	return d
}

// expiredAt reports whether a record last used at lastUse is past keep at now.
func expiredAt(lastUse time.Time, keep time.Duration, now time.Time) bool {
	return keep > 0 && !lastUse.IsZero() && !now.Before(lastUse.Add(keep))
}

// lastUse is when the conversation's last turn was saved (its creation before any).
func (c *Conversation) lastUse() time.Time {
	if c.Updated.IsZero() {
		return c.Created
	}
	return c.Updated
}

// lastUse is the conversation's last write (its creation for records kept before UsedAt).
func (c *conversationRecord) lastUse() time.Time {
	if c.UsedAt.IsZero() {
		return time.Unix(c.Conversation.CreatedAt, 0)
	}
	return c.UsedAt
}

func (g *Gateway) conversationExpired(c *Conversation, now time.Time) bool {
	return expiredAt(c.lastUse(), retention(g.opts.ConversationRetention), now)
}

func (g *Gateway) openAIConversationExpired(c *conversationRecord, now time.Time) bool {
	return expiredAt(c.lastUse(), retention(g.opts.OpenAIConversationRetention), now)
}

// putConversationRecord writes rec under id as used now.
func (g *Gateway) putConversationRecord(ctx context.Context, tx store.Tx, id string, rec *conversationRecord) error {
	rec.UsedAt = g.opts.Now().UTC()
	return store.PutJSON(ctx, tx, store.OpenAIConversations, id, rec)
}

// SweepConversations deletes the native conversations whose last turn is older than
// Options.ConversationRetention at now, with their messages and index entries, and returns
// how many it deleted. Reads already answer ErrNotFound for them; the sweep frees their
// room. It reads retentionPage conversations at a time and deletes in transactions of at most
// retentionPage records, each checking again that its conversation is still expired, so that
// sweeps running at once on replicas of one PostgreSQL store, or a sweep stopped half way
// and run again, delete each conversation once and nothing else. It stops when ctx ends.
func (g *Gateway) SweepConversations(ctx context.Context, now time.Time) (int, error) {
	if g.opts.Store == nil || retention(g.opts.ConversationRetention) < 0 {
		return 0, nil
	}
	still := func(tx store.Tx, id string) (*Conversation, error) {
		c, err := store.GetJSON[Conversation](ctx, tx, store.Conversations, id)
		if errors.Is(err, store.ErrNotFound) {
			return nil, nil
		}
		if err != nil || !g.conversationExpired(&c, now) {
			return nil, err
		}
		return &c, nil
	}
	n, err := g.sweep(ctx, store.Conversations, func(e store.Entry) bool {
		var c Conversation
		return json.Unmarshal(e.Value, &c) == nil && g.conversationExpired(&c, now)
	}, func(id string) error {
		return g.deleteExpired(ctx, id, []store.Collection{store.Messages}, func(tx store.Tx) (bool, error) {
			c, err := still(tx, id)
			return c != nil, err
		}, func(tx store.Tx) (bool, error) {
			c, err := still(tx, id)
			if c == nil || err != nil {
				return false, err
			}
			if err := tx.Delete(ctx, store.Conversations, id); err != nil {
				return false, err
			}
			return true, store.DeleteOwned(ctx, tx, c.ref())
		})
	})
	if err != nil {
		return n, fmt.Errorf("completions: sweep conversations: %w", err)
	}
	return n, nil
}

// SweepOpenAIConversations deletes the OpenAI-style conversations unused for longer than
// Options.OpenAIConversationRetention at now, with their items, and returns how many it
// deleted; a conversation a request holds (its lease) is left for the next sweep. It works
// as SweepConversations does: bounded transactions, idempotent, stops when ctx ends.
func (g *Gateway) SweepOpenAIConversations(ctx context.Context, now time.Time) (int, error) {
	if g.opts.Store == nil || retention(g.opts.OpenAIConversationRetention) < 0 {
		return 0, nil
	}
	still := func(tx store.Tx, id string) (bool, error) {
		rec, err := store.GetJSON[conversationRecord](ctx, tx, store.OpenAIConversations, id)
		if errors.Is(err, store.ErrNotFound) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		return g.openAIConversationExpired(&rec, now) && !rec.locked(now), nil
	}
	n, err := g.sweep(ctx, store.OpenAIConversations, func(e store.Entry) bool {
		var rec conversationRecord
		return json.Unmarshal(e.Value, &rec) == nil && g.openAIConversationExpired(&rec, now) && !rec.locked(now)
	}, func(id string) error {
		return g.deleteExpired(ctx, id, []store.Collection{store.OpenAIConversationItems, store.OpenAIConversationItemIDs},
			func(tx store.Tx) (bool, error) { return still(tx, id) },
			func(tx store.Tx) (bool, error) {
				ok, err := still(tx, id)
				if !ok || err != nil {
					return false, err
				}
				return true, tx.Delete(ctx, store.OpenAIConversations, id)
			})
	})
	if err != nil {
		return n, fmt.Errorf("completions: sweep OpenAI conversations: %w", err)
	}
	return n, nil
}

// errKept says deleteExpired found the conversation no longer expired (used meanwhile) or
// already gone: nothing more is deleted and it is not counted.
var errKept = errors.New("completions: conversation kept")

// sweep walks c's records retentionPage at a time and calls del for each one expired says is
// past its time, counting those del deleted (errKept: not counted).
func (g *Gateway) sweep(ctx context.Context, c store.Collection, expired func(store.Entry) bool, del func(id string) error) (int, error) {
	deleted := 0
	for after := ""; ; {
		if err := ctx.Err(); err != nil {
			return deleted, err
		}
		page, err := g.opts.Store.List(ctx, c, store.ListOptions{After: after, Limit: retentionPage})
		if err != nil {
			return deleted, err
		}
		for _, e := range page {
			if !expired(e) {
				continue
			}
			if err := ctx.Err(); err != nil {
				return deleted, err
			}
			switch err := del(e.Key); {
			case errors.Is(err, errKept):
			case err != nil:
				return deleted, fmt.Errorf("%s: %w", e.Key, err)
			default:
				deleted++
			}
		}
		if len(page) < retentionPage {
			return deleted, nil
		}
		after = page[len(page)-1].Key
	}
}

// deleteExpired deletes the records of conversation id in deps (keyed id/…), at most
// retentionPage per transaction, each transaction first checking still; then, in a last
// transaction, the conversation itself with last (which checks again). The dependent
// records go first so that a sweep stopped half way leaves the conversation for the next
// one to find (it is not found on read meanwhile, being expired).
func (g *Gateway) deleteExpired(ctx context.Context, id string, deps []store.Collection, still func(store.Tx) (bool, error), last func(store.Tx) (bool, error)) error {
	for _, c := range deps {
		for {
			if err := ctx.Err(); err != nil {
				return err
			}
			more := false
			err := g.opts.Store.Update(ctx, func(tx store.Tx) error {
				more = false
				ok, err := still(tx)
				if err != nil {
					return err
				}
				if !ok {
					return errKept
				}
				page, err := tx.List(ctx, c, store.ListOptions{Prefix: id + "/", Limit: retentionPage})
				if err != nil {
					return err
				}
				for _, e := range page {
					if err := tx.Delete(ctx, c, e.Key); err != nil {
						return err
					}
				}
				more = len(page) == retentionPage
				return nil
			})
			if err != nil {
				return err
			}
			if !more {
				break
			}
		}
	}
	return g.opts.Store.Update(ctx, func(tx store.Tx) error {
		ok, err := last(tx)
		if err == nil && !ok {
			return errKept
		}
		return err
	})
}
