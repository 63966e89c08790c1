package boltstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/switchyard-ai/switchyard/store"
)

// WriteBackup writes a copy of the whole database to w as one read transaction sees it:
// writes committed while it runs go on and are not in the copy, which is itself a bbolt
// file Open takes as it is. It returns the bytes written. Cancelling ctx stops it between
// writes.
//
// A long copy holds its read transaction: a write that needs the file to grow waits for it.
func (d *Driver) WriteBackup(ctx context.Context, w io.Writer) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	var n int64
	err := d.db.View(func(tx *bolt.Tx) error {
		var err error
		n, err = tx.WriteTo(&ctxWriter{ctx: ctx, w: w})
		return err
	})
	return n, wrap(err)
}

// BackupTo writes a copy of the database (as WriteBackup) to the file path, mode 0600,
// creating its directory (0700). The copy goes to a temporary file in that directory that
// is synced and then renamed to path, so path holds either a whole copy or what it held
// before; a failed copy leaves nothing behind, and one a crash cut short leaves its
// temporary file only until the next backup to path, which removes it once an hour old.
func (d *Driver) BackupTo(ctx context.Context, path string) (int64, error) {
	return writeFileAtomically(path, func(w io.Writer) (int64, error) { return d.WriteBackup(ctx, w) }, nil)
}

// BackupFile copies the database file src, which no process may have open for writing, to
// dst as BackupTo does. It opens src read-only, waiting at most opts.LockTimeout (default
// 2 s) for a writer's lock: a server running on src makes it fail with an error matching
// store.ErrLocked (take that server's backups with Driver.BackupTo instead).
func BackupFile(ctx context.Context, src, dst string, opts Options) (int64, error) {
	return backupFile(ctx, src, dst, opts, nil)
}

// backupFile is BackupFile, with finish (when set) run on the synced copy before it is
// renamed into place.
func backupFile(ctx context.Context, src, dst string, opts Options, finish func(tmp string) error) (int64, error) {
	db, err := openReadOnly(src, opts)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	return writeFileAtomically(dst, func(w io.Writer) (int64, error) {
		var n int64
		err := db.View(func(tx *bolt.Tx) error {
			var err error
			n, err = tx.WriteTo(&ctxWriter{ctx: ctx, w: w})
			return err
		})
		return n, err
	}, finish)
}

// Verify checks, without changing it, that the file at path is a whole bbolt database whose
// pages are consistent: the checks Open makes before it maps a file, then bbolt's own
// consistency check of every page and bucket. A damaged file fails with an error matching
// store.ErrCorrupt naming the file and the first faults found; a missing or empty file fails
// too (it is no backup). A file a server holds open fails with store.ErrLocked after
// opts.LockTimeout.
func Verify(ctx context.Context, path string, opts Options) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fileError("stat", path, err)
	}
	if fi.IsDir() || fi.Size() == 0 {
		return fmt.Errorf("boltstore: %s is not a database file (%s): %w", path, map[bool]string{true: "a directory", false: "empty"}[fi.IsDir()], store.ErrCorrupt)
	}
	db, err := openReadOnly(path, opts)
	if err != nil {
		return err
	}
	defer db.Close()
	return db.View(func(tx *bolt.Tx) error {
		var faults []error
		for err := range tx.Check() {
			if len(faults) < 3 {
				faults = append(faults, err)
			}
			if ctx.Err() != nil {
				break
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if len(faults) > 0 {
			return fmt.Errorf("boltstore: %s is damaged (%w): %w", path, errors.Join(faults...), store.ErrCorrupt)
		}
		return nil
	})
}

// Restore replaces the database file at path with a copy of the backup src, after Verify
// passes on src. The file it replaces is kept beside it as path.before-restore-<UTC time>
// (returned as aside; "" when path did not exist). It holds path's lock while it works, so
// a server running on path makes it fail with an error matching store.ErrLocked and
// changes nothing, and path is never missing meanwhile: a server starting during a restore
// waits for it and then opens the restored file (OpenDriver opens path again when the file
// there changed while it waited for the lock). On Windows, which cannot rename a file over
// an open one, it checks that no process has path open instead, and a server that opens it
// before the restored file is renamed into place makes the rename, and Restore, fail with
// store.ErrLocked, path left as it was.
func Restore(ctx context.Context, src, path string, opts Options) (aside string, err error) {
	placeholder := false
	if err := Verify(ctx, src, opts); err != nil {
		return "", err
	}
	if abs, err1 := filepath.Abs(src); err1 == nil {
		if dst, err2 := filepath.Abs(path); err2 == nil && abs == dst {
			return "", fmt.Errorf("boltstore: restore %s onto itself", path)
		}
	}
	if opts.LockTimeout <= 0 {
		opts.LockTimeout = 2 * time.Second
	}
	if _, err := os.Stat(path); err == nil {
		if err := checkFile(path); err != nil && !errors.Is(err, store.ErrCorrupt) {
			return "", err
		}
		// A damaged file is what one restores over: only its lock matters, taken through
		// the lock file bbolt uses (the database file itself) without mapping it.
		unlock, err := lockFile(path, opts.LockTimeout)
		if err != nil {
			return "", err
		}
		defer unlock()
		aside = path + ".before-restore-" + time.Now().UTC().Format("20060102T150405Z")
		for i := 2; ; i++ { // never over an earlier restore's
			if _, err := os.Lstat(aside); os.IsNotExist(err) {
				break
			}
			aside = fmt.Sprintf("%s.before-restore-%s-%d", path, time.Now().UTC().Format("20060102T150405Z"), i)
		}
		// A second name for the file (a copy on Windows) rather than a rename: path never
		// goes missing, so a server starting meanwhile opens it and waits for its lock
		// (then finds the restored file there) instead of creating a new one the restore
		// would replace.
		if err := keepAside(path, aside); err != nil {
			return "", fileError("keep a copy of", path, err)
		}
	} else if os.IsNotExist(err) {
		// No file to replace: an empty one holding the lock stands in its place, so a server
		// starting meanwhile waits for the restored file rather than making one of its own
		// that the restore would then replace under it.
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return "", fileError("create directory for", path, err)
		}
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return "", fileError("create", path, err)
		}
		f.Close()
		unlock, err := lockFile(path, opts.LockTimeout)
		if err != nil {
			return "", err
		}
		defer unlock()
		placeholder = true
	} else {
		return "", fileError("stat", path, err)
	}
	if restoreLocked != nil {
		restoreLocked()
	}
	// An earlier restore cut short left its copy: this one holds the lock it held.
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	removeUnfinishedRestores(path, log)
	if _, err := BackupFile(ctx, src, path, opts); err != nil {
		if replaceRefused(path, err) {
			// Windows, where the lock cannot be held across the rename (lockFile): a
			// server opened the file meanwhile, and the rename left it as it was.
			err = fmt.Errorf("boltstore: %s was opened by another process during the restore: %w: %w", path, store.ErrLocked, err)
		} else if placeholder {
			os.Remove(path)
		}
		if aside != "" {
			os.Remove(aside) // path is still the file it names
		}
		return "", err
	}
	return aside, nil
}

// restoreLocked, when set (by tests), runs once Restore holds the lock of the file it
// replaces.
var restoreLocked func()

// openReadOnly opens path for reading, with the checks Open makes first; it shares the
// file's lock with other readers and waits opts.LockTimeout for a writer's.
func openReadOnly(path string, opts Options) (*bolt.DB, error) {
	if opts.LockTimeout <= 0 {
		opts.LockTimeout = 2 * time.Second
	}
	if _, err := os.Stat(path); err != nil {
		return nil, fileError("stat", path, err)
	}
	if err := checkFile(path); err != nil {
		return nil, err
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: opts.LockTimeout, ReadOnly: true})
	if err != nil {
		if errors.Is(err, berrors.ErrTimeout) {
			return nil, fmt.Errorf("boltstore: %s: %w (waited %s)", path, store.ErrLocked, opts.LockTimeout)
		}
		return nil, fileError("open", path, err)
	}
	return db, nil
}

// writeFileAtomically makes path from what write writes, through a synced temporary file
// in path's directory (named .<path's name>.<digits>.tmp) renamed into place; finish, when
// set, runs on the closed temporary file before the rename. It first removes such files of
// path an earlier write cut short left there (removeStaleTemporaries).
func writeFileAtomically(path string, write func(io.Writer) (int64, error), finish func(tmp string) error) (int64, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return 0, fileError("create directory for", path, err)
	}
	removeStaleTemporaries(path, time.Now())
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return 0, fileError("create", path, err)
	}
	tmp := f.Name()
	n, err := write(f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && finish != nil {
		err = finish(tmp)
	}
	if err == nil {
		err = os.Chmod(tmp, 0o600)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return 0, err
		}
		return 0, wrap(fileError("write", path, err))
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync() // the rename itself survives a crash
		d.Close()
	}
	return n, nil
}

// ctxWriter stops a copy once its context ends.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c *ctxWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}
