package server

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/switchyard-ai/switchyard/store"
)

// The end users of a key are listed oldest first (by created_at, then id), a page at a
// time: GET /api/v1/customers takes the listing parameters of every other listing (limit,
// cursor, created_after, created_before) and answers next_cursor until its last page;
// LiteLLM's /customer/list answers all of them as LiteLLM's does, or a page by number
// (page, page_size) as LiteLLM's /key/list does. How many end users a key may have is
// bounded (Config.MaxEndUsersPerKey), so listing them is bounded too.

// endUserCursorKind marks the cursors of end user listings (createdCursor).
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

// endUserPage returns one page of owner's end users, oldest first, with their spend:
// those created in f's window after f.Cursor, at most f.Limit (store.DefaultPageLimit
// when 0), and the cursor of the next page ("" on the last).
func (s *Server) endUserPage(ctx context.Context, owner string, f store.ListFilter) (endUserList, error) {
	if err := checkCreatedFilter(f, "end users"); err != nil {
		return endUserList{}, err
	}
	all, err := s.endUserRecords(ctx, owner)
	if err != nil {
		return endUserList{}, err
	}
	page, next, err := createdPage(f, endUserCursorKind, all, func(e endUser) (time.Time, string) { return e.CreatedAt, e.EndUserID })
	if err != nil {
		return endUserList{}, err
	}
	for i := range page {
		page[i] = s.endUserWithSpend(ctx, owner, page[i])
	}
	return endUserList{Object: "list", Data: page, NextCursor: next}, nil
}

// endUserListParams documents the query parameters of GET /api/v1/customers.
func endUserListParams() []QueryParam {
	ps := listParams("")
	ps[1].Description = "next_cursor of the previous page; absent: the oldest end users"
	return ps
}
