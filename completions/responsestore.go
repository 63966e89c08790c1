package completions

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/switchyard-ai/switchyard/store"
)

// OpenAI's Responses API keeps what it answers (store defaults to true): a client continues
// a conversation by naming the last answer (previous_response_id) instead of sending the
// conversation again, reads an answer back (GET /v1/responses/{id}) and lists the items it
// was answered from. The gateway keeps its /v1/responses answers the same way, in its store
// (shared by replicas on PostgreSQL, kept across restarts) for StoredResponsesOptions.TTL:
// each answer is one record with the input items of its own request, the id of the answer
// before it and its output, so a conversation is the chain of its answers and a turn adds
// one record, whatever the conversation's length.

// DefaultResponsesTTL is how long a stored response is kept by default: 30 days, as OpenAI.
const DefaultResponsesTTL = 30 * 24 * time.Hour

// maxResponseChain bounds the answers one previous_response_id walks back through.
const maxResponseChain = 4096

// StoredResponsesOptions configures how the gateway keeps its /v1/responses answers (in
// Options.Store; without a Store none is kept). The zero value keeps every answer whose
// request does not say store: false, for DefaultResponsesTTL.
type StoredResponsesOptions struct {
	// Off keeps none: previous_response_id is then refused, as are the routes that read a
	// stored response.
	Off bool
	// TTL is how long an answer is kept; 0 means DefaultResponsesTTL.
	TTL time.Duration
}

// ErrResponseNotFound means no response with that id is kept for the caller: never stored
// (store: false), deleted, expired, or another key's.
var ErrResponseNotFound = errors.New("completions: response not found")

// responseNotFoundError says which response was not found, in OpenAI's words.
type responseNotFoundError struct{ id string }

func (e *responseNotFoundError) Error() string {
	return fmt.Sprintf("completions: Response with id '%s' not found.", e.id)
}

func (e *responseNotFoundError) Is(target error) bool { return target == ErrResponseNotFound }

// storedResponse is the record of one kept answer (store.Responses, keyed by its id).
type storedResponse struct {
	Owner string `json:"owner"`
	// Previous is the request's previous_response_id: the answer this one continues.
	Previous string `json:"previous,omitempty"`
	// Input is the request's own input items (not those of the answers before it), each
	// with an id.
	Input    []ResponsesItem `json:"input"`
	Response *ResponseObject `json:"response"`
	Expires  time.Time       `json:"expires"`
}

// StoresResponses reports whether the gateway keeps the /v1/responses answers of requests
// that do not say store: false (a Store, and StoredResponses not Off).
func (g *Gateway) StoresResponses() bool {
	return g.opts.Store != nil && !g.opts.StoredResponses.Off
}

// ContinueResponse prepares r when it names previous_response_id: the items of the
// conversation that response ends — the input and output of every answer of the chain,
// oldest first — are put before r's own input, as OpenAI does (the instructions of earlier
// answers are not carried over). A response the caller (owner) has no stored answer for is
// a validation error on previous_response_id matching ErrResponseNotFound. Call it before
// ToChatRequest, which refuses a previous_response_id it was not given the history of.
func (g *Gateway) ContinueResponse(ctx context.Context, owner string, r *ResponsesRequest) error {
	if r.PreviousResponseID == "" || r.continued {
		return nil
	}
	if !g.StoresResponses() {
		return invalid("previous_response_id", "is not supported: this gateway keeps no responses (serve --responses-store off); send the whole conversation in input")
	}
	chain, err := g.responseChain(ctx, owner, r.PreviousResponseID)
	if err != nil {
		return err
	}
	var history []ResponsesItem
	for _, rec := range chain {
		history = append(history, rec.Input...)
		for _, out := range rec.Response.Output {
			it, _ := inputItemOf(out)
			history = append(history, it)
		}
	}
	own := r.Input.Items
	if r.Input.IsText {
		own = []ResponsesItem{userTextItem(r.Input.Text)}
	}
	r.Input = ResponsesInput{Items: append(history, own...)}
	r.history, r.continued = len(history), true
	return nil
}

// userTextItem is the user message a string input stands for.
func userTextItem(text string) ResponsesItem {
	return ResponsesItem{Type: "message", Role: "user", Content: ResponsesContent{Parts: []ResponsesPart{{Type: "input_text", Text: text}}}}
}

// responseChain is the chain of stored answers that ends with id, oldest first. The answer
// named is read from the store (it may have been deleted by another replica); those before
// it may come from this process's copy of them (a stored answer never changes).
func (g *Gateway) responseChain(ctx context.Context, owner, id string) ([]*storedResponse, error) {
	var chain []*storedResponse
	for next := id; next != ""; {
		if len(chain) == maxResponseChain {
			return nil, invalid("previous_response_id", "the conversation of %q is longer than %d responses; start a new one with its items in input", id, maxResponseChain)
		}
		rec, err := g.storedResponse(ctx, owner, next, len(chain) > 0)
		switch {
		case errors.Is(err, ErrResponseNotFound) && len(chain) == 0:
			ve := invalid("previous_response_id", "Previous response with id '%s' not found.", id)
			ve.Err = err
			return nil, ve
		case errors.Is(err, ErrResponseNotFound):
			ve := invalid("previous_response_id", "response %q, earlier in the conversation of %q, is no longer stored (deleted or expired)", next, id)
			ve.Err = err
			return nil, ve
		case err != nil:
			return nil, err
		}
		chain = append(chain, rec)
		next = rec.Previous
	}
	slices.Reverse(chain)
	return chain, nil
}

// storedResponse reads the answer id kept for owner; cached allows this process's copy.
func (g *Gateway) storedResponse(ctx context.Context, owner, id string, cached bool) (*storedResponse, error) {
	now := g.opts.Now()
	if cached {
		if rec, ok := g.keptResponses.get(id, now); ok && rec.Owner == owner && now.Before(rec.Expires) {
			return rec, nil
		}
	}
	if !g.StoresResponses() {
		return nil, &responseNotFoundError{id}
	}
	b, err := g.opts.Store.Get(ctx, store.Responses, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, &responseNotFoundError{id}
	}
	if err != nil {
		return nil, fmt.Errorf("completions: read response %s: %w", id, err)
	}
	var rec storedResponse
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, fmt.Errorf("completions: decode response %s: %w", id, err)
	}
	if rec.Owner != owner || !now.Before(rec.Expires) || rec.Response == nil {
		return nil, &responseNotFoundError{id}
	}
	g.keptResponses.put(id, &rec, len(b), now)
	return &rec, nil
}

// StoreResponse keeps the answer o to r for owner, with the input items it was answered
// from, for previous_response_id, StoredResponse and ResponseInputItems — unless r says
// store: false, the gateway keeps none, or o failed. o.Store says whether it was kept; an
// error means it could not be (o is answered all the same: it is paid for).
func (g *Gateway) StoreResponse(ctx context.Context, owner string, r *ResponsesRequest, o *ResponseObject) error {
	o.Store = false
	if !g.StoresResponses() || r.Store != nil && !*r.Store || o.Status == "failed" {
		return nil
	}
	var own []ResponsesItem
	if r.Input.IsText {
		own = []ResponsesItem{userTextItem(r.Input.Text)}
	} else {
		own = slices.Clone(r.Input.Items[r.history:])
	}
	for i := range own {
		if own[i].ID == "" {
			own[i].ID = newItemID(own[i].Type)
		}
	}
	ttl := g.opts.StoredResponses.TTL
	if ttl <= 0 {
		ttl = DefaultResponsesTTL
	}
	now := g.opts.Now()
	kept := *o
	kept.Store = true
	rec := &storedResponse{Owner: owner, Previous: r.PreviousResponseID, Input: own, Response: &kept, Expires: now.Add(ttl)}
	b, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("completions: encode response %s: %w", o.ID, err)
	}
	err = g.opts.Store.Update(ctx, func(tx store.Tx) error {
		if err := tx.Put(ctx, store.Responses, o.ID, b); err != nil {
			return err
		}
		if err := tx.Put(ctx, store.ResponseExpiry, expiryKey(rec.Expires, o.ID), nil); err != nil {
			return err
		}
		for _, out := range o.Output {
			if err := tx.Put(ctx, store.ResponseItems, responseItemKey(owner, out.ID), []byte(o.ID)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("completions: store response %s: %w", o.ID, err)
	}
	o.Store = true
	g.keptResponses.put(o.ID, rec, len(b), now)
	return nil
}

// StoredResponse returns the answer id as it was given, if the gateway keeps it for owner;
// else an error matching ErrResponseNotFound.
func (g *Gateway) StoredResponse(ctx context.Context, owner, id string) (*ResponseObject, error) {
	rec, err := g.storedResponse(ctx, owner, id, false)
	if err != nil {
		return nil, err
	}
	return rec.Response, nil
}

// ResponseInputItems returns the items answer id was answered from, oldest first: the input
// and output of the answers before it in its conversation, then its own input (the answer's
// instructions are not items). An id the gateway does not keep for owner is an error
// matching ErrResponseNotFound.
func (g *Gateway) ResponseInputItems(ctx context.Context, owner, id string) ([]ResponsesItem, error) {
	last, err := g.storedResponse(ctx, owner, id, false)
	if err != nil {
		return nil, err
	}
	var items []ResponsesItem
	if last.Previous != "" {
		chain, err := g.responseChain(ctx, owner, last.Previous)
		if err != nil {
			return nil, err
		}
		for _, rec := range chain {
			items = append(items, rec.Input...)
			for _, out := range rec.Response.Output {
				it, _ := inputItemOf(out)
				items = append(items, it)
			}
		}
	}
	return append(items, last.Input...), nil
}

// DeleteResponse deletes the answer id kept for owner (the answers that continue it can no
// longer be continued); an id not kept for owner is an error matching ErrResponseNotFound.
func (g *Gateway) DeleteResponse(ctx context.Context, owner, id string) error {
	rec, err := g.storedResponse(ctx, owner, id, false)
	if err != nil {
		return err
	}
	g.keptResponses.delete(id)
	if err := g.opts.Store.Update(ctx, func(tx store.Tx) error { return deleteStoredResponse(ctx, tx, id, rec) }); err != nil {
		return fmt.Errorf("completions: delete response %s: %w", id, err)
	}
	return nil
}

// deleteStoredResponse removes the record of answer id (rec) and its index entries.
func deleteStoredResponse(ctx context.Context, tx store.Tx, id string, rec *storedResponse) error {
	if err := tx.Delete(ctx, store.Responses, id); err != nil {
		return err
	}
	if err := tx.Delete(ctx, store.ResponseExpiry, expiryKey(rec.Expires, id)); err != nil {
		return err
	}
	for _, out := range rec.Response.Output {
		key := responseItemKey(rec.Owner, out.ID)
		// An item id may be reused by a later answer (an upstream's call ids): only the
		// index entry that still names this answer goes.
		if v, err := tx.Get(ctx, store.ResponseItems, key); err == nil && string(v) == id {
			if err := tx.Delete(ctx, store.ResponseItems, key); err != nil {
				return err
			}
		} else if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
	}
	return nil
}

// SweepResponses deletes the stored answers whose time ran out by now and returns how many
// it deleted (a read never returns them; this frees their room).
func (g *Gateway) SweepResponses(ctx context.Context, now time.Time) (int, error) {
	if !g.StoresResponses() {
		return 0, nil
	}
	deleted := 0
	for {
		page, err := g.opts.Store.List(ctx, store.ResponseExpiry, store.ListOptions{Limit: 64})
		if err != nil {
			return deleted, fmt.Errorf("completions: sweep responses: %w", err)
		}
		due := 0
		for _, e := range page {
			at, id, ok := parseExpiryKey(e.Key)
			if ok && at.After(now) {
				break
			}
			due++
			err := g.opts.Store.Update(ctx, func(tx store.Tx) error {
				if err := tx.Delete(ctx, store.ResponseExpiry, e.Key); err != nil || !ok {
					return err
				}
				b, err := tx.Get(ctx, store.Responses, id)
				switch {
				case errors.Is(err, store.ErrNotFound):
					return nil
				case err != nil:
					return err
				}
				var rec storedResponse
				if err := json.Unmarshal(b, &rec); err != nil || rec.Response == nil {
					return tx.Delete(ctx, store.Responses, id) // unreadable: nothing to index
				}
				return deleteStoredResponse(ctx, tx, id, &rec)
			})
			if err != nil {
				return deleted, fmt.Errorf("completions: sweep response %s: %w", id, err)
			}
			g.keptResponses.delete(id)
			deleted++
		}
		if due < len(page) || len(page) == 0 {
			return deleted, nil
		}
		if err := ctx.Err(); err != nil {
			return deleted, err
		}
	}
}

// expiryKey is the store.ResponseExpiry key of answer id expiring at: the time first, so
// that the index lists the oldest first.
func expiryKey(at time.Time, id string) string {
	return fmt.Sprintf("%012d/%s", at.Unix(), id)
}

func parseExpiryKey(key string) (time.Time, string, bool) {
	secs, id, ok := strings.Cut(key, "/")
	n, err := strconv.ParseInt(secs, 10, 64)
	if !ok || err != nil || id == "" {
		return time.Time{}, "", false
	}
	return time.Unix(n, 0), id, true
}

// responseItemKey is the store.ResponseItems key of output item itemID of owner's answers.
func responseItemKey(owner, itemID string) string {
	h := sha256.Sum256([]byte(owner))
	return hex.EncodeToString(h[:8]) + "/" + itemID
}

// storedItem finds output item id of owner's stored answers, for an item_reference.
func (g *Gateway) storedItem(ctx context.Context, owner, id string) (ResponsesItem, bool, error) {
	if !g.StoresResponses() {
		return ResponsesItem{}, false, nil
	}
	rid, err := g.opts.Store.Get(ctx, store.ResponseItems, responseItemKey(owner, id))
	if errors.Is(err, store.ErrNotFound) {
		return ResponsesItem{}, false, nil
	}
	if err != nil {
		return ResponsesItem{}, false, fmt.Errorf("completions: read item %s: %w", id, err)
	}
	rec, err := g.storedResponse(ctx, owner, string(rid), true)
	if errors.Is(err, ErrResponseNotFound) {
		return ResponsesItem{}, false, nil
	}
	if err != nil {
		return ResponsesItem{}, false, err
	}
	for _, out := range rec.Response.Output {
		if out.ID == id {
			it, _ := inputItemOf(out)
			return it, true, nil
		}
	}
	return ResponsesItem{}, false, nil
}

// itemPrefixes are the id prefixes of the input items the gateway names when it stores them.
var itemPrefixes = map[string]string{
	"": "msg", "message": "msg", "function_call": "fc", "function_call_output": "fco", "reasoning": "rs",
	"custom_tool_call": "ctc", "custom_tool_call_output": "ctco",
}

// newItemID names a stored input item of type typ that came without an id.
func newItemID(typ string) string {
	prefix, ok := itemPrefixes[typ]
	if !ok {
		prefix = "item"
	}
	var b [16]byte
	rand.Read(b[:])
	return prefix + "_" + hex.EncodeToString(b[:])
}
