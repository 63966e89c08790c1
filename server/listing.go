package server

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/store"
)

// listParams documents the query parameters of every listing route; withStatus adds the
// status filter with its states.
func listParams(states string) []QueryParam {
	ps := []QueryParam{
		{Name: "limit", Description: "page size 1-100 (default 20)", Type: "integer", Minimum: Bound(1), Maximum: Bound(store.MaxPageLimit)},
		{Name: "cursor", Description: "next_cursor of the previous page; absent: the newest records"},
		{Name: "created_after", Description: "keep records created at or after this time (RFC 3339 or Unix seconds)"},
		{Name: "created_before", Description: "keep records created strictly before this time (RFC 3339 or Unix seconds)"},
	}
	if states != "" {
		ps = append(ps, QueryParam{Name: "status", Repeated: true, Description: "keep records in these states (comma-separated or repeated): " + states})
	}
	return ps
}

// listFilter reads the listing query parameters (limit, cursor, created_after,
// created_before, status); a malformed one is a 422 naming it. Ranges and states are
// checked by the package that lists.
func listFilter(r *http.Request) (store.ListFilter, error) {
	q := r.URL.Query()
	var f store.ListFilter
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > store.MaxPageLimit {
			return f, Validation(http.StatusUnprocessableEntity, "limit must be an integer 1-%d, got %q", store.MaxPageLimit, v)
		}
		f.Limit = n
	}
	f.Cursor = q.Get("cursor")
	for _, name := range []string{"created_after", "created_before"} {
		v := q.Get(name)
		if v == "" {
			continue
		}
		t, err := parseQueryTime(v)
		if err != nil {
			return f, Validation(http.StatusUnprocessableEntity, "%s must be an RFC 3339 time (2026-01-02T15:04:05Z) or Unix seconds, got %q", name, v)
		}
		if name == "created_after" {
			f.CreatedAfter = t
		} else {
			f.CreatedBefore = t
		}
	}
	for _, v := range q["status"] {
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				f.Status = append(f.Status, s)
			}
		}
	}
	return f, nil
}

func parseQueryTime(v string) (time.Time, error) {
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return time.Unix(n, 0).UTC(), nil
	}
	return time.Parse(time.RFC3339Nano, v)
}

// listing answers a listing route with list: the calling key's records, filtered by the
// query's limit, cursor, created_after, created_before and status.
func listing[T any](list func(ctx context.Context, owner string, f store.ListFilter) (T, error)) HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		f, err := listFilter(r)
		if err != nil {
			return err
		}
		out, err := list(r.Context(), owner(r), f)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, out)
		return nil
	}
}

// deletion answers a delete route with del on the id in the path wildcard param.
func deletion[T any](param string, del func(ctx context.Context, owner, id string) (T, error)) HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		d, err := del(r.Context(), owner(r), r.PathValue(param))
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, d)
		return nil
	}
}

// conversationRoutes adds the listing, reading and deleting of a key's conversations.
func (s *Server) conversationRoutes(g *completions.Gateway) {
	tags := []string{"Conversations"}
	notFound := map[int]string{http.StatusNotFound: "no conversation of this key has the id given"}
	s.Handle(Route{Method: "GET", Path: "/api/v1/conversations", Summary: "List this key's conversations, newest first",
		Query: listParams(""), Response: completions.ConversationList{}, Tags: tags},
		listing(g.ListConversations))
	s.Handle(Route{Method: "GET", Path: "/api/v1/conversations/{conversation_id}", Summary: "One conversation of this key (without its messages)",
		Response: completions.ConversationSummary{}, Tags: tags, Errors: notFound},
		func(w http.ResponseWriter, r *http.Request) error {
			c, _, err := g.Conversation(r.Context(), owner(r), r.PathValue("conversation_id"))
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, c.Summary())
			return nil
		})
	s.Handle(Route{Method: "GET", Path: "/api/v1/conversations/{conversation_id}/messages", Summary: "The messages of a conversation, oldest first",
		Query: listParams("")[:2], Response: completions.MessagePage{}, Tags: tags,
		Errors: map[int]string{http.StatusNotFound: notFound[http.StatusNotFound], http.StatusUnprocessableEntity: "a bad limit or cursor or a filter the messages do not take: the message names it"}},
		func(w http.ResponseWriter, r *http.Request) error {
			f, err := listFilter(r)
			if err != nil {
				return err
			}
			for _, name := range []string{"created_after", "created_before", "status"} {
				if r.URL.Query().Has(name) {
					// Not silently ignored: a conversation's messages are one ordered page set.
					return Validation(http.StatusUnprocessableEntity, "%s: the messages of a conversation take only limit and cursor", name)
				}
			}
			page, err := g.Messages(r.Context(), owner(r), r.PathValue("conversation_id"), f.Limit, f.Cursor)
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, page)
			return nil
		})
	s.Handle(Route{Method: "DELETE", Path: "/api/v1/conversations/{conversation_id}", Summary: "Delete a conversation and all its messages",
		Response: completions.Deletion{}, Tags: tags, Errors: notFound},
		deletion("conversation_id", g.DeleteConversation))
}
