package store

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The owner index lists what an owner (an API key) has, newest first, without reading
// anyone else's records. Each owned record has one entry in the OwnerIndex collection,
// written and deleted in the same transaction as the record itself:
//
//	<kind>/<owner, path-escaped>/<creation time, inverted, 16 hex digits>/<id>  →  ""
//
// The creation time is stored as the bitwise complement of its Unix nanoseconds, so the
// store's ascending key order is newest first, and a time window is a key range. Entries
// never change after they are written: creation time and owner are fixed for a record's
// life, and filters on fields that change (a job's status) are applied to the records.

// Page sizes of ListOwned.
const (
	// DefaultPageLimit is the page size when OwnedQuery.Limit is 0.
	DefaultPageLimit = 20
	// MaxPageLimit is the largest page ListOwned returns.
	MaxPageLimit = 100
)

// ErrBadCursor means a cursor was not one ListOwned returned. A *QueryError naming the
// cursor matches it (and ErrInvalid).
var ErrBadCursor = errors.New("store: cursor is not one this server returned")

// OwnedRef locates one owned record in the owner index.
type OwnedRef struct {
	// Kind names the record type, e.g. "training_job"; one index per kind.
	Kind string
	// Owner is the record's owner.
	Owner string
	// Created is the record's creation time; it orders the listing.
	Created time.Time
	// ID is the record's key in its own collection.
	ID string
}

func ownedPrefix(kind, owner string) string {
	return kind + "/" + url.PathEscape(owner) + "/"
}

// ownedTime is the 16-hex-digit sort key of t: later times sort first. t is held to
// 1970-2262, where UnixNano is defined and not negative: no record is created outside it,
// and a query window's bound beyond it (created_after=-1) then means what it says.
func ownedTime(t time.Time) string {
	if first := time.Unix(0, 0); t.Before(first) {
		t = first
	} else if last := time.Unix(0, math.MaxInt64); t.After(last) {
		t = last
	}
	return fmt.Sprintf("%016x", ^uint64(t.UnixNano()))
}

func (r OwnedRef) key() string {
	return ownedPrefix(r.Kind, r.Owner) + ownedTime(r.Created) + "/" + r.ID
}

func (r OwnedRef) check() error {
	if r.Kind == "" || strings.ContainsAny(r.Kind, "/#") {
		return fmt.Errorf("%w: owner index kind %q", ErrInvalid, r.Kind)
	}
	if r.ID == "" || strings.Contains(r.ID, "/") {
		return fmt.Errorf("%w: owner index id %q", ErrInvalid, r.ID)
	}
	return nil
}

// PutOwned adds r's index entry. Call it in the transaction that creates the record, so
// that a record is never without its entry.
func PutOwned(ctx context.Context, w Writer, r OwnedRef) error {
	if err := r.check(); err != nil {
		return err
	}
	return w.Put(ctx, OwnerIndex, r.key(), nil)
}

// DeleteOwned removes r's index entry. Call it in the transaction that deletes the record.
func DeleteOwned(ctx context.Context, w Writer, r OwnedRef) error {
	if err := r.check(); err != nil {
		return err
	}
	return w.Delete(ctx, OwnerIndex, r.key())
}

// OwnedQuery selects one page of an owner's records of one kind, newest first.
type OwnedQuery struct {
	// Kind and Owner select the index.
	Kind, Owner string
	// CreatedAfter keeps records created at or after it; zero: no lower bound.
	CreatedAfter time.Time
	// CreatedBefore keeps records created strictly before it; zero: no upper bound. With
	// CreatedAfter the window is half-open, so consecutive windows neither overlap nor
	// leave gaps.
	CreatedBefore time.Time
	// Cursor continues after the last record of the page that returned it; "" starts with
	// the newest record.
	Cursor string
	// Limit is the page size, 1 to MaxPageLimit; 0 means DefaultPageLimit.
	Limit int
	// OldestFirst lists the records oldest first instead (and a Cursor continues towards
	// newer records), reading the index backwards: a page costs what it costs newest first.
	OldestFirst bool
	// Except, when set, leaves out the records that also have an entry in that index at
	// the same position (creation time and id): the records of this index that are not in
	// a smaller one, such as all of an owner's requests but the failed ones, indexed apart
	// too. ListOwned and CountOwned then read both indexes side by side, keys only: the
	// records left out are not loaded, and a page's cursor is in this index.
	Except *OwnedIndex
}

// OwnedIndex names one owner index: the entries of one owner's records of one kind.
type OwnedIndex struct {
	Kind, Owner string
}

// CursorAfter returns the cursor that continues a listing of r's kind and owner after r:
// what a page ending with r returns as its next cursor (in either order). APIs whose
// clients page by the id of the last record they saw (OpenAI's after) turn that record's
// reference into a cursor with it.
func CursorAfter(r OwnedRef) string {
	return encodeCursor(r.Kind, ownedTime(r.Created)+"/"+r.ID)
}

// ListFilter is what a caller asks of a listing of its own records, newest first: the
// options every List method of the capability packages takes. Status values are checked
// by the package that knows its states; the rest by OwnedQuery.Check.
type ListFilter struct {
	// Status keeps only records in one of these states; empty keeps all.
	Status []string
	// CreatedAfter keeps records created at or after it; zero: no lower bound.
	CreatedAfter time.Time
	// CreatedBefore keeps records created strictly before it; zero: no upper bound.
	CreatedBefore time.Time
	// Limit is the page size, 1 to MaxPageLimit; 0 means DefaultPageLimit.
	Limit int
	// Cursor is the next cursor of the previous page; "" starts with the newest record.
	Cursor string
}

// Query is the owner-index query of f for owner's records of kind.
func (f ListFilter) Query(kind, owner string) OwnedQuery {
	return OwnedQuery{Kind: kind, Owner: owner, CreatedAfter: f.CreatedAfter, CreatedBefore: f.CreatedBefore,
		Cursor: f.Cursor, Limit: f.Limit}
}

// QueryError names the field of a listing query that breaks a rule, by its wire name
// (limit, cursor, created_after). It matches ErrInvalid, and ErrBadCursor when the
// cursor is at fault.
type QueryError struct {
	// Field is the query parameter.
	Field string
	// Message states the rule.
	Message string
}

// Error implements error.
func (e *QueryError) Error() string { return e.Field + " " + e.Message }

// Is makes a *QueryError match ErrInvalid, and ErrBadCursor for the cursor.
func (e *QueryError) Is(target error) bool {
	return target == ErrInvalid || (target == ErrBadCursor && e.Field == "cursor")
}

// Check reports the first field of q that is out of range, as a *QueryError.
func (q OwnedQuery) Check() error {
	if q.Limit < 0 || q.Limit > MaxPageLimit {
		return &QueryError{Field: "limit", Message: fmt.Sprintf("must be 1-%d, got %d", MaxPageLimit, q.Limit)}
	}
	if !q.CreatedAfter.IsZero() && !q.CreatedBefore.IsZero() && !q.CreatedAfter.Before(q.CreatedBefore) {
		return &QueryError{Field: "created_after", Message: "must be before created_before"}
	}
	if q.Cursor != "" {
		if _, err := decodeCursor(q.Kind, q.Cursor); err != nil {
			return err
		}
	}
	return nil
}

// encodeCursor makes the opaque cursor of an index position (the key after the prefix) in
// a listing of kind: the kind is part of it, so a cursor is refused by another listing.
func encodeCursor(kind, pos string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(kind + "|" + pos))
}

func decodeCursor(kind, c string) (string, error) {
	bad := &QueryError{Field: "cursor", Message: "is not a cursor this server returned (pass next_cursor of the previous page unchanged)"}
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return "", bad
	}
	k, pos, ok := strings.Cut(string(b), "|")
	if !ok {
		return "", bad
	}
	if k != kind {
		return "", &QueryError{Field: "cursor", Message: "is the cursor of another listing (pass next_cursor of this listing's previous page)"}
	}
	t, id, ok := strings.Cut(pos, "/")
	if !ok || len(t) != 16 || id == "" || strings.Contains(id, "/") {
		return "", bad
	}
	if _, err := strconv.ParseUint(t, 16, 64); err != nil {
		return "", bad
	}
	return pos, nil
}

// ListOwned returns one page of q.Owner's records of q.Kind, newest first, and the cursor
// of the next page ("" when no record is left). load reads the record of each indexed id
// and says whether it belongs on the page: a record that is gone (an entry whose record
// was deleted meanwhile) or that a filter rejects answers false and is skipped. A query
// that fails Check returns its *QueryError.
//
// Pages are stable under concurrent writes: records created after the first page sort
// before every cursor and never appear on later pages, and a deleted record is simply
// absent, so paging through neither repeats nor misses a record that exists throughout.
func ListOwned[T any](ctx context.Context, r Reader, q OwnedQuery, load func(id string) (T, bool, error)) ([]T, string, error) {
	if err := q.Check(); err != nil {
		return nil, "", err
	}
	limit := q.Limit
	if limit == 0 {
		limit = DefaultPageLimit
	}
	// The index is newest first: oldest first reads it backwards. from is where the page
	// starts (strictly after it, in the listing's order), stop where the window ends.
	prefix := ownedPrefix(q.Kind, q.Owner)
	// The window: entries at or below newer were created at or after CreatedBefore, those
	// above older before CreatedAfter.
	newer, older := "", ""
	if !q.CreatedBefore.IsZero() {
		// "~" sorts after "/<id>": the entries created exactly at CreatedBefore are skipped.
		newer = prefix + ownedTime(q.CreatedBefore) + "~"
	}
	if !q.CreatedAfter.IsZero() {
		older = prefix + ownedTime(q.CreatedAfter) + "~"
	}
	cursor := ""
	if q.Cursor != "" {
		pos, _ := decodeCursor(q.Kind, q.Cursor) // checked above
		cursor = prefix + pos
	}
	from, stop := max(cursor, newer), older
	past := func(key string) bool { return stop != "" && key > stop }
	if q.OldestFirst {
		from, stop = older, newer
		if cursor != "" && (from == "" || cursor < from) {
			from = cursor
		}
		past = func(key string) bool { return stop != "" && key <= stop }
	}
	except := newExceptScan(r, q.Except, prefix, from, q.OldestFirst)
	items := make([]T, 0, limit)
	last := ""
	batch := limit + 1
	for {
		entries, err := r.List(ctx, OwnerIndex, ListOptions{Prefix: prefix, After: from, Limit: batch, Descending: q.OldestFirst})
		if err != nil {
			return nil, "", err
		}
		for _, e := range entries {
			if past(e.Key) {
				return items, "", nil
			}
			if out, err := except.has(ctx, e.Key[len(prefix):]); err != nil {
				return nil, "", err
			} else if out {
				continue
			}
			v, ok, err := load(e.Key[len(prefix)+17:])
			if err != nil {
				return nil, "", err
			}
			if !ok {
				continue
			}
			if len(items) == limit { // one more exists: the page is full
				return items, encodeCursor(q.Kind, last[len(prefix):]), nil
			}
			items = append(items, v)
			last = e.Key
		}
		if len(entries) < batch {
			return items, "", nil
		}
		from = entries[len(entries)-1].Key
		batch = min(batch*2, 1000)
	}
}

// OwnedBackfill indexes, once per store, the records of one kind that were stored before
// the owner index existed. The zero value is ready to use; it is safe for concurrent use.
type OwnedBackfill struct {
	mu   sync.Mutex
	done bool
}

// backfillBatch is how many records one backfill transaction indexes.
const backfillBatch = 256

// Ensure makes sure every record of collection c has its index entry of kind: the first
// call on a store that has not been backfilled yet reads every record of c (ref gives its
// index reference, ok false skips it) and writes the missing entries in batches, then
// marks the kind done in the store so that later processes skip the scan. Records created
// meanwhile are indexed by their own transactions; a record deleted meanwhile is not
// indexed again (each batch re-reads its records).
func (b *OwnedBackfill) Ensure(ctx context.Context, s *Store, kind string, c Collection, ref func(e Entry) (OwnedRef, bool)) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done {
		return nil
	}
	marker := kind + "#indexed"
	if _, err := s.Get(ctx, OwnerIndex, marker); err == nil {
		b.done = true
		return nil
	} else if !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("store: owner index of %s: %w", kind, err)
	}
	after := ""
	for {
		entries, err := s.List(ctx, c, ListOptions{After: after, Limit: backfillBatch})
		if err != nil {
			return fmt.Errorf("store: owner index of %s: list %s: %w", kind, c, err)
		}
		var refs []OwnedRef
		for _, e := range entries {
			if r, ok := ref(e); ok && r.check() == nil {
				refs = append(refs, r)
			}
		}
		if len(refs) > 0 {
			err = s.Update(ctx, func(tx Tx) error {
				for _, r := range refs {
					if _, err := tx.Get(ctx, c, r.ID); errors.Is(err, ErrNotFound) {
						continue // deleted since the listing
					} else if err != nil {
						return err
					}
					if err := PutOwned(ctx, tx, r); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				return fmt.Errorf("store: owner index of %s: %w", kind, err)
			}
		}
		if len(entries) < backfillBatch {
			break
		}
		after = entries[len(entries)-1].Key
	}
	if err := s.Put(ctx, OwnerIndex, marker, []byte(time.Now().UTC().Format(time.RFC3339))); err != nil {
		return fmt.Errorf("store: owner index of %s: %w", kind, err)
	}
	b.done = true
	return nil
}

// Owns reports whether requester may reach a record of owner: its own, and those of the
// owners below it — "<requester>/<sub-owner>", such as the virtual keys and job keys an API
// key issued. A sub-owner does not reach its parent's records, nor a sibling's.
func Owns(requester, owner string) bool {
	return owner == requester || requester != "" && strings.HasPrefix(owner, requester+"/")
}

// CountOwned counts the index entries of q.Owner's records of q.Kind within q's time
// window (q.Cursor, q.Limit and q.OldestFirst aside; q.Except's entries left out) without
// reading the records: what ListOwned would list with a load that keeps every record. It
// reads the index only, countBatch keys at a time.
func CountOwned(ctx context.Context, r Reader, q OwnedQuery) (int, error) {
	q.Cursor, q.Limit = "", 0
	if err := q.Check(); err != nil {
		return 0, err
	}
	prefix := ownedPrefix(q.Kind, q.Owner)
	from, stop := "", ""
	if !q.CreatedBefore.IsZero() {
		from = prefix + ownedTime(q.CreatedBefore) + "~"
	}
	if !q.CreatedAfter.IsZero() {
		stop = prefix + ownedTime(q.CreatedAfter) + "~"
	}
	except := newExceptScan(r, q.Except, prefix, from, false)
	const countBatch = 1000
	n := 0
	for {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		entries, err := r.List(ctx, OwnerIndex, ListOptions{Prefix: prefix, After: from, Limit: countBatch})
		if err != nil {
			return n, err
		}
		for _, e := range entries {
			if stop != "" && e.Key > stop {
				return n, nil
			}
			if out, err := except.has(ctx, e.Key[len(prefix):]); err != nil {
				return n, err
			} else if out {
				continue
			}
			n++
		}
		if len(entries) < countBatch {
			return n, nil
		}
		from = entries[len(entries)-1].Key
	}
}

// ListOwnedRefs returns up to limit (1 to 1000) entries of the owner index of kind, every
// owner's, in key order (owner by owner, each newest first), starting after the position
// after ("": the first), and the position the next page starts after ("" when none is
// left). It is for maintenance that visits every entry of a kind (finding entries whose
// record is gone), not for listings. An entry whose key cannot be read as one is skipped.
func ListOwnedRefs(ctx context.Context, r Reader, kind, after string, limit int) ([]OwnedRef, string, error) {
	if limit < 1 || limit > 1000 {
		return nil, "", fmt.Errorf("%w: owner index page of %d entries", ErrInvalid, limit)
	}
	prefix := kind + "/"
	from := ""
	if after != "" {
		from = prefix + after
	}
	entries, err := r.List(ctx, OwnerIndex, ListOptions{Prefix: prefix, After: from, Limit: limit})
	if err != nil {
		return nil, "", err
	}
	refs := make([]OwnedRef, 0, len(entries))
	for _, e := range entries {
		parts := strings.Split(e.Key[len(prefix):], "/")
		if len(parts) != 3 || len(parts[1]) != 16 {
			continue
		}
		owner, err := url.PathUnescape(parts[0])
		inv, err2 := strconv.ParseUint(parts[1], 16, 64)
		if err != nil || err2 != nil {
			continue
		}
		refs = append(refs, OwnedRef{Kind: kind, Owner: owner, Created: time.Unix(0, int64(^inv)), ID: parts[2]})
	}
	next := ""
	if len(entries) == limit {
		next = entries[len(entries)-1].Key[len(prefix):]
	}
	return refs, next, nil
}

// exceptScan reads OwnedQuery.Except's index alongside a listing of another index, in the
// listing's order, to say which of the listing's positions it has. A nil *exceptScan has
// none.
type exceptScan struct {
	r      Reader
	prefix string
	desc   bool
	after  string   // the key the next read continues after ("": from the first)
	ahead  []string // positions read and not passed yet, in the listing's order
	end    bool     // nothing follows ahead
	batch  int
}

// newExceptScan reads ix (nil: no scan) for a listing of the index with prefix from its
// key from (exclusive; "": the first), in descending key order when desc.
func newExceptScan(r Reader, ix *OwnedIndex, prefix, from string, desc bool) *exceptScan {
	if ix == nil {
		return nil
	}
	x := &exceptScan{r: r, prefix: ownedPrefix(ix.Kind, ix.Owner), desc: desc, batch: 64}
	if from != "" {
		x.after = x.prefix + from[len(prefix):]
	}
	return x
}

// has reports whether the scanned index has an entry at pos (a key without its prefix:
// creation time and id). Each call's pos follows the last one's in the listing's order.
func (x *exceptScan) has(ctx context.Context, pos string) (bool, error) {
	if x == nil {
		return false, nil
	}
	for {
		for len(x.ahead) > 0 && (!x.desc && x.ahead[0] < pos || x.desc && x.ahead[0] > pos) {
			x.ahead = x.ahead[1:]
		}
		if len(x.ahead) > 0 || x.end {
			return len(x.ahead) > 0 && x.ahead[0] == pos, nil
		}
		entries, err := x.r.List(ctx, OwnerIndex, ListOptions{Prefix: x.prefix, After: x.after, Limit: x.batch, Descending: x.desc})
		if err != nil {
			return false, err
		}
		for _, e := range entries {
			x.ahead = append(x.ahead, e.Key[len(x.prefix):])
		}
		x.end = len(entries) < x.batch
		if len(entries) > 0 {
			x.after = entries[len(entries)-1].Key
		}
		x.batch = min(x.batch*2, 1000)
	}
}
