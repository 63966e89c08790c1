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
	"strings"
	"unicode/utf8"

	"github.com/switchyard-ai/switchyard/store"
)

// OpenAI's Conversations API: a conversation is a list of items that lives apart from the
// answers; a /v1/responses request naming it (conversation) is answered with its items
// before the request's input, and its input and output items are added to it. The
// OpenAI Agents SDK's conversationId and OpenAIConversationsSession work this way. A
// conversation is kept in the gateway's store until it is deleted (OpenAI keeps them
// without a time limit); its items are one record each, so an answer adds a record per
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
	// NextSeq is the sequence number of the next item (its key: id/seq).
	NextSeq int `json:"next_seq"`
}

func conversationItemKey(id string, seq int) string { return fmt.Sprintf("%s/%010d", id, seq) }

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
// most 20 per call, of the types /v1/responses reads.
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
	}
	return nil
}

// newConversationObjectID returns a new conversation id: conv_ and 48 hex digits.
func newConversationObjectID() string {
	var b [24]byte
	rand.Read(b[:])
	return "conv_" + hex.EncodeToString(b[:])
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
		if _, err := appendItems(ctx, tx, rec, items); err != nil {
			return err
		}
		return store.PutJSON(ctx, tx, store.OpenAIConversations, c.ID, rec)
	})
	if err != nil {
		return nil, fmt.Errorf("completions: create conversation: %w", err)
	}
	return &c, nil
}

// appendItems adds items to the conversation rec (within tx; the caller writes rec), each
// with an id (given, or made), and returns them.
func appendItems(ctx context.Context, tx store.Tx, rec *conversationRecord, items []ResponsesItem) ([]ResponsesItem, error) {
	added := make([]ResponsesItem, 0, len(items))
	for _, it := range items {
		if it.ID == "" {
			it.ID = newItemID(it.Type)
		}
		if it.Type == "" {
			it.Type = "message"
		}
		if err := store.PutJSON(ctx, tx, store.OpenAIConversationItems, conversationItemKey(rec.Conversation.ID, rec.NextSeq), it); err != nil {
			return nil, err
		}
		rec.NextSeq++
		added = append(added, it)
	}
	return added, nil
}

// conversationRecordOf reads conversation id of owner (r: the store or a transaction).
func conversationRecordOf(ctx context.Context, r store.Reader, owner, id string) (*conversationRecord, error) {
	rec, err := store.GetJSON[conversationRecord](ctx, r, store.OpenAIConversations, id)
	if errors.Is(err, store.ErrNotFound) || err == nil && !store.Owns(owner, rec.Owner) {
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
	rec, err := conversationRecordOf(ctx, g.opts.Store, owner, id)
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
		rec, err := conversationRecordOf(ctx, tx, owner, id)
		if err != nil {
			return err
		}
		rec.Conversation.Metadata = metadata
		out = rec.Conversation
		return store.PutJSON(ctx, tx, store.OpenAIConversations, id, rec)
	})
	if err != nil {
		return nil, err
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
	for {
		page, err := g.opts.Store.List(ctx, store.OpenAIConversationItems, store.ListOptions{Prefix: id + "/", Limit: 256})
		if err != nil || len(page) == 0 {
			return err
		}
		err = g.opts.Store.Update(ctx, func(tx store.Tx) error {
			for _, e := range page {
				if err := tx.Delete(ctx, store.OpenAIConversationItems, e.Key); err != nil {
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

// OpenAIConversationItems returns the items of conversation id of owner, oldest first.
func (g *Gateway) OpenAIConversationItems(ctx context.Context, owner, id string) ([]ResponsesItem, error) {
	if _, err := g.OpenAIConversationOf(ctx, owner, id); err != nil {
		return nil, err
	}
	items, _, err := g.conversationItems(ctx, id, 0)
	return items, err
}

// conversationItems reads the items of conversation id, oldest first, with their keys; a
// conversation of more than maxBytes of items (JSON; 0: no bound) is a validation error on
// conversation, found before more is read.
func (g *Gateway) conversationItems(ctx context.Context, id string, maxBytes int64) ([]ResponsesItem, []string, error) {
	var items []ResponsesItem
	var keys []string
	var size int64
	for after := ""; ; {
		page, err := g.opts.Store.List(ctx, store.OpenAIConversationItems, store.ListOptions{Prefix: id + "/", After: after, Limit: 512})
		if err != nil {
			return nil, nil, fmt.Errorf("completions: read the items of conversation %s: %w", id, err)
		}
		for _, e := range page {
			var it ResponsesItem
			if err := json.Unmarshal(e.Value, &it); err != nil {
				return nil, nil, fmt.Errorf("completions: decode item %s: %w", e.Key, err)
			}
			items, keys = append(items, it), append(keys, e.Key)
			if size += int64(len(e.Value)); maxBytes > 0 && size > maxBytes {
				return nil, nil, invalid("conversation", "conversation %q holds more than %d bytes of items, the bound of what it may bring: delete some of its items or start a new one", id, maxBytes)
			}
		}
		if len(page) < 512 {
			return items, keys, nil
		}
		after = page[len(page)-1].Key
	}
}

// AddOpenAIConversationItems adds items (at most 20) to conversation id of owner and
// returns them as stored (with their ids).
func (g *Gateway) AddOpenAIConversationItems(ctx context.Context, owner, id string, items []ResponsesItem) ([]ResponsesItem, error) {
	if err := checkConversationItems("items", items); err != nil {
		return nil, err
	}
	return g.addConversationItems(ctx, owner, id, items)
}

func (g *Gateway) addConversationItems(ctx context.Context, owner, id string, items []ResponsesItem) ([]ResponsesItem, error) {
	if g.opts.Store == nil {
		return nil, &conversationNotFoundError{"Conversation", id}
	}
	var added []ResponsesItem
	err := g.opts.Store.Update(ctx, func(tx store.Tx) error {
		rec, err := conversationRecordOf(ctx, tx, owner, id)
		if err != nil {
			return err
		}
		if added, err = appendItems(ctx, tx, rec, items); err != nil {
			return err
		}
		return store.PutJSON(ctx, tx, store.OpenAIConversations, id, rec)
	})
	if err != nil {
		return nil, err
	}
	return added, nil
}

// OpenAIConversationItem returns item itemID of conversation id of owner.
func (g *Gateway) OpenAIConversationItem(ctx context.Context, owner, id, itemID string) (ResponsesItem, error) {
	items, err := g.OpenAIConversationItems(ctx, owner, id)
	if err != nil {
		return ResponsesItem{}, err
	}
	for _, it := range items {
		if it.ID == itemID {
			return it, nil
		}
	}
	return ResponsesItem{}, &conversationNotFoundError{"Item", itemID}
}

// DeleteOpenAIConversationItem deletes item itemID of conversation id of owner and returns
// the conversation.
func (g *Gateway) DeleteOpenAIConversationItem(ctx context.Context, owner, id, itemID string) (*OpenAIConversation, error) {
	c, err := g.OpenAIConversationOf(ctx, owner, id)
	if err != nil {
		return nil, err
	}
	items, keys, err := g.conversationItems(ctx, id, 0)
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(items, func(it ResponsesItem) bool { return it.ID == itemID })
	if i < 0 {
		return nil, &conversationNotFoundError{"Item", itemID}
	}
	if err := g.opts.Store.Delete(ctx, store.OpenAIConversationItems, keys[i]); err != nil {
		return nil, fmt.Errorf("completions: delete item %s: %w", itemID, err)
	}
	return c, nil
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
