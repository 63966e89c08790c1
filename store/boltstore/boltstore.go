// Package boltstore is the default store driver: one bbolt database file, one bucket per
// collection. Every write is a durable bbolt transaction.
//
// bbolt takes an exclusive file lock; Open waits at most Options.LockTimeout for it and then
// fails with an error matching store.ErrLocked instead of hanging.
//
// Open checks the file before bbolt maps it (bbolt faults on a truncated file rather than
// returning an error): a damaged file fails with an error matching store.ErrCorrupt that names
// the file and says to restore it from a backup or move it aside. An empty file is a new
// database.
//
// Backups: a running Driver writes a consistent copy of its file (WriteBackup, BackupTo;
// Snapshots on a schedule); a file no process has open is copied by BackupFile, checked by
// Verify and put back by Restore.
//
// It builds where bbolt does: Unix systems and Windows (lockfile_unix.go,
// lockfile_windows.go). bbolt has no file locking or memory mapping for js, wasip1 or
// plan9, so neither has this package; use another store driver there.
package boltstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/internal/nesting"
)

// Options configures Open. The zero value is usable.
type Options struct {
	// LockTimeout bounds the wait for the file lock held by another process (default 2 s).
	LockTimeout time.Duration
	// NoSync skips fsync after each commit; faster, but a power cut may lose recent writes.
	// For tests and benchmarks only.
	NoSync bool
	// NoGroupCommit makes every write commit (and fsync) alone. By default, writes that
	// arrive while a commit is in progress share the next commit; a lone write never waits.
	NoGroupCommit bool
	// Logger receives a line for each file of a restore cut short that OpenDriver removes
	// (default: none).
	Logger *slog.Logger
}

// Open opens (creating if needed) the bbolt database at path and returns a Store on it.
// Missing parent directories are created (mode 0700: the file holds API keys and user
// data); the file itself is created with mode 0600.
func Open(path string, opts Options) (*store.Store, error) {
	d, err := OpenDriver(path, opts)
	if err != nil {
		return nil, err
	}
	return store.New(d), nil
}

// Driver is a store.Driver on a bbolt database.
type Driver struct {
	db    *bolt.DB
	group *groupCommit
	nest  nesting.Marker // marks fn's runs, to refuse an Update nested in one
}

// OpenDriver opens the database at path, creating it and its parent directories as Open
// does. Once it holds the file's lock it removes the temporary files a restore cut short
// (a crash or a kill of `switchyard restore`) left beside it: .<path's name>.<digits>.tmp
// (on Windows, where a restore cannot hold the lock while it writes, only those untouched
// for a minute).
func OpenDriver(path string, opts Options) (*Driver, error) {
	if opts.LockTimeout <= 0 {
		opts.LockTimeout = 2 * time.Second
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("boltstore: create directory for %s: %w", path, err)
	}
	if err := checkFile(path); err != nil {
		return nil, err
	}
	var db *bolt.DB
	for attempt := 0; ; attempt++ {
		before, _ := os.Stat(path)
		var err error
		db, err = bolt.Open(path, 0o600, &bolt.Options{Timeout: opts.LockTimeout, NoSync: opts.NoSync})
		if err != nil {
			if errors.Is(err, berrors.ErrTimeout) {
				return nil, fmt.Errorf("boltstore: %s: %w (waited %s)", path, store.ErrLocked, opts.LockTimeout)
			}
			return nil, fileError("open", path, err)
		}
		// A restore replaces the file at path while holding the lock of the one there: a
		// process that opened the file before and waited for its lock holds the replaced
		// file, whose writes nobody would read again. Open path again then (and once
		// after creating it, as a restore may have put its file there meanwhile).
		if attempt < 3 && !sameFile(before, path) {
			db.Close()
			continue
		}
		break
	}
	// Holding the lock: a restore cut short by a crash left its temporary copy beside the
	// file, as large as the database; nothing else would remove it.
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	removeUnfinishedRestores(path, log)
	d := &Driver{db: db}
	if !opts.NoGroupCommit {
		d.group = &groupCommit{db: db, maxSize: 1000}
	}
	return d, nil
}

// sameFile reports whether the file at path is still before (nil: there was none).
func sameFile(before os.FileInfo, path string) bool {
	now, err := os.Stat(path)
	return before != nil && err == nil && os.SameFile(before, now)
}

func wrap(err error) error {
	if errors.Is(err, berrors.ErrDatabaseNotOpen) {
		return fmt.Errorf("boltstore: %w", store.ErrClosed)
	}
	if unwritable(err) {
		return fmt.Errorf("boltstore: %w: %w", store.ErrUnwritable, err)
	}
	return err
}

// unwritable reports whether err is the file system refusing a write for want of space or
// because it is read-only: bbolt rolls such a commit back, and the same write succeeds once
// the fault clears.
func unwritable(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) || errors.Is(err, syscall.EROFS)
}

type notFoundError struct {
	c   store.Collection
	key string
}

func (e *notFoundError) Error() string        { return "store: " + string(e.c) + "/" + e.key + " not found" }
func (e *notFoundError) Is(target error) bool { return target == store.ErrNotFound }

// Get implements store.Driver.
func (d *Driver) Get(ctx context.Context, c store.Collection, key string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []byte
	err := d.db.View(func(btx *bolt.Tx) error {
		var err error
		out, err = (&boltTx{btx}).Get(ctx, c, key)
		return err
	})
	return out, wrap(err)
}

// List implements store.Driver.
func (d *Driver) List(ctx context.Context, c store.Collection, opts store.ListOptions) ([]store.Entry, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []store.Entry
	err := d.db.View(func(btx *bolt.Tx) error {
		var err error
		out, err = (&boltTx{btx}).List(ctx, c, opts)
		return err
	})
	return out, wrap(err)
}

// Put implements store.Driver.
func (d *Driver) Put(ctx context.Context, c store.Collection, key string, value []byte) error {
	return d.Update(ctx, func(tx store.Tx) error { return tx.Put(ctx, c, key, value) })
}

// Delete implements store.Driver.
func (d *Driver) Delete(ctx context.Context, c store.Collection, key string) error {
	return d.Update(ctx, func(tx store.Tx) error { return tx.Delete(ctx, c, key) })
}

// Update implements store.Driver with one bbolt read-write transaction.
//
// Called from inside fn of an Update of this driver on the same goroutine, which
// store.Driver forbids, it returns an error matching store.ErrNested at once, as do Put
// and Delete there: it would wait for ever for bbolt's writer lock, or for the group
// commit running fn, which the outer Update holds until fn returns. Inside another
// driver's function it goes on, unless an Update of this one is running its function on
// another goroutine at the time (store/internal/nesting cannot tell the two apart then).
func (d *Driver) Update(ctx context.Context, fn func(tx store.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d.nest.Inside() {
		return fmt.Errorf("boltstore: update: %w", store.ErrNested)
	}
	if d.group != nil {
		return wrap(d.group.update(func(btx *bolt.Tx) error { return d.nest.Run(fn, &boltTx{btx}) }))
	}
	return wrap(d.db.Update(func(btx *bolt.Tx) error { return d.nest.Run(fn, &boltTx{btx}) }))
}

// Close implements store.Driver.
func (d *Driver) Close() error { return d.db.Close() }

type boltTx struct{ tx *bolt.Tx }

func (t *boltTx) Get(ctx context.Context, c store.Collection, key string) ([]byte, error) {
	b := t.tx.Bucket([]byte(c))
	if b == nil {
		return nil, &notFoundError{c, key}
	}
	v := b.Get([]byte(key))
	if v == nil {
		return nil, &notFoundError{c, key}
	}
	return append([]byte(nil), v...), nil
}

func (t *boltTx) List(ctx context.Context, c store.Collection, opts store.ListOptions) ([]store.Entry, error) {
	b := t.tx.Bucket([]byte(c))
	if b == nil {
		return nil, nil
	}
	if opts.Descending {
		return listDescending(ctx, b, opts)
	}
	var out []store.Entry
	cur := b.Cursor()
	prefix := []byte(opts.Prefix)
	var k, v []byte
	if opts.After != "" && opts.After >= opts.Prefix {
		k, v = cur.Seek([]byte(opts.After))
		if k != nil && string(k) == opts.After {
			k, v = cur.Next()
		}
	} else {
		k, v = cur.Seek(prefix)
	}
	for ; k != nil && bytes.HasPrefix(k, prefix); k, v = cur.Next() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		out = append(out, store.Entry{Key: string(k), Value: append([]byte(nil), v...)})
		if opts.Limit > 0 && len(out) >= opts.Limit {
			break
		}
	}
	return out, nil
}

// listDescending is List with opts.Descending: from the last key below the page's upper
// bound (After, or the end of Prefix's keys) towards the first.
func listDescending(ctx context.Context, b *bolt.Bucket, opts store.ListOptions) ([]store.Entry, error) {
	prefix := []byte(opts.Prefix)
	upper := prefixEnd(prefix) // nil: no bound
	if opts.After != "" && (upper == nil || opts.After < string(upper)) {
		upper = []byte(opts.After)
	}
	cur := b.Cursor()
	var k, v []byte
	if upper == nil {
		k, v = cur.Last()
	} else if k, v = cur.Seek(upper); k == nil {
		k, v = cur.Last()
	} else {
		k, v = cur.Prev()
	}
	var out []store.Entry
	for ; k != nil && bytes.HasPrefix(k, prefix); k, v = cur.Prev() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		out = append(out, store.Entry{Key: string(k), Value: append([]byte(nil), v...)})
		if opts.Limit > 0 && len(out) >= opts.Limit {
			break
		}
	}
	return out, nil
}

// prefixEnd is the first key after every key that starts with prefix, or nil when there
// is none (an empty prefix, or one of 0xff bytes only).
func prefixEnd(prefix []byte) []byte {
	end := bytes.Clone(prefix)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

func (t *boltTx) Put(ctx context.Context, c store.Collection, key string, value []byte) error {
	b, err := t.tx.CreateBucketIfNotExists([]byte(c))
	if err != nil {
		return fmt.Errorf("boltstore: bucket %s: %w", c, err)
	}
	return b.Put([]byte(key), append([]byte(nil), value...))
}

func (t *boltTx) Delete(ctx context.Context, c store.Collection, key string) error {
	b := t.tx.Bucket([]byte(c))
	if b == nil {
		return nil
	}
	return b.Delete([]byte(key))
}
