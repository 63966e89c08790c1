package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/switchyard-ai/switchyard/store"
)

// ownedRecord reads owner's record id of collection coll (stored under "<owner>/<id>")
// through rd. An id with no record, or one that cannot be a store key, is notFound's
// error; any other failure names what was read.
func ownedRecord[T any](ctx context.Context, rd store.Reader, coll store.Collection, owner, id, what string, notFound func() error) (T, error) {
	rec, err := store.GetJSON[T](ctx, rd, coll, owner+"/"+id)
	if errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrInvalid) {
		return rec, notFound()
	}
	if err != nil {
		return rec, fmt.Errorf("server: reading %s %s: %w", what, id, err)
	}
	return rec, nil
}

// unreachableIDProblem is the refusal of the id of a record being made when it is "." or
// ".." (nil for any other id): a URL path cleans those segments away, so the record's
// /api/v1/.../{id} routes could not reach it. what names whose id it is ("a user's"),
// status is the surface's (400 on LiteLLM's routes, 422 on the native ones).
func unreachableIDProblem(field, id, what string, status int) *APIError {
	if id != "." && id != ".." {
		return nil
	}
	e := Validation(status, "%s: %q cannot be %s id (a URL path cannot name it)", field, id, what)
	e.Param = field
	return e
}

// paramNotFound is a 404 whose OpenAI-style envelope names param.
func paramNotFound(param, format string, args ...any) *APIError {
	e := NotFound(format, args...)
	e.Param = param
	return e
}

// getOwned answers a GET of one owned record: get's answer for the path's param, as JSON.
func getOwned[T any](param string, get func(ctx context.Context, owner, id string) (T, error)) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		out, err := get(r.Context(), owner(r), r.PathValue(param))
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, out)
		return nil
	}
}

// patchOwned answers a PATCH of one owned record: a 404 (exists' error) for an unknown
// one before the body is read, then update with the body as it came (its fields say what
// changes), its answer as JSON.
func patchOwned[T any](param string, exists func(ctx context.Context, owner, id string) error,
	update func(ctx context.Context, owner, id string, body json.RawMessage) (T, error)) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		id := r.PathValue(param)
		if err := exists(r.Context(), owner(r), id); err != nil {
			return err
		}
		var body json.RawMessage
		if err := decodeJSON(r, &body, decodeOptions{AllowUnknownFields: true}); err != nil {
			return err
		}
		out, err := update(r.Context(), owner(r), id, body)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, out)
		return nil
	}
}
