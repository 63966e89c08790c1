package server

import (
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/switchyard-ai/switchyard/store"
)

// Records a key has a bounded number of (end users, users) are listed from memory oldest
// first (by created_at, then id), a page at a time: createdPage takes the listing
// parameters of every other listing (limit, cursor, created_after, created_before) and
// answers the cursor of the next page until the last. A cursor names its listing's kind,
// so one listing's cursor is refused by another.

// checkCreatedFilter refuses, with a 422 naming the parameter, what a listing of records
// without states cannot do: a status filter (what names the records, "end users") or a
// window that ends before it starts.
func checkCreatedFilter(f store.ListFilter, what string) error {
	if len(f.Status) > 0 {
		v := Validation(http.StatusUnprocessableEntity, "status: %s have no status to filter on", what)
		v.Param = "status"
		return v
	}
	if !f.CreatedAfter.IsZero() && !f.CreatedBefore.IsZero() && !f.CreatedAfter.Before(f.CreatedBefore) {
		v := Validation(http.StatusUnprocessableEntity, "created_after: must be before created_before")
		v.Param = "created_after"
		return v
	}
	return nil
}

// createdCursor is the cursor of kind that continues a listing after the record created
// at created with id.
func createdCursor(kind string, created time.Time, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(kind + "|" + strconv.FormatInt(created.UnixNano(), 10) + "|" + id))
}

// parseCreatedCursor decodes a cursor createdCursor made for kind, or answers 422 naming
// cursor.
func parseCreatedCursor(kind, c string) (int64, string, error) {
	bad := Validation(http.StatusUnprocessableEntity, "cursor: is not a cursor of this listing (pass next_cursor of the previous page unchanged)")
	bad.Param = "cursor"
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return 0, "", bad
	}
	parts := strings.SplitN(string(b), "|", 3)
	if len(parts) != 3 || parts[0] != kind || parts[2] == "" {
		return 0, "", bad
	}
	n, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil {
		return 0, "", bad
	}
	return n, parts[2], nil
}

// createdPage returns the page of all (oldest first, by key's created_at then id) that f
// asks for: the records created in f's window after f.Cursor (a cursor of kind), at most
// f.Limit (store.DefaultPageLimit when 0), and the cursor of the next page ("" on the
// last).
func createdPage[T any](f store.ListFilter, kind string, all []T, key func(T) (time.Time, string)) ([]T, string, error) {
	var nanos int64
	var after string
	if f.Cursor != "" {
		var err error
		if nanos, after, err = parseCreatedCursor(kind, f.Cursor); err != nil {
			return nil, "", err
		}
	}
	limit := f.Limit
	if limit == 0 {
		limit = store.DefaultPageLimit
	}
	out := make([]T, 0, min(limit, len(all)))
	for _, r := range all {
		created, id := key(r)
		n := created.UnixNano()
		switch {
		case f.Cursor != "" && !(n > nanos || (n == nanos && id > after)):
		case !f.CreatedAfter.IsZero() && created.Before(f.CreatedAfter):
		case !f.CreatedBefore.IsZero() && !created.Before(f.CreatedBefore):
		case len(out) == limit:
			created, id := key(out[limit-1])
			return out, createdCursor(kind, created, id), nil
		default:
			out = append(out, r)
		}
	}
	return out, "", nil
}
