package server

import (
	"context"
	"errors"
	"fmt"

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

// paramNotFound is a 404 whose OpenAI-style envelope names param.
func paramNotFound(param, format string, args ...any) *APIError {
	e := NotFound(format, args...)
	e.Param = param
	return e
}
