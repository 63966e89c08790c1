package completions

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/switchyard-ai/switchyard/store"
)

// OpenAI's Conversations API: a conversation is a list of items that lives apart from the
// answers; a /v1/responses request naming it (conversation) is answered with its items
// before the request's input, and its input and output items are added to it. The
// OpenAI Agents SDK's conversationId and OpenAIConversationsSession work this way. A
// conversation is kept in the gateway's store until it is deleted (OpenAI keeps them
// without a time limit), or until Options.OpenAIConversationRetention after its last use
// when that is set (see SweepOpenAIConversations); its items are one record each, so an answer adds a record per
// item whatever the conversation's length.

// Bounds of the Conversations API, OpenAI's.
const (
	maxConversationItemsPerCall = 20
	maxMetadataPairs            = 16
	maxMetadataKey              = 64
	maxMetadataValue            = 512
)

// OpenAIConversation is OpenAI's conversation object.
type OpenAIConversation struct {
	ID        string            `json:"id"`
	Object    string            `json:"object"` // "conversation"
	CreatedAt int64             `json:"created_at"`
	Metadata  map[string]string `json:"metadata"`
}

// OpenAIConversationRef names the conversation of a response: {"id": …}.
type OpenAIConversationRef struct {
	ID string `json:"id"`
}

// ErrConversationNotFound means no OpenAI conversation (or item of it) with that id is kept
// for the caller.
var ErrConversationNotFound = errors.New("completions: conversation not found")

// conversationNotFoundError says what was not found, in OpenAI's words.
type conversationNotFoundError struct{ what, id string }

func (e *conversationNotFoundError) Error() string {
	return fmt.Sprintf("completions: %s with id '%s' not found.", e.what, e.id)
}

func (e *conversationNotFoundError) Is(target error) bool { return target == ErrConversationNotFound }

// conversationRecord is a conversation in store.OpenAIConversations.
type conversationRecord struct {
	Owner        string             `json:"owner"`
	Conversation OpenAIConversation `json:"conversation"`
	// NextSeq is the sequence number of the next item.
	NextSeq int `json:"next_seq"`
	// Bytes is the size (JSON) of its items: a conversation may not outgrow
	// StoredResponsesOptions.MaxHistoryBytes.
	Bytes int64 `json:"bytes"`
	// LockID and LockedUntil are the lease of the /v1/responses request being answered
	// on the conversation: another is refused (conversation_locked) until it ends.
	LockID      string    `json:"lock_id,omitempty"`
	LockedUntil time.Time `json:"locked_until,omitzero"`
	// UsedAt is the conversation's last use (created, answered on, items added or deleted,
	// metadata updated; not a request's lease taken or released); its retention counts
	// from it, and a request holding its lease keeps it until the request ends. Records written
	// before it was kept have none: CreatedAt stands for it.
	UsedAt time.Time `json:"used_at,omitzero"`
	// Swept marks a conversation a retention sweep has started deleting: it is not found
	// from then on.
	Swept bool `json:"swept,omitempty"`
}

// locked reports whether another request holds the conversation at now.
func (c *conversationRecord) locked(now time.Time) bool {
	return c.LockID != "" && now.Before(c.LockedUntil)
}

// conversationItemKey is the key of item seq of conversation id: the sequence inverted, so
// that the store's ascending order is newest first (the Conversations API's default order,
// and what an Agents SDK session's pop_item reads).
func conversationItemKey(id string, seq int) string {
	return fmt.Sprintf("%s/%010d", id, 9999999999-seq)
}

// conversationItemIndexKey is the store.OpenAIConversationItemIDs key of item itemID of
// conversation id; its value is the item's sequence number.
func conversationItemIndexKey(id, itemID string) string { return id + "/" + itemID }

// CheckMetadata checks OpenAI's metadata bounds: at most 16 pairs, keys of at most 64
// characters and values of at most 512; field names the field in errors.
func CheckMetadata(field string, m map[string]string) error {
	if len(m) > maxMetadataPairs {
		return invalid(field, "has %d pairs, at most %d are allowed", len(m), maxMetadataPairs)
	}
	for k, v := range m {
		if n := utf8.RuneCountInString(k); n > maxMetadataKey || n == 0 {
			return invalid(field, "key %q must be 1 to %d characters", k, maxMetadataKey)
		}
		if utf8.RuneCountInString(v) > maxMetadataValue {
			return invalid(field+"."+k, "must be at most %d characters", maxMetadataValue)
		}
	}
	return nil
}

// checkConversationItems checks items added to a conversation (field names them): at
// most 20 per call, of the types /v1/responses reads, with no output content (output_text,
// refusal) in a message other than an assistant's.
func checkConversationItems(field string, items []ResponsesItem) error {
	if len(items) > maxConversationItemsPerCall {
		return invalid(field, "has %d items, at most %d may be added at once", len(items), maxConversationItemsPerCall)
	}
	for i, it := range items {
		switch it.Type {
		case "", "message", "function_call", "function_call_output", "custom_tool_call", "custom_tool_call_output", "reasoning":
		default:
			return invalid(fmt.Sprintf("%s[%d].type", field, i), "only message, reasoning, function_call, function_call_output, custom_tool_call and custom_tool_call_output items are supported, got %q", it.Type)
		}
		if (it.Type == "" || it.Type == "message") && it.Role == "" {
			return invalid(fmt.Sprintf("%s[%d].role", field, i), "is required in a message")
		}
		for j, p := range it.Content.Parts {
			if err := checkResponsesPartRole(fmt.Sprintf("%s[%d].content[%d].type", field, i, j), it.Role, p.Type); err != nil {
				return err
			}
		}
	}
	return nil
}

// newConversationObjectID returns a new conversation id: conv_ and 48 hex digits.
func newConversationObjectID() string {
	var b [24]byte
	rand.Read(b[:])
	return "conv_" + hex.EncodeToString(b[:])
}

// ErrConversationLocked means another /v1/responses request is being answered on the
// conversation (OpenAI's conversation_locked): try again when it has ended.
var ErrConversationLocked = errors.New("completions: conversation locked")

func conversationLocked(field, id string) error {
	ve := invalid(field, "Another process is currently operating on conversation '%s'. Please retry in a few seconds.", id)
	ve.Err = ErrConversationLocked
	return ve
}

// maxHistory is the bound of a conversation's or a chain's items (JSON).
func (g *Gateway) maxHistory() int64 {
	if n := g.opts.StoredResponses.MaxHistoryBytes; n > 0 {
		return n
	}
	return DefaultMaxHistoryBytes
}

// CreateOpenAIConversation creates a conversation of owner with its first items (at most
// 20) and metadata.
func (g *Gateway) CreateOpenAIConversation(ctx context.Context, owner string, items []ResponsesItem, metadata map[string]string) (*OpenAIConversation, error) {
	if g.opts.Store == nil {
		return nil, invalid("", "conversations need the gateway's store")
	}
	if err := CheckMetadata("metadata", metadata); err != nil {
		return nil, err
	}
	if err := checkConversationItems("items", items); err != nil {
		return nil, err
	}
	if metadata == nil {
		metadata = map[string]string{}
	}
	c := OpenAIConversation{ID: newConversationObjectID(), Object: "conversation", CreatedAt: g.opts.Now().Unix(), Metadata: metadata}
	err := g.opts.Store.Update(ctx, func(tx store.Tx) error {
		rec := &conversationRecord{Owner: owner, Conversation: c}
		if _, err := g.appendItems(ctx, tx, rec, "items", items, true); err != nil {
			return err
		}
		return g.putConversationRecord(ctx, tx, c.ID, rec)
	})
	if err != nil {
		return nil, conversationError("create conversation", err)
	}
	return &c, nil
}

// conversationError wraps err of what, leaving the package's typed errors as they are.
func conversationError(what string, err error) error {
	if errors.Is(err, ErrInvalid) || errors.Is(err, ErrConversationNotFound) {
		return err
	}
	return fmt.Errorf("completions: %s: %w", what, err)
}

// appendItems adds items to the conversation rec (within tx; the caller writes rec), each
// with an id (given, or made: an id the conversation has is refused, naming field[i]) and
// a status, and returns them.
// An answer's items (bounded false) are added even past the bound: the answer is paid
// for, and the conversation's next request is refused instead.
func (g *Gateway) appendItems(ctx context.Context, tx store.Tx, rec *conversationRecord, field string, items []ResponsesItem, bounded bool) ([]ResponsesItem, error) {
	added := make([]ResponsesItem, 0, len(items))
	id := rec.Conversation.ID
	given := map[string]bool{}
	for i, it := range items {
		if it.ID == "" {
			it.ID = newItemID(it.Type)
		} else if given[it.ID] {
			return nil, invalid(fmt.Sprintf("%s[%d].id", field, i), "Duplicate item found with id %s.", it.ID)
		} else if _, err := tx.Get(ctx, store.OpenAIConversationItemIDs, conversationItemIndexKey(id, it.ID)); err == nil {
			return nil, invalid(fmt.Sprintf("%s[%d].id", field, i), "Duplicate item found with id %s.", it.ID)
		} else if !errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
		given[it.ID] = true
		if it.Type == "" {
			it.Type = "message"
		}
		if it.Status == "" {
			it.Status = "completed"
		}
		b, err := json.Marshal(it)
		if err != nil {
			return nil, err
		}
		if rec.Bytes += int64(len(b)); bounded && rec.Bytes > g.maxHistory() {
			return nil, invalid(field, "conversation %s would hold more than %d bytes of items, the bound of what it may bring: delete some of its items or start a new one", id, g.maxHistory())
		}
		if err := tx.Put(ctx, store.OpenAIConversationItems, conversationItemKey(id, rec.NextSeq), b); err != nil {
			return nil, err
		}
		if err := tx.Put(ctx, store.OpenAIConversationItemIDs, conversationItemIndexKey(id, it.ID), []byte(strconv.Itoa(rec.NextSeq))); err != nil {
			return nil, err
		}
		rec.NextSeq++
		added = append(added, it)
	}
	return added, nil
}

// conversationRecordOf reads conversation id of owner (r: the store or a transaction); one
// past its retention is not found, whether or not a sweep has deleted it yet, unless a
// request holds its lease (the sweep leaves it too): the request's answer is added to it.
func (g *Gateway) conversationRecordOf(ctx context.Context, r store.Reader, owner, id string) (*conversationRecord, error) {
	rec, err := store.GetJSON[conversationRecord](ctx, r, store.OpenAIConversations, id)
	now := g.opts.Now()
	if errors.Is(err, store.ErrNotFound) || err == nil && (!store.Owns(owner, rec.Owner) || g.openAIConversationExpired(&rec, now) && !rec.locked(now)) {
		return nil, &conversationNotFoundError{"Conversation", id}
	}
	if err != nil {
		return nil, fmt.Errorf("completions: read conversation %s: %w", id, err)
	}
	return &rec, nil
}

// OpenAIConversationOf returns conversation id of owner, or an error matching
// ErrConversationNotFound.
func (g *Gateway) OpenAIConversationOf(ctx context.Context, owner, id string) (*OpenAIConversation, error) {
	if g.opts.Store == nil {
		return nil, &conversationNotFoundError{"Conversation", id}
	}
	rec, err := g.conversationRecordOf(ctx, g.opts.Store, owner, id)
	if err != nil {
		return nil, err
	}
	return &rec.Conversation, nil
}

// UpdateOpenAIConversation replaces the metadata of conversation id of owner.
func (g *Gateway) UpdateOpenAIConversation(ctx context.Context, owner, id string, metadata map[string]string) (*OpenAIConversation, error) {
	if err := CheckMetadata("metadata", metadata); err != nil {
		return nil, err
	}
	if metadata == nil {
		metadata = map[string]string{}
	}
	if g.opts.Store == nil {
		return nil, &conversationNotFoundError{"Conversation", id}
	}
	var out OpenAIConversation
	err := g.opts.Store.Update(ctx, func(tx store.Tx) error {
		rec, err := g.conversationRecordOf(ctx, tx, owner, id)
		if err != nil {
			return err
		}
		rec.Conversation.Metadata = metadata
		out = rec.Conversation
		return g.putConversationRecord(ctx, tx, id, rec)
	})
	if err != nil {
		return nil, conversationError("update conversation "+id, err)
	}
	return &out, nil
}

// DeleteOpenAIConversation deletes conversation id of owner and its items.
func (g *Gateway) DeleteOpenAIConversation(ctx context.Context, owner, id string) error {
	if _, err := g.OpenAIConversationOf(ctx, owner, id); err != nil {
		return err
	}
	// The record first: the conversation is gone at once; its items follow in pages.
	if err := g.opts.Store.Delete(ctx, store.OpenAIConversations, id); err != nil {
		return fmt.Errorf("completions: delete conversation %s: %w", id, err)
	}
	for _, c := range []store.Collection{store.OpenAIConversationItems, store.OpenAIConversationItemIDs} {
		for {
			page, err := g.opts.Store.List(ctx, c, store.ListOptions{Prefix: id + "/", Limit: 256})
			if err != nil {
				return err
			}
			if len(page) == 0 {
				break
			}
			err = g.opts.Store.Update(ctx, func(tx store.Tx) error {
				for _, e := range page {
					if err := tx.Delete(ctx, c, e.Key); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				return fmt.Errorf("completions: delete the items of conversation %s: %w", id, err)
			}
		}
	}
	return nil
}

// OpenAIConversationItems returns the items of conversation id of owner, oldest first.
func (g *Gateway) OpenAIConversationItems(ctx context.Context, owner, id string) ([]ResponsesItem, error) {
	if _, err := g.OpenAIConversationOf(ctx, owner, id); err != nil {
		return nil, err
	}
	return g.conversationItems(ctx, id, 0)
}

// OpenAIConversationItemPage is a page of a conversation's items.
type OpenAIConversationItemPage struct {
	Items   []ResponsesItem
	HasMore bool
}

// OpenAIConversationItemsPage returns up to limit items of conversation id of owner after
// item after ("" from the start), newest first or (asc) oldest first; either reads only
// the page.
func (g *Gateway) OpenAIConversationItemsPage(ctx context.Context, owner, id string, limit int, asc bool, after string) (OpenAIConversationItemPage, error) {
	if _, err := g.OpenAIConversationOf(ctx, owner, id); err != nil {
		return OpenAIConversationItemPage{}, err
	}
	from := ""
	if after != "" {
		seq, err := g.itemSeq(ctx, g.opts.Store, id, after)
		if err != nil {
			return OpenAIConversationItemPage{}, invalid("after", "%q is not an item of this conversation", after)
		}
		from = conversationItemKey(id, seq)
	}
	// Stored newest first: oldest first is the same listing read backwards.
	entries, err := g.opts.Store.List(ctx, store.OpenAIConversationItems, store.ListOptions{Prefix: id + "/", After: from, Limit: limit + 1, Descending: asc})
	if err != nil {
		return OpenAIConversationItemPage{}, fmt.Errorf("completions: read the items of conversation %s: %w", id, err)
	}
	page := OpenAIConversationItemPage{Items: []ResponsesItem{}, HasMore: len(entries) > limit}
	for _, e := range entries[:min(limit, len(entries))] {
		var it ResponsesItem
		if err := json.Unmarshal(e.Value, &it); err != nil {
			return OpenAIConversationItemPage{}, fmt.Errorf("completions: decode item %s: %w", e.Key, err)
		}
		page.Items = append(page.Items, it)
	}
	return page, nil
}

// itemSeq is the sequence number of item itemID of conversation id.
func (g *Gateway) itemSeq(ctx context.Context, r store.Reader, id, itemID string) (int, error) {
	b, err := r.Get(ctx, store.OpenAIConversationItemIDs, conversationItemIndexKey(id, itemID))
	if errors.Is(err, store.ErrNotFound) {
		return 0, &conversationNotFoundError{"Item", itemID}
	}
	if err != nil {
		return 0, fmt.Errorf("completions: read item %s: %w", itemID, err)
	}
	return strconv.Atoi(string(b))
}

// conversationItems reads the items of conversation id, oldest first; a conversation of
// more than maxBytes of items (JSON; 0: no bound) is a validation error on conversation,
// found before more is read.
func (g *Gateway) conversationItems(ctx context.Context, id string, maxBytes int64) ([]ResponsesItem, error) {
	var items []ResponsesItem
	var size int64
	for after := ""; ; {
		page, err := g.opts.Store.List(ctx, store.OpenAIConversationItems, store.ListOptions{Prefix: id + "/", After: after, Limit: 512})
		if err != nil {
			return nil, fmt.Errorf("completions: read the items of conversation %s: %w", id, err)
		}
		for _, e := range page {
			var it ResponsesItem
			if err := json.Unmarshal(e.Value, &it); err != nil {
				return nil, fmt.Errorf("completions: decode item %s: %w", e.Key, err)
			}
			items = append(items, it)
			if size += int64(len(e.Value)); maxBytes > 0 && size > maxBytes {
				return nil, invalid("conversation", "conversation %q holds more than %d bytes of items, the bound of what it may bring: delete some of its items or start a new one", id, maxBytes)
			}
		}
		if len(page) < 512 {
			slices.Reverse(items) // stored newest first
			return items, nil
		}
		after = page[len(page)-1].Key
	}
}

// AddOpenAIConversationItems adds items (at most 20) to conversation id of owner and
// returns them as stored (with their ids); not while a response is being answered on it.
func (g *Gateway) AddOpenAIConversationItems(ctx context.Context, owner, id string, items []ResponsesItem) ([]ResponsesItem, error) {
	if err := checkConversationItems("items", items); err != nil {
		return nil, err
	}
	return g.addConversationItems(ctx, owner, id, "items", items, "")
}

// addConversationItems appends items to conversation id of owner (field names them in
// errors); lock is the lease of the request they answer, released with them ("": none,
// and a conversation under another's lease refuses them).
func (g *Gateway) addConversationItems(ctx context.Context, owner, id, field string, items []ResponsesItem, lock string) ([]ResponsesItem, error) {
	if g.opts.Store == nil {
		return nil, &conversationNotFoundError{"Conversation", id}
	}
	var added []ResponsesItem
	err := g.opts.Store.Update(ctx, func(tx store.Tx) error {
		rec, err := g.conversationRecordOf(ctx, tx, owner, id)
		if err != nil {
			return err
		}
		if rec.locked(g.opts.Now()) && rec.LockID != lock {
			return conversationLocked("conversation_id", id)
		}
		if added, err = g.appendItems(ctx, tx, rec, field, items, lock == ""); err != nil {
			return err
		}
		if lock != "" && rec.LockID == lock {
			rec.LockID, rec.LockedUntil = "", time.Time{}
		}
		return g.putConversationRecord(ctx, tx, id, rec)
	})
	if err != nil {
		return nil, conversationError("add items to conversation "+id, err)
	}
	return added, nil
}

// DefaultConversationLease is the default lease of a /v1/responses request on its
// conversation (StoredResponsesOptions.ConversationLease): short, and renewed while the
// request runs (every third of it), so that it lasts as long as the request whatever its
// timeout, and a process that dies leaves the conversation locked only this long.
const DefaultConversationLease = 30 * time.Second

func (g *Gateway) conversationLease() time.Duration {
	if l := g.opts.StoredResponses.ConversationLease; l > 0 {
		return l
	}
	return DefaultConversationLease
}

// lockConversation takes the lease of a /v1/responses request on conversation id of owner
// (renewed until ctx ends or r's ReleaseResponse), or refuses with conversation_locked.
func (g *Gateway) lockConversation(ctx context.Context, owner, id string, r *ResponsesRequest) error {
	var b [12]byte
	rand.Read(b[:])
	lock := hex.EncodeToString(b[:])
	renew := func(ctx context.Context, first bool) error {
		return g.opts.Store.Update(ctx, func(tx store.Tx) error {
			rec, err := g.conversationRecordOf(ctx, tx, owner, id)
			if err != nil {
				return err
			}
			now := g.opts.Now()
			switch {
			case first && rec.locked(now):
				return conversationLocked("conversation", id)
			case !first && rec.LockID != lock:
				return nil // released (answered): nothing to renew
			}
			rec.LockID, rec.LockedUntil = lock, now.Add(g.conversationLease())
			return putConversationLease(ctx, tx, id, rec)
		})
	}
	if err := renew(ctx, true); err != nil {
		return err
	}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(g.conversationLease() / 3)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				_ = renew(ctx, false) // a failed renewal: the next one tries again
			}
		}
	}()
	r.conversationID, r.conversationLock = id, lock
	var once sync.Once
	r.stopLease = func() { once.Do(func() { close(stop); <-done }) }
	return nil
}

// ReleaseResponse ends what ContinueResponse holds for r once r is over: the lease on its
// conversation, when StoreResponse did not release it with the answer (the request failed).
// It does nothing for a request that holds nothing.
func (g *Gateway) ReleaseResponse(ctx context.Context, owner string, r *ResponsesRequest) {
	if r.stopLease != nil {
		r.stopLease()
	}
	lock := r.conversationLock
	if lock == "" || g.opts.Store == nil {
		return
	}
	r.conversationLock = ""
	_ = g.opts.Store.Update(ctx, func(tx store.Tx) error {
		rec, err := g.conversationRecordOf(ctx, tx, owner, r.conversationID)
		if err != nil || rec.LockID != lock {
			return nil // gone, or no longer this request's
		}
		rec.LockID, rec.LockedUntil = "", time.Time{}
		return putConversationLease(ctx, tx, r.conversationID, rec)
	})
}

// OpenAIConversationItem returns item itemID of conversation id of owner.
func (g *Gateway) OpenAIConversationItem(ctx context.Context, owner, id, itemID string) (ResponsesItem, error) {
	if _, err := g.OpenAIConversationOf(ctx, owner, id); err != nil {
		return ResponsesItem{}, err
	}
	seq, err := g.itemSeq(ctx, g.opts.Store, id, itemID)
	if err != nil {
		return ResponsesItem{}, err
	}
	it, err := store.GetJSON[ResponsesItem](ctx, g.opts.Store, store.OpenAIConversationItems, conversationItemKey(id, seq))
	if errors.Is(err, store.ErrNotFound) {
		return ResponsesItem{}, &conversationNotFoundError{"Item", itemID}
	}
	return it, err
}

// DeleteOpenAIConversationItem deletes item itemID of conversation id of owner and returns
// the conversation.
func (g *Gateway) DeleteOpenAIConversationItem(ctx context.Context, owner, id, itemID string) (*OpenAIConversation, error) {
	if g.opts.Store == nil {
		return nil, &conversationNotFoundError{"Conversation", id}
	}
	var out OpenAIConversation
	err := g.opts.Store.Update(ctx, func(tx store.Tx) error {
		rec, err := g.conversationRecordOf(ctx, tx, owner, id)
		if err != nil {
			return err
		}
		seq, err := g.itemSeq(ctx, tx, id, itemID)
		if err != nil {
			return err
		}
		key := conversationItemKey(id, seq)
		if b, err := tx.Get(ctx, store.OpenAIConversationItems, key); err == nil {
			rec.Bytes -= int64(len(b))
		}
		if err := tx.Delete(ctx, store.OpenAIConversationItems, key); err != nil {
			return err
		}
		if err := tx.Delete(ctx, store.OpenAIConversationItemIDs, conversationItemIndexKey(id, itemID)); err != nil {
			return err
		}
		out = rec.Conversation
		return g.putConversationRecord(ctx, tx, id, rec)
	})
	if err != nil {
		return nil, conversationError("delete item "+itemID, err)
	}
	return &out, nil
}

// conversationID reads a request's conversation: an id, or an object with one.
func conversationID(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	var id string
	if len(raw) > 0 && raw[0] == '"' {
		if err := json.Unmarshal(raw, &id); err != nil {
			return "", invalid("conversation", "must be a conversation id or an object with one")
		}
	} else {
		var ref OpenAIConversationRef
		if err := json.Unmarshal(raw, &ref); err != nil {
			return "", invalid("conversation", "must be a conversation id or an object with one")
		}
		id = ref.ID
	}
	if !strings.HasPrefix(id, "conv_") {
		return "", invalid("conversation", "must be a conversation id (conv_…), got %q", id)
	}
	return id, nil
}
