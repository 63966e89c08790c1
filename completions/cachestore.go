package completions

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
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

// Put implements CacheDriver: the entry and its store.ResponseCacheExpiry key in one
// transaction, with the key of the entry it replaces deleted when that expired at another
// time.
func (c *StoreCache) Put(ctx context.Context, key string, value []byte, stored, expires time.Time) error {
	b := make([]byte, storeCacheHeader+len(value))
	binary.BigEndian.PutUint64(b, uint64(stored.UnixNano()))
	binary.BigEndian.PutUint64(b[8:], uint64(expires.UnixNano()))
	copy(b[storeCacheHeader:], value)
	index := cacheExpiryKey(expires, key)
	err := c.st.Update(ctx, func(tx store.Tx) error {
		old, err := tx.Get(ctx, store.ResponseCache, key)
		switch {
		case errors.Is(err, store.ErrNotFound):
		case err != nil:
			return err
		default:
			if _, was, ok := storeCacheTimes(old); ok && cacheExpiryKey(was, key) != index {
				if err := tx.Delete(ctx, store.ResponseCacheExpiry, cacheExpiryKey(was, key)); err != nil {
					return err
				}
			}
		}
		if err := tx.Put(ctx, store.ResponseCache, key, b); err != nil {
			return err
		}
		return tx.Put(ctx, store.ResponseCacheExpiry, index, nil)
	})
	if err != nil {
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
				b, err := tx.Get(ctx, store.ResponseCache, e.Key)
				if errors.Is(err, store.ErrNotFound) {
					continue
				} else if err != nil {
					return err
				}
				if err := deleteCacheEntry(ctx, tx, e.Key, b); err != nil {
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
// deleted. Serve runs it periodically; it stops when ctx ends. It reads the expiry index
// (store.ResponseCacheExpiry) oldest first up to now, and only the entries it names: the
// entries kept cost nothing but the index page where it stops. Each entry is read again
// in the transaction that deletes it, so one written again meanwhile (a fresh answer
// under its key) stays. The first Sweep of a store written by a build without the index
// indexes the entries it kept (see indexEarlierEntries).
func (c *StoreCache) Sweep(ctx context.Context, now time.Time) (int, error) {
	removed, err := c.indexEarlierEntries(ctx, now)
	if err != nil {
		return removed, fmt.Errorf("completions: sweeping the response cache: %w", err)
	}
	for after := ""; ; {
		page, err := c.st.List(ctx, store.ResponseCacheExpiry, store.ListOptions{After: after, Limit: sweepPage})
		if err != nil {
			return removed, fmt.Errorf("completions: sweeping the response cache: %w", err)
		}
		due := 0
		for _, e := range page {
			if at, _, ok := parseCacheExpiryKey(e.Key); ok && at.After(now) {
				break
			}
			due++
		}
		if due > 0 {
			deleted := 0
			err := c.st.Update(ctx, func(tx store.Tx) error {
				deleted = 0 // the store may run this more than once
				for _, e := range page[:due] {
					gone, err := sweepCacheIndexKey(ctx, tx, e.Key, now)
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
		if due < len(page) || len(page) < sweepPage {
			return removed, nil
		}
		after = page[len(page)-1].Key
		if err := ctx.Err(); err != nil {
			return removed, err
		}
	}
}

// sweepCacheIndexKey deletes the expiry index key index, due by now, and the entry it
// names if that is (still) expired, read inside tx. An entry written again since with a
// later expiry stays, and keeps an index key of its own (its writer put one; one written
// by an earlier build gets one here).
func sweepCacheIndexKey(ctx context.Context, tx store.Tx, index string, now time.Time) (bool, error) {
	if err := tx.Delete(ctx, store.ResponseCacheExpiry, index); err != nil {
		return false, err
	}
	_, key, ok := parseCacheExpiryKey(index)
	if !ok {
		return false, nil // not a key this code writes: nothing to delete with it
	}
	b, err := tx.Get(ctx, store.ResponseCache, key)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if _, expires, ok := storeCacheTimes(b); ok && now.Before(expires) {
		return false, tx.Put(ctx, store.ResponseCacheExpiry, cacheExpiryKey(expires, key), nil)
	}
	return true, deleteCacheEntry(ctx, tx, key, b)
}

// cacheIndexMigration names, in store.Migrations, the one-time scan that indexed the
// entries kept before store.ResponseCacheExpiry existed.
const cacheIndexMigration = "response_cache_expiry_index"

// indexEarlierEntries makes sure every entry has its expiry index key: entries written
// by a build before the index have none, and no indexed sweep would find them. When
// store.MigrationDue says so (never ran, or ran once a day ago: replicas of the earlier
// build may have written more meanwhile), it reads every entry, a page a transaction,
// deletes the expired ones (returning how many) and indexes the others, then records
// that it ran. Stopped half way (ctx, an error), the next Sweep runs it again.
func (c *StoreCache) indexEarlierEntries(ctx context.Context, now time.Time) (int, error) {
	if due, err := store.MigrationDue(ctx, c.st, cacheIndexMigration, now); err != nil || !due {
		return 0, err
	}
	removed := 0
	for after := ""; ; {
		page, err := c.st.List(ctx, store.ResponseCache, store.ListOptions{After: after, Limit: sweepPage})
		if err != nil {
			return removed, err
		}
		deleted := 0
		err = c.st.Update(ctx, func(tx store.Tx) error {
			deleted = 0 // the store may run this more than once
			for _, e := range page {
				if _, expires, ok := storeCacheTimes(e.Value); ok && now.Before(expires) {
					// Written again since the listing, the entry has its own key too; this
					// one, if earlier, is deleted by a later sweep (sweepCacheIndexKey).
					if err := tx.Put(ctx, store.ResponseCacheExpiry, cacheExpiryKey(expires, e.Key), nil); err != nil {
						return err
					}
					continue
				}
				gone, err := deleteIfExpired(ctx, tx, e.Key, now)
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
			return removed, err
		}
		removed += deleted
		if len(page) < sweepPage {
			break
		}
		after = page[len(page)-1].Key
		if err := ctx.Err(); err != nil {
			return removed, err
		}
	}
	return removed, store.MigrationRan(ctx, c.st, cacheIndexMigration, now)
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
	return true, deleteCacheEntry(ctx, tx, key, b)
}

// deleteCacheEntry deletes key's entry, whose stored value is b, and its expiry index key.
func deleteCacheEntry(ctx context.Context, tx store.Tx, key string, b []byte) error {
	if err := tx.Delete(ctx, store.ResponseCache, key); err != nil {
		return err
	}
	if _, expires, ok := storeCacheTimes(b); ok {
		return tx.Delete(ctx, store.ResponseCacheExpiry, cacheExpiryKey(expires, key))
	}
	return nil
}

// cacheExpiryKey is the store.ResponseCacheExpiry key of the entry key expiring at: the
// time first (Unix nanoseconds, 19 digits; a time before 1970 as 0), so that the index
// lists the soonest expiry first.
func cacheExpiryKey(at time.Time, key string) string {
	return fmt.Sprintf("%019d/%s", max(at.UnixNano(), 0), key)
}

// parseCacheExpiryKey reads a cacheExpiryKey.
func parseCacheExpiryKey(index string) (time.Time, string, bool) {
	ns, key, ok := strings.Cut(index, "/")
	n, err := strconv.ParseInt(ns, 10, 64)
	if !ok || err != nil || key == "" {
		return time.Time{}, "", false
	}
	return time.Unix(0, n), key, true
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
