package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// MultiGetter is implemented by a Reader that reads several records of one collection in
// one go: pgstore in one query, boltstore in one read transaction, memstore under one
// lock. GetMany uses it when the reader has it; a listing that would otherwise read one
// record per row (a page of preferences, each naming a router model) reads them together.
type MultiGetter interface {
	// GetMany returns the values stored under keys in c, by key; a key without a record
	// is absent from the map (not an error). keys holds no empty key (GetMany checks).
	GetMany(ctx context.Context, c Collection, keys []string) (map[string][]byte, error)
}

// GetMany returns the values stored under keys in c, by key, those without a record
// absent: in one read when r is a MultiGetter (a *Store whose driver is one), else one
// Get per distinct key. An empty key or collection is ErrInvalid.
func GetMany(ctx context.Context, r Reader, c Collection, keys []string) (map[string][]byte, error) {
	for _, k := range keys {
		if err := check(c, k); err != nil {
			return nil, err
		}
	}
	if len(keys) == 0 {
		return map[string][]byte{}, nil
	}
	if m, ok := r.(MultiGetter); ok {
		return m.GetMany(ctx, c, keys)
	}
	return getEach(ctx, r, c, keys)
}

// GetMany implements MultiGetter: in one read when the driver is a MultiGetter, else one
// Get per distinct key.
func (s *Store) GetMany(ctx context.Context, c Collection, keys []string) (map[string][]byte, error) {
	if s == nil || s.d == nil {
		return nil, ErrNoDriver
	}
	return GetMany(ctx, s.d, c, keys)
}

// getEach is GetMany of a reader that reads one record at a time.
func getEach(ctx context.Context, r Reader, c Collection, keys []string) (map[string][]byte, error) {
	out := make(map[string][]byte, len(keys))
	read := make(map[string]bool, len(keys)) // found or not: a key repeated is read once
	for _, k := range keys {
		if read[k] {
			continue
		}
		read[k] = true
		v, err := r.Get(ctx, c, k)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out[k] = v
	}
	return out, nil
}

// GetManyJSON is GetMany decoding each record found as JSON into a T.
func GetManyJSON[T any](ctx context.Context, r Reader, c Collection, keys []string) (map[string]T, error) {
	raw, err := GetMany(ctx, r, c, keys)
	if err != nil {
		return nil, err
	}
	out := make(map[string]T, len(raw))
	for k, b := range raw {
		var v T
		if err := json.Unmarshal(b, &v); err != nil {
			return nil, fmt.Errorf("store: decode %s/%s: %w", c, k, err)
		}
		out[k] = v
	}
	return out, nil
}
