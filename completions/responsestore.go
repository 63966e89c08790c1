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
// one record, whatever the conversation's length. The answer named is read from the store
// on every turn; the earlier ones come from the process's copy of the chain when it has
// them (else one read each), checked against the caller's deleted answers (one listing).

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
	// NoExpiry keeps every answer stored while it is set until it is deleted (DELETE
	// /v1/responses/{id}): no SweepResponses removes it, whatever TTL a later run has. TTL
	// is then ignored.
	NoExpiry bool
	// ConversationLease is how long a /v1/responses request holds its conversation without
	// renewing it (renewed every third of it while the request runs); 0 means
	// DefaultConversationLease.
	ConversationLease time.Duration
	// MaxHistoryBytes bounds the items previous_response_id brings (their JSON): a longer
	// conversation is a validation error (start a new one), found before more than the
	// bound is read. 0 means DefaultMaxHistoryBytes.
	MaxHistoryBytes int64
	// BackgroundStaleAfter is how long a background response's heartbeat may stay
	// unchanged before its run counts as dead (its process stopped): it then reads failed.
	// The run beats every quarter of it (at least every second). 0 means
	// DefaultBackgroundStaleAfter.
	BackgroundStaleAfter time.Duration
	// BackgroundTimeout is how long a background response's run may last, one upstream
	// call as long, in place of Options.RequestTimeout and AttemptTimeout (background mode is
	// for the long runs of reasoning models); a request's own timeout, or the scope's
	// CallTimeout, still holds. 0 means DefaultBackgroundTimeout.
	BackgroundTimeout time.Duration
	// BackgroundStreamMaxEvents and BackgroundStreamMaxBytes bound the stream events a
	// background response asked with stream: true records (for GET ?stream=true to replay):
	// past either, its further events are dropped but for its terminal one, and a resume
	// from inside them is refused naming starting_after. 0 means
	// DefaultBackgroundStreamMaxEvents, DefaultBackgroundStreamMaxBytes.
	BackgroundStreamMaxEvents int
	BackgroundStreamMaxBytes  int
}

// DefaultBackgroundTimeout is how long a background response's run may last by default.
const DefaultBackgroundTimeout = time.Hour

// DefaultMaxHistoryBytes is the default bound of a conversation's items: 80 MiB, eight
// times the server's default request body bound (a conversation grows beyond what one
// request may carry: an agent's screenshots, say; but not without end).
const DefaultMaxHistoryBytes = 80 << 20

// ErrResponseNotFound means no response with that id is kept for the caller: never stored
// (store: false), deleted, expired, or another key's.
var ErrResponseNotFound = errors.New("completions: response not found")

// responseNotFoundError says which response was not found, in OpenAI's words (or msg).
type responseNotFoundError struct{ id, msg string }

func (e *responseNotFoundError) Error() string {
	if e.msg != "" {
		return "completions: " + e.msg
	}
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
	// Run is a background response's run (background.go); nil for the others.
	Run *backgroundRun `json:"run,omitempty"`
	// Stream is a streamed background response's (background_stream.go): its events are
	// in store.ResponseEvents.
	Stream *backgroundStream `json:"stream,omitempty"`
}

// chainLink is what the later turns of a conversation need of a stored answer, kept in
// the process's copy of chains (keptResponses) without the echo of its request's settings
// (an agent's tool list would otherwise crowd the copy out).
type chainLink struct {
	Owner    string
	Previous string
	// Items are the answer's input items, then its output as input items.
	Items   []ResponsesItem
	Bytes   int // their JSON size
	Expires time.Time
}

// linkOf is the chain link of rec.
func linkOf(rec *storedResponse) *chainLink {
	l := &chainLink{Owner: rec.Owner, Previous: rec.Previous, Expires: rec.Expires, Items: slices.Clone(rec.Input)}
	for _, out := range rec.Response.Output {
		it, _ := inputItemOf(out)
		l.Items = append(l.Items, it)
	}
	b, _ := json.Marshal(l.Items)
	l.Bytes = len(b)
	return l
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
// With a conversation (r names one) ContinueResponse also takes its lease: renewed until
// ctx ends or ReleaseResponse is called, which the caller defers once ContinueResponse
// succeeded (StoreResponse releases it with the answer; ReleaseResponse after that does
// nothing).
func (g *Gateway) ContinueResponse(ctx context.Context, owner string, r *ResponsesRequest) error {
	if r.continued {
		return nil
	}
	limit := g.opts.StoredResponses.MaxHistoryBytes
	if limit <= 0 {
		limit = DefaultMaxHistoryBytes
	}
	var history []ResponsesItem
	var size int64
	switch {
	case present(r.Conversation):
		if r.PreviousResponseID != "" {
			return invalid("conversation", "cannot be given with previous_response_id: the conversation holds the earlier items")
		}
		id, err := conversationID(r.Conversation)
		if err != nil {
			return err
		}
		if err := g.lockConversation(ctx, owner, id, r); err != nil {
			var nf *conversationNotFoundError
			if errors.As(err, &nf) {
				ve := invalid("conversation", "Conversation with id '%s' not found.", id)
				ve.Err = err
				return ve
			}
			return err
		}
		own := r.Input.Items
		if r.Input.IsText {
			own = nil
		}
		for i, it := range own {
			if it.ID == "" {
				continue
			}
			if _, err := g.itemSeq(ctx, g.opts.Store, id, it.ID); err == nil {
				g.ReleaseResponse(ctx, owner, r)
				return invalid(fmt.Sprintf("input[%d].id", i), "Duplicate item found with id %s: the conversation has it already.", it.ID)
			}
		}
		if history, err = g.conversationItems(ctx, id, limit); err != nil {
			g.ReleaseResponse(ctx, owner, r)
			return err
		}
		for _, it := range history {
			b, _ := json.Marshal(it)
			size += int64(len(b))
		}
		ownBytes, _ := json.Marshal(own)
		if r.Input.IsText {
			ownBytes, _ = json.Marshal(r.Input.Text)
		}
		if size+int64(len(ownBytes)) > limit {
			g.ReleaseResponse(ctx, owner, r)
			return invalid("input", "conversation %s would hold more than %d bytes of items with this input, the bound of what it may bring: delete some of its items or start a new one", id, limit)
		}
		r.conversationID = id
	case r.PreviousResponseID != "":
		if !g.StoresResponses() {
			return invalid("previous_response_id", "is not supported: this gateway keeps no responses (serve --responses-store=false); send the whole conversation in input")
		}
		chain, err := g.responseChain(ctx, owner, r.PreviousResponseID, limit)
		if err != nil {
			return err
		}
		for _, l := range chain {
			history = append(history, l.Items...)
			size += int64(l.Bytes)
		}
	default:
		return nil
	}
	own := r.Input.Items
	if r.Input.IsText {
		own = []ResponsesItem{userTextItem(r.Input.Text)}
	}
	r.Input = ResponsesInput{Items: append(history, own...)}
	r.history, r.historyBytes, r.continued = len(history), size, true
	return nil
}

// HistoryBytes is the size (JSON) of the items ContinueResponse put before r's input: 0
// without previous_response_id.
func (r *ResponsesRequest) HistoryBytes() int64 { return r.historyBytes }

// userTextItem is the user message a string input stands for.
func userTextItem(text string) ResponsesItem {
	return ResponsesItem{Type: "message", Role: "user", Content: ResponsesContent{Parts: []ResponsesPart{{Type: "input_text", Text: text}}}}
}

// responseChain is the chain of stored answers that ends with id, oldest first. The answer
// named is read from the store (it may have been deleted by another replica); those before
// it may come from this process's copy of them (a stored answer never changes), checked
// against the answers of owner deleted since (their tombstones). A background answer still
// running, or ended failed or cancelled (it has no answer), is refused on
// previous_response_id.
func (g *Gateway) responseChain(ctx context.Context, owner, id string, maxBytes int64) ([]*chainLink, error) {
	var chain []*chainLink
	var size int64
	now, cached := g.opts.Now(), false
	for next := id; next != ""; {
		if len(chain) == maxResponseChain {
			return nil, invalid("previous_response_id", "the conversation of %q is longer than %d responses; start a new one with its items in input", id, maxResponseChain)
		}
		var l *chainLink
		if len(chain) > 0 {
			if k, ok := g.keptResponses.get(next, now); ok && store.Owns(owner, k.Owner) && now.Before(k.Expires) {
				l, cached = k, true
			}
		}
		if l == nil {
			rec, err := g.storedResponse(ctx, owner, next)
			if err != nil {
				return nil, chainError(err, id, next, len(chain) == 0)
			}
			if unfinished(rec.Response.Status) {
				return nil, invalid("previous_response_id", "response %q is still %s in the background: wait until it ends", next, rec.Response.Status)
			}
			if s := rec.Response.Status; s == "failed" || s == "cancelled" {
				// Kept (a background response is), but with no answer: continuing it would
				// send its input as a turn that was answered.
				return nil, invalid("previous_response_id", "response %q ended %s in the background, with no answer to continue: send its input again instead (with the previous_response_id it had, if any)", next, s)
			}
			l = linkOf(rec)
			g.keptResponses.put(next, l, l.Bytes, now)
		}
		chain = append(chain, l)
		next = l.Previous
		if size += int64(l.Bytes); maxBytes > 0 && size > maxBytes {
			return nil, invalid("previous_response_id", "the conversation of %q holds more than %d bytes of items, the bound of what it may bring: start a new conversation with what matters of it in input", id, maxBytes)
		}
	}
	if cached && len(chain) > 1 {
		// An earlier answer may have been deleted on another replica since it was copied:
		// its tombstone is under its owner's key (the chain's answers may have two owners,
		// an issuer continuing its virtual key's answer).
		gone := map[string]bool{}
		for _, l := range chain[1:] {
			if _, read := gone[ownerKey(l.Owner)]; read {
				continue
			}
			dead, err := g.deletedResponses(ctx, l.Owner)
			if err != nil {
				return nil, err
			}
			gone[ownerKey(l.Owner)] = true
			for id := range dead {
				gone[id] = true
			}
		}
		for _, l := range chain[:len(chain)-1] {
			if gone[l.Previous] {
				return nil, chainError(&responseNotFoundError{id: l.Previous}, id, l.Previous, false)
			}
		}
	}
	slices.Reverse(chain)
	return chain, nil
}

// chainError is the error of a chain ending with id whose answer missing is not stored
// (err matching ErrResponseNotFound; other errors as they are): on previous_response_id.
func chainError(err error, id, missing string, head bool) error {
	if !errors.Is(err, ErrResponseNotFound) {
		return err
	}
	msg := fmt.Sprintf("Previous response with id '%s' not found.", id)
	if !head {
		msg = fmt.Sprintf("response %q, earlier in the conversation of %q, is no longer stored (deleted or expired)", missing, id)
	}
	ve := invalid("previous_response_id", "%s", msg)
	ve.Err = &responseNotFoundError{id: missing, msg: msg}
	return ve
}

// storedResponse reads the answer id kept for owner from the store.
func (g *Gateway) storedResponse(ctx context.Context, owner, id string) (*storedResponse, error) {
	if g.opts.Store == nil || g.opts.StoredResponses.Off {
		return nil, &responseNotFoundError{id: id}
	}
	b, err := g.opts.Store.Get(ctx, store.Responses, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, &responseNotFoundError{id: id}
	}
	if err != nil {
		return nil, fmt.Errorf("completions: read response %s: %w", id, err)
	}
	var rec storedResponse
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, fmt.Errorf("completions: decode response %s: %w", id, err)
	}
	if !store.Owns(owner, rec.Owner) || !g.opts.Now().Before(rec.Expires) || rec.Response == nil {
		return nil, &responseNotFoundError{id: id}
	}
	return g.endStale(ctx, id, &rec)
}

// deletedResponses are the ids of owner's deleted answers whose time is not over.
func (g *Gateway) deletedResponses(ctx context.Context, owner string) (map[string]bool, error) {
	entries, err := g.opts.Store.List(ctx, store.ResponseTombstones, store.ListOptions{Prefix: ownerKey(owner) + "/"})
	if err != nil {
		return nil, fmt.Errorf("completions: read deleted responses: %w", err)
	}
	gone := make(map[string]bool, len(entries))
	for _, e := range entries {
		_, id, _ := strings.Cut(e.Key, "/")
		gone[id] = true
	}
	return gone, nil
}

// ownItems are the input items r brings itself (not those of the answers before it), each
// with an id (one made for an item sent without).
func (r *ResponsesRequest) ownItems() []ResponsesItem {
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
	return own
}

// maskItems returns items with the texts a pre_call guardrail masked (masked: the text as
// it came to the text sent upstream) replaced as the upstream saw them: message parts'
// text, function calls' arguments and custom tool calls' input, and string outputs of
// function calls. items is not changed.
func maskItems(items []ResponsesItem, masked map[string]string) []ResponsesItem {
	if len(masked) == 0 {
		return items
	}
	out := slices.Clone(items)
	for i := range out {
		it := &out[i]
		if len(it.Content.Parts) > 0 {
			it.Content.Parts = slices.Clone(it.Content.Parts)
			for j := range it.Content.Parts {
				if m, ok := masked[it.Content.Parts[j].Text]; ok && it.Content.Parts[j].Text != "" {
					it.Content.Parts[j].Text = m
				}
			}
		}
		if m, ok := masked[it.Arguments]; ok && it.Arguments != "" {
			it.Arguments = m
		}
		if m, ok := masked[it.Input]; ok && it.Input != "" {
			it.Input = m
		}
		var s string
		if len(it.Output) > 0 && json.Unmarshal(it.Output, &s) == nil && s != "" {
			if m, ok := masked[s]; ok {
				it.Output, _ = json.Marshal(m)
			}
		}
	}
	return out
}

// StoreResponse keeps the answer o to r for owner, with the input items it was answered
// from, for previous_response_id, StoredResponse and ResponseInputItems — unless r says
// store: false, the gateway keeps none, or o failed. o.Store says whether it was kept; an
// error means it could not be (o is answered all the same: it is paid for).
func (g *Gateway) StoreResponse(ctx context.Context, owner string, r *ResponsesRequest, o *ResponseObject) error {
	o.Store = false
	if o.Status == "failed" {
		return nil
	}
	own := maskItems(r.ownItems(), o.masked)
	var convErr error
	if r.conversationID != "" {
		// The conversation gets the request's items and the answer's, whatever store says.
		items := slices.Clone(own)
		for _, out := range o.Output {
			it, _ := inputItemOf(out)
			items = append(items, it)
		}
		if r.stopLease != nil {
			r.stopLease() // the lease ends with the items it guarded
		}
		if _, err := g.addConversationItems(ctx, owner, r.conversationID, "input", items, r.conversationLock); err != nil {
			convErr = fmt.Errorf("completions: add the answer to conversation %s: %w", r.conversationID, err)
		} else {
			r.conversationLock = "" // released with the items
		}
		// The answer is kept with the conversation's items it was answered from: a request
		// continuing it by previous_response_id gets them too, as at OpenAI.
		own = slices.Clone(r.Input.Items[:r.history])
		own = append(own, items[:len(items)-len(o.Output)]...)
	}
	if !g.StoresResponses() || r.Store != nil && !*r.Store {
		return convErr
	}
	now := g.opts.Now()
	kept := *o
	kept.Store = true
	rec := &storedResponse{Owner: owner, Previous: r.PreviousResponseID, Input: own, Response: &kept, Expires: g.responseExpiry(now)}
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
			if err := tx.Put(ctx, store.ResponseItems, out.ID, []byte(o.ID)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return errors.Join(convErr, fmt.Errorf("completions: store response %s: %w", o.ID, err))
	}
	o.Store = true
	l := linkOf(rec)
	g.keptResponses.put(o.ID, l, l.Bytes, now)
	return convErr
}

// StoredResponse returns the answer id as it was given, if the gateway keeps it for owner;
// else an error matching ErrResponseNotFound.
func (g *Gateway) StoredResponse(ctx context.Context, owner, id string) (*ResponseObject, error) {
	rec, err := g.storedResponse(ctx, owner, id)
	if err != nil {
		return nil, err
	}
	return rec.Response, nil
}

// ResponseInputItems returns the items answer id was answered from, oldest first: the input
// and output of the answers before it in its conversation, then its own input (the answer's
// instructions are not items). An id the gateway does not keep for owner, or whose
// conversation lost an earlier answer (deleted), is an error matching ErrResponseNotFound.
func (g *Gateway) ResponseInputItems(ctx context.Context, owner, id string) ([]ResponsesItem, error) {
	last, err := g.storedResponse(ctx, owner, id)
	if err != nil {
		return nil, err
	}
	var items []ResponsesItem
	if last.Previous != "" {
		chain, err := g.responseChain(ctx, owner, last.Previous, 0)
		var ve *ValidationError
		if errors.As(err, &ve) && errors.Is(err, ErrResponseNotFound) {
			// Not a fault of this request's: the answer's conversation is incomplete.
			return nil, &responseNotFoundError{id: id, msg: fmt.Sprintf("the items of response %q are no longer all stored: an earlier answer of its conversation was deleted or expired", id)}
		}
		if err != nil {
			return nil, err
		}
		for _, l := range chain {
			items = append(items, l.Items...)
		}
	}
	return append(items, last.Input...), nil
}

// DeleteResponse deletes the answer id kept for owner; the answers that continue it can no
// longer be continued, on any replica (a tombstone says so until the answer's time would
// have been over). An id not kept for owner is an error matching ErrResponseNotFound.
func (g *Gateway) DeleteResponse(ctx context.Context, owner, id string) error {
	rec, err := g.storedResponse(ctx, owner, id)
	if err != nil {
		return err
	}
	err = g.opts.Store.Update(ctx, func(tx store.Tx) error {
		// The record as it is now: a background run may have written its answer (and
		// indexed its items) since the read above.
		cur, err := readRecord(ctx, tx, id)
		if err != nil {
			return err
		}
		if cur == nil {
			return &responseNotFoundError{id: id} // deleted meanwhile
		}
		rec = cur
		if err := deleteStoredResponse(ctx, tx, id, rec); err != nil {
			return err
		}
		// Under the answer's owner, whose chains it breaks (the deleter may be its issuer).
		return tx.Put(ctx, store.ResponseTombstones, ownerKey(rec.Owner)+"/"+id, []byte(strconv.FormatInt(tombstoneUntil(rec.Expires, g.opts.Now()).Unix(), 10)))
	})
	if errors.Is(err, ErrResponseNotFound) {
		return err
	}
	if err != nil {
		return fmt.Errorf("completions: delete response %s: %w", id, err)
	}
	g.bg.cancel(id, errBackgroundLost) // a background run of this process stops; another's at its heartbeat
	g.forget(id, rec)
	return nil
}

// forget drops what this process keeps of the deleted answer id (rec): its chain link and
// its items kept for item_reference.
func (g *Gateway) forget(id string, rec *storedResponse) {
	g.keptResponses.delete(id)
	for _, out := range rec.Response.Output {
		g.answered.delete(itemKey(rec.Owner, out.ID))
	}
}

// deleteStoredResponse removes the record of answer id (rec) and its index entries.
func deleteStoredResponse(ctx context.Context, tx store.Tx, id string, rec *storedResponse) error {
	if err := tx.Delete(ctx, store.Responses, id); err != nil {
		return err
	}
	if err := tx.Delete(ctx, store.ResponseExpiry, expiryKey(rec.Expires, id)); err != nil {
		return err
	}
	if rec.Stream != nil { // its recorded stream events (bounded: BackgroundStreamMaxEvents)
		events, err := tx.List(ctx, store.ResponseEvents, store.ListOptions{Prefix: id + "/"})
		if err != nil {
			return err
		}
		for _, e := range events {
			if err := tx.Delete(ctx, store.ResponseEvents, e.Key); err != nil {
				return err
			}
		}
	}
	for _, out := range rec.Response.Output {
		key := out.ID
		// Only the index entry that still names this answer goes (an item id given twice
		// would be the later answer's).
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
	if g.opts.Store == nil { // answers kept before StoredResponses was Off expire all the same
		return 0, nil
	}
	if err := g.sweepTombstones(ctx, now); err != nil {
		return 0, err
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
			var rec storedResponse
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
				if err := json.Unmarshal(b, &rec); err != nil || rec.Response == nil {
					rec = storedResponse{Response: &ResponseObject{}}
					return tx.Delete(ctx, store.Responses, id) // unreadable: nothing to index
				}
				return deleteStoredResponse(ctx, tx, id, &rec)
			})
			if err != nil {
				return deleted, fmt.Errorf("completions: sweep response %s: %w", id, err)
			}
			if rec.Response != nil {
				g.forget(id, &rec)
			}
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

// sweepTombstones deletes the tombstones of deleted answers whose time would be over by now.
func (g *Gateway) sweepTombstones(ctx context.Context, now time.Time) error {
	for after := ""; ; {
		page, err := g.opts.Store.List(ctx, store.ResponseTombstones, store.ListOptions{After: after, Limit: 256})
		if err != nil {
			return fmt.Errorf("completions: sweep deleted responses: %w", err)
		}
		for _, e := range page {
			if at, err := strconv.ParseInt(string(e.Value), 10, 64); err != nil || !time.Unix(at, 0).After(now) {
				if err := g.opts.Store.Delete(ctx, store.ResponseTombstones, e.Key); err != nil {
					return fmt.Errorf("completions: sweep deleted responses: %w", err)
				}
			}
		}
		if len(page) < 256 {
			return nil
		}
		after = page[len(page)-1].Key
	}
}

// neverExpires is the expiry of an answer kept until deleted (StoredResponsesOptions.NoExpiry):
// past any sweep's now, and last in the store.ResponseExpiry index, where a sweep stops.
var neverExpires = time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)

// responseExpiry is when an answer stored at now expires.
func (g *Gateway) responseExpiry(now time.Time) time.Time {
	if g.opts.StoredResponses.NoExpiry {
		return neverExpires
	}
	ttl := g.opts.StoredResponses.TTL
	if ttl <= 0 {
		ttl = DefaultResponsesTTL
	}
	return now.Add(ttl)
}

// tombstoneUntil is how long the tombstone of an answer expiring at, deleted at now, is
// kept: until the answer would have expired, but for an answer kept until deleted only as
// long as a process may keep a copy of it (recentTTL), so that tombstones do not pile up.
func tombstoneUntil(expires, now time.Time) time.Time {
	if !expires.Before(neverExpires) {
		return now.Add(recentTTL)
	}
	return expires
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

// ownerKey is owner in the keys of the collections indexed by owner: a hash (owners are
// free-form and may contain "/").
func ownerKey(owner string) string {
	h := sha256.Sum256([]byte(owner))
	return hex.EncodeToString(h[:8])
}

// storedItem finds output item id of owner's stored answers, for an item_reference.
func (g *Gateway) storedItem(ctx context.Context, owner, id string) (ResponsesItem, bool, error) {
	if !g.StoresResponses() {
		return ResponsesItem{}, false, nil
	}
	// Keyed by the item id alone (ids name their answer: msg_<message>, fc_<message>_<k>,
	// …); the answer's owner is checked as for a read of it (an issuer reaches its keys').
	rid, err := g.opts.Store.Get(ctx, store.ResponseItems, id)
	if errors.Is(err, store.ErrNotFound) {
		return ResponsesItem{}, false, nil
	}
	if err != nil {
		return ResponsesItem{}, false, fmt.Errorf("completions: read item %s: %w", id, err)
	}
	rec, err := g.storedResponse(ctx, owner, string(rid))
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
