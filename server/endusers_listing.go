package server

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/switchyard-ai/switchyard/store"
)

// The end users of a key are listed oldest first (by created_at, then id), a page at a
// time: GET /api/v1/customers takes the listing parameters of every other listing (limit,
// cursor, created_after, created_before) and answers next_cursor until its last page;
// LiteLLM's /customer/list answers all of them as LiteLLM's does, or a page by number
// (page, page_size) as LiteLLM's /key/list does. How many end users a key may have is
// bounded (Config.MaxEndUsersPerKey), so listing them is bounded too.

// endUserCursorKind marks the cursors of end user listings.
const endUserCursorKind = "end_user"

// endUserRecords returns owner's end users oldest first (created_at, then id), without
// their spend.
func (s *Server) endUserRecords(ctx context.Context, owner string) ([]endUser, error) {
	es, err := s.cfg.Store.List(ctx, store.EndUsers, store.ListOptions{Prefix: owner + "/"})
	if err != nil {
		return nil, fmt.Errorf("server: listing end users: %w", err)
	}
	out := make([]endUser, 0, len(es))
	for _, e := range es {
		var rec storedEndUser
		if err := json.Unmarshal(e.Value, &rec); err != nil {
			return nil, fmt.Errorf("server: end user record %s: %w", e.Key, err)
		}
		out = append(out, rec.endUser)
	}
	slices.SortStableFunc(out, func(a, b endUser) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.EndUserID, b.EndUserID))
	})
	return out, nil
}

// listEndUsers returns owner's end users, oldest first, with their spend.
func (s *Server) listEndUsers(ctx context.Context, owner string) ([]endUser, error) {
	out, err := s.endUserRecords(ctx, owner)
	if err != nil {
		return nil, err
	}
	for i := range out {
		out[i] = s.endUserWithSpend(ctx, owner, out[i])
	}
	return out, nil
}

// endUserCursor is the cursor that continues a listing after e.
func endUserCursor(e endUser) string {
	return base64.RawURLEncoding.EncodeToString([]byte(endUserCursorKind + "|" + strconv.FormatInt(e.CreatedAt.UnixNano(), 10) + "|" + e.EndUserID))
}

// afterEndUserCursor reports whether e comes after the position of cursor c (decoded by
// parseEndUserCursor).
func afterEndUserCursor(e endUser, nanos int64, id string) bool {
	n := e.CreatedAt.UnixNano()
	return n > nanos || (n == nanos && e.EndUserID > id)
}

// parseEndUserCursor decodes a cursor endUserCursor made, or answers 422 naming cursor.
func parseEndUserCursor(c string) (int64, string, error) {
	bad := Validation(http.StatusUnprocessableEntity, "cursor: is not a cursor of this listing (pass next_cursor of the previous page unchanged)")
	bad.Param = "cursor"
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return 0, "", bad
	}
	parts := strings.SplitN(string(b), "|", 3)
	if len(parts) != 3 || parts[0] != endUserCursorKind || parts[2] == "" {
		return 0, "", bad
	}
	n, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil {
		return 0, "", bad
	}
	return n, parts[2], nil
}

// endUserPage returns one page of owner's end users, oldest first, with their spend:
// those created in f's window after f.Cursor, at most f.Limit (store.DefaultPageLimit
// when 0), and the cursor of the next page ("" on the last).
func (s *Server) endUserPage(ctx context.Context, owner string, f store.ListFilter) (endUserList, error) {
	if len(f.Status) > 0 {
		v := Validation(http.StatusUnprocessableEntity, "status: end users have no status to filter on")
		v.Param = "status"
		return endUserList{}, v
	}
	if !f.CreatedAfter.IsZero() && !f.CreatedBefore.IsZero() && !f.CreatedAfter.Before(f.CreatedBefore) {
		v := Validation(http.StatusUnprocessableEntity, "created_after: must be before created_before")
		v.Param = "created_after"
		return endUserList{}, v
	}
	var nanos int64
	var after string
	if f.Cursor != "" {
		var err error
		if nanos, after, err = parseEndUserCursor(f.Cursor); err != nil {
			return endUserList{}, err
		}
	}
	limit := f.Limit
	if limit == 0 {
		limit = store.DefaultPageLimit
	}
	all, err := s.endUserRecords(ctx, owner)
	if err != nil {
		return endUserList{}, err
	}
	out := endUserList{Object: "list", Data: make([]endUser, 0, limit)}
	for _, e := range all {
		switch {
		case f.Cursor != "" && !afterEndUserCursor(e, nanos, after):
		case !f.CreatedAfter.IsZero() && e.CreatedAt.Before(f.CreatedAfter):
		case !f.CreatedBefore.IsZero() && !e.CreatedAt.Before(f.CreatedBefore):
		case len(out.Data) == limit:
			out.NextCursor = endUserCursor(out.Data[limit-1])
			return out, nil
		default:
			out.Data = append(out.Data, s.endUserWithSpend(ctx, owner, e))
		}
	}
	return out, nil
}

// endUserListParams documents the query parameters of GET /api/v1/customers.
func endUserListParams() []QueryParam {
	ps := listParams("")
	ps[1].Description = "next_cursor of the previous page; absent: the oldest end users"
	return ps
}
