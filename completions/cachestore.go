package completions

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/switchyard-ai/switchyard/store"
)

// StoreCache is a CacheDriver on a store.Store (collection store.ResponseCache): on
// PostgreSQL every replica shares it, and on either backend it survives restarts. An
// expired entry is deleted when it is read; Sweep deletes the others. Make one with
// NewStoreCache; it is safe for concurrent use.
type StoreCache struct {
	st *store.Store
}

// NewStoreCache returns a StoreCache keeping its entries in st.
func NewStoreCache(st *store.Store) *StoreCache { return &StoreCache{st: st} }

// storeCacheHeader is the stored and expiry times (Unix nanoseconds) ahead of a value.
const storeCacheHeader = 16

// Get implements CacheDriver.
func (c *StoreCache) Get(ctx context.Context, key string, now time.Time) ([]byte, time.Time, error) {
	b, err := c.st.Get(ctx, store.ResponseCache, key)
	if errors.Is(err, store.ErrNotFound) {
		return nil, time.Time{}, ErrCacheMiss
	}
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("completions: response cache: %w", err)
	}
	stored, expires, ok := storeCacheTimes(b)
	if !ok || !now.Before(expires) {
		if err := c.deleteExpired(ctx, key, now); err != nil {
			return nil, time.Time{}, fmt.Errorf("completions: response cache: deleting an expired entry: %w", err)
		}
		return nil, time.Time{}, ErrCacheMiss
	}
	return b[storeCacheHeader:], stored, nil
}

// Put implements CacheDriver.
func (c *StoreCache) Put(ctx context.Context, key string, value []byte, stored, expires time.Time) error {
	b := make([]byte, storeCacheHeader+len(value))
	binary.BigEndian.PutUint64(b, uint64(stored.UnixNano()))
	binary.BigEndian.PutUint64(b[8:], uint64(expires.UnixNano()))
	copy(b[storeCacheHeader:], value)
	if err := c.st.Put(ctx, store.ResponseCache, key, b); err != nil {
		return fmt.Errorf("completions: response cache: %w", err)
	}
	return nil
}

// DeletePrefix implements CacheDriver, a page of entries per transaction.
func (c *StoreCache) DeletePrefix(ctx context.Context, prefix string) (int, error) {
	removed := 0
	for {
		page, err := c.st.List(ctx, store.ResponseCache, store.ListOptions{Prefix: prefix, Limit: sweepPage})
		if err != nil {
			return removed, fmt.Errorf("completions: response cache: %w", err)
		}
		if len(page) == 0 {
			return removed, nil
		}
		deleted := 0
		err = c.st.Update(ctx, func(tx store.Tx) error {
			deleted = 0 // the store may run this more than once
			for _, e := range page {
				// Counted only if still there: another purge may have deleted it since.
				if _, err := tx.Get(ctx, store.ResponseCache, e.Key); errors.Is(err, store.ErrNotFound) {
					continue
				} else if err != nil {
					return err
				}
				if err := tx.Delete(ctx, store.ResponseCache, e.Key); err != nil {
					return err
				}
				deleted++
			}
			return nil
		})
		if err != nil {
			return removed, fmt.Errorf("completions: response cache: %w", err)
		}
		removed += deleted
		if len(page) < sweepPage {
			return removed, nil
		}
	}
}

// sweepPage is how many entries Sweep reads (and at most deletes) per transaction: with
// entries of up to CacheOptions.MaxEntryBytes (1 MiB by default), at most 64 MiB a page.
const sweepPage = 64

// Sweep deletes the entries expired by now, a page at a time, and returns how many it
// deleted. Serve runs it periodically; it stops when ctx ends.
func (c *StoreCache) Sweep(ctx context.Context, now time.Time) (int, error) {
	removed, after := 0, ""
	for {
		page, err := c.st.List(ctx, store.ResponseCache, store.ListOptions{After: after, Limit: sweepPage})
		if err != nil {
			return removed, fmt.Errorf("completions: sweeping the response cache: %w", err)
		}
		var expired []string
		for _, e := range page {
			if _, expires, ok := storeCacheTimes(e.Value); !ok || !now.Before(expires) {
				expired = append(expired, e.Key)
			}
		}
		if len(expired) > 0 {
			deleted := 0
			err := c.st.Update(ctx, func(tx store.Tx) error {
				deleted = 0 // the store may run this more than once
				for _, k := range expired {
					gone, err := deleteIfExpired(ctx, tx, k, now)
					if err != nil {
						return err
					}
					if gone {
						deleted++
					}
				}
				return nil
			})
			if err != nil {
				return removed, fmt.Errorf("completions: sweeping the response cache: %w", err)
			}
			removed += deleted
		}
		if len(page) < sweepPage {
			return removed, nil
		}
		after = page[len(page)-1].Key
	}
}

// deleteExpired deletes key's entry if it is (still) expired by now.
func (c *StoreCache) deleteExpired(ctx context.Context, key string, now time.Time) error {
	return c.st.Update(ctx, func(tx store.Tx) error {
		_, err := deleteIfExpired(ctx, tx, key, now)
		return err
	})
}

// deleteIfExpired deletes key's entry when it is expired by now, read inside tx: another
// process may have put a fresh answer there since it was read outside.
func deleteIfExpired(ctx context.Context, tx store.Tx, key string, now time.Time) (bool, error) {
	b, err := tx.Get(ctx, store.ResponseCache, key)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if _, expires, ok := storeCacheTimes(b); ok && now.Before(expires) {
		return false, nil
	}
	return true, tx.Delete(ctx, store.ResponseCache, key)
}

// storeCacheTimes reads the header of a stored entry.
func storeCacheTimes(b []byte) (stored, expires time.Time, ok bool) {
	if len(b) < storeCacheHeader {
		return time.Time{}, time.Time{}, false
	}
	return time.Unix(0, int64(binary.BigEndian.Uint64(b))), time.Unix(0, int64(binary.BigEndian.Uint64(b[8:]))), true
}

// ListPrefix implements CacheLister: the entries under prefix not expired by now, up to
// limit, a page at a time.
func (c *StoreCache) ListPrefix(ctx context.Context, prefix string, now time.Time, limit int) ([]CacheEntry, error) {
	var out []CacheEntry
	after := ""
	for len(out) < limit {
		page, err := c.st.List(ctx, store.ResponseCache, store.ListOptions{Prefix: prefix, After: after, Limit: sweepPage})
		if err != nil {
			return out, fmt.Errorf("completions: response cache: %w", err)
		}
		for _, e := range page {
			stored, expires, ok := storeCacheTimes(e.Value)
			if !ok || !now.Before(expires) || len(out) >= limit {
				continue
			}
			out = append(out, CacheEntry{Key: e.Key, Value: e.Value[storeCacheHeader:], Stored: stored, Expires: expires})
		}
		if len(page) < sweepPage {
			break
		}
		after = page[len(page)-1].Key
	}
	return out, nil
}
