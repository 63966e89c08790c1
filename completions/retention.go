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

// conversationExpired reports whether c is past its retention at now, or being swept (a
// sweep marked it): either way it is not found, and a turn on it is not saved.
func (g *Gateway) conversationExpired(c *Conversation, now time.Time) bool {
	return c.Swept || expiredAt(c.lastUse(), retention(g.opts.ConversationRetention), now)
}

// openAIConversationExpired reports whether c is past its retention at now, or being swept.
func (g *Gateway) openAIConversationExpired(c *conversationRecord, now time.Time) bool {
	return c.Swept || expiredAt(c.lastUse(), retention(g.opts.OpenAIConversationRetention), now)
}

// putConversationRecord writes rec under id as used now: for the writes that count as a
// use (created, answered on, items added or deleted, metadata updated).
func (g *Gateway) putConversationRecord(ctx context.Context, tx store.Tx, id string, rec *conversationRecord) error {
	rec.UsedAt = g.opts.Now().UTC()
	return store.PutJSON(ctx, tx, store.OpenAIConversations, id, rec)
}

// putConversationLease writes rec under id keeping its last use: taking, renewing or
// releasing a request's lease is not a use (a request that fails adds nothing).
func putConversationLease(ctx context.Context, tx store.Tx, id string, rec *conversationRecord) error {
	return store.PutJSON(ctx, tx, store.OpenAIConversations, id, rec)
}

// SweepConversations deletes the native conversations whose last turn is older than
// Options.ConversationRetention at now, with their messages and index entries, and returns
// how many it deleted. Reads already answer ErrNotFound for them; the sweep frees their
// room. It reads retentionPage conversations at a time and deletes in transactions of at
// most retentionPage records (many small conversations share one; a larger one takes
// several, its messages first), each checking again that its conversations are still
// expired, so that sweeps running at once on replicas of one PostgreSQL store, or a sweep
// stopped half way and run again, delete each conversation once and nothing else. It
// stops when ctx ends.
func (g *Gateway) SweepConversations(ctx context.Context, now time.Time) (int, error) {
	if g.opts.Store == nil || retention(g.opts.ConversationRetention) < 0 {
		return 0, nil
	}
	n, err := g.sweep(ctx, sweepKind{
		records: store.Conversations,
		deps:    []store.Collection{store.Messages},
		expired: func(v []byte) bool {
			var c Conversation
			return json.Unmarshal(v, &c) == nil && g.conversationExpired(&c, now)
		},
		still: func(ctx context.Context, tx store.Tx, id string) (func() error, error) {
			c, err := store.GetJSON[Conversation](ctx, tx, store.Conversations, id)
			if errors.Is(err, store.ErrNotFound) {
				return nil, nil
			}
			if err != nil || !g.conversationExpired(&c, now) {
				return nil, err
			}
			return func() error {
				if err := tx.Delete(ctx, store.Conversations, id); err != nil {
					return err
				}
				return store.DeleteOwned(ctx, tx, c.ref())
			}, nil
		},
		mark: func(ctx context.Context, tx store.Tx, id string) error {
			c, err := store.GetJSON[Conversation](ctx, tx, store.Conversations, id)
			if err != nil {
				return err
			}
			c.Swept = true
			return store.PutJSON(ctx, tx, store.Conversations, id, c)
		},
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
	n, err := g.sweep(ctx, sweepKind{
		records: store.OpenAIConversations,
		deps:    []store.Collection{store.OpenAIConversationItems, store.OpenAIConversationItemIDs},
		expired: func(v []byte) bool {
			var rec conversationRecord
			return json.Unmarshal(v, &rec) == nil && g.openAIConversationExpired(&rec, now) && !rec.locked(now)
		},
		still: func(ctx context.Context, tx store.Tx, id string) (func() error, error) {
			rec, err := store.GetJSON[conversationRecord](ctx, tx, store.OpenAIConversations, id)
			if errors.Is(err, store.ErrNotFound) {
				return nil, nil
			}
			if err != nil || !g.openAIConversationExpired(&rec, now) || rec.locked(now) {
				return nil, err
			}
			return func() error { return tx.Delete(ctx, store.OpenAIConversations, id) }, nil
		},
		mark: func(ctx context.Context, tx store.Tx, id string) error {
			rec, err := store.GetJSON[conversationRecord](ctx, tx, store.OpenAIConversations, id)
			if err != nil {
				return err
			}
			rec.Swept = true
			return putConversationLease(ctx, tx, id, &rec)
		},
	})
	if err != nil {
		return n, fmt.Errorf("completions: sweep OpenAI conversations: %w", err)
	}
	return n, nil
}

// sweepKind describes a kind of record a retention sweep deletes with the records that
// hang off it.
type sweepKind struct {
	// records holds the records, keyed by id.
	records store.Collection
	// deps hold the records' dependent records, keyed id/….
	deps []store.Collection
	// expired tells from a listed record whether it is past its time.
	expired func(value []byte) bool
	// still reads record id again in tx: nil when it is gone or no longer expired, else
	// the function that deletes it (and its index entries) in tx.
	still func(ctx context.Context, tx store.Tx, id string) (func() error, error)
	// mark marks record id, which still found expired in tx, as being swept: from then on
	// it is expired whatever the clock of whoever reads or writes it (a replica's clock
	// behind the sweep's), so no partly deleted record is ever read, written or revived.
	mark func(ctx context.Context, tx store.Tx, id string) error
}

// sweep walks k.records retentionPage at a time and deletes the expired ones, returning
// how many it deleted.
func (g *Gateway) sweep(ctx context.Context, k sweepKind) (int, error) {
	deleted := 0
	for after := ""; ; {
		if err := ctx.Err(); err != nil {
			return deleted, err
		}
		page, err := g.opts.Store.List(ctx, k.records, store.ListOptions{After: after, Limit: retentionPage})
		if err != nil {
			return deleted, err
		}
		var ids []string
		for _, e := range page {
			if k.expired(e.Value) {
				ids = append(ids, e.Key)
			}
		}
		for len(ids) > 0 {
			if err := ctx.Err(); err != nil {
				return deleted, err
			}
			used, n, big, err := g.deleteSmall(ctx, k, ids)
			if err != nil {
				return deleted, err
			}
			deleted += n
			ids = ids[used:]
			if big != "" {
				switch err := g.deleteLarge(ctx, k, big); {
				case errors.Is(err, errKept):
				case err != nil:
					return deleted, fmt.Errorf("%s: %w", big, err)
				default:
					deleted++
				}
			}
		}
		if len(page) < retentionPage {
			return deleted, nil
		}
		after = page[len(page)-1].Key
	}
}

// deleteSmall deletes, in one transaction of at most retentionPage deletions, the expired
// records at the front of ids whose dependent records fit, and returns how many ids it
// dealt with (used), how many records it deleted, and big: the next id when its records
// alone do not fit in a transaction (used counts it; deleteLarge deletes it).
func (g *Gateway) deleteSmall(ctx context.Context, k sweepKind, ids []string) (used, deleted int, big string, err error) {
	err = g.opts.Store.Update(ctx, func(tx store.Tx) error {
		used, deleted, big = 0, 0, "" // the driver may run this more than once
		room := retentionPage
		for _, id := range ids {
			drop, err := k.still(ctx, tx, id)
			if err != nil {
				return err
			}
			if drop == nil {
				used++
				continue
			}
			var keys []store.Entry // Key: the dependent's key, Value: its collection
			for _, c := range k.deps {
				page, err := tx.List(ctx, c, store.ListOptions{Prefix: id + "/", Limit: room})
				if err != nil {
					return err
				}
				for _, e := range page {
					keys = append(keys, store.Entry{Key: e.Key, Value: []byte(c)})
				}
			}
			if len(keys)+2 > room { // the record and an index entry
				if room == retentionPage {
					used, big = used+1, id
				}
				return nil
			}
			for _, e := range keys {
				if err := tx.Delete(ctx, store.Collection(e.Value), e.Key); err != nil {
					return err
				}
			}
			if err := drop(); err != nil {
				return err
			}
			room -= len(keys) + 2
			used++
			deleted++
		}
		return nil
	})
	return used, deleted, big, err
}

// errKept says deleteLarge found the record no longer expired (used meanwhile) or already
// gone: nothing more is deleted and it is not counted.
var errKept = errors.New("completions: record kept")

// deleteLarge deletes record id of k whose dependent records do not fit in one
// transaction: it marks the record as being swept first (k.mark), in a transaction that
// checks it is still expired, then deletes its dependent records, at most retentionPage
// per transaction, each checking again, then the record itself. A sweep stopped half way
// leaves the marked record for the next one to find; it is not found, and not written,
// meanwhile.
func (g *Gateway) deleteLarge(ctx context.Context, k sweepKind, id string) error {
	err := g.opts.Store.Update(ctx, func(tx store.Tx) error {
		drop, err := k.still(ctx, tx, id)
		if err != nil {
			return err
		}
		if drop == nil {
			return errKept
		}
		return k.mark(ctx, tx, id)
	})
	if err != nil {
		return err
	}
	for _, c := range k.deps {
		for more := true; more; {
			if err := ctx.Err(); err != nil {
				return err
			}
			err := g.opts.Store.Update(ctx, func(tx store.Tx) error {
				more = false
				drop, err := k.still(ctx, tx, id)
				if err != nil {
					return err
				}
				if drop == nil {
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
		}
	}
	return g.opts.Store.Update(ctx, func(tx store.Tx) error {
		drop, err := k.still(ctx, tx, id)
		if err != nil {
			return err
		}
		if drop == nil {
			return errKept
		}
		return drop()
	})
}
