//go:build unix

package boltstore

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/switchyard-ai/switchyard/store"
)

// restoreHoldsLock says that Restore holds the database's lock (lockFile) until the
// restored file is in place, so a process holding the lock knows no restore is writing.
const restoreHoldsLock = true

// lockFile takes the exclusive lock bbolt takes on a database file (flock on the file
// itself), waiting at most timeout for a process that holds it; unlock releases it. It
// neither reads nor maps the file, so it works on a damaged one.
func lockFile(path string, timeout time.Duration) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, fileError("open", path, err)
	}
	deadline := time.Now().Add(timeout)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() {
				syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
				f.Close()
			}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fileError("lock", path, err)
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("boltstore: %s: %w (waited %s)", path, store.ErrLocked, timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// replaceRefused reports whether err, from putting a file in place of path, was the
// system refusing because path is open: never on Unix, where a rename replaces an open
// file (Restore's lock keeps servers off it instead).
func replaceRefused(path string, err error) bool { return false }

// keepAside gives the file at path the second name aside, for Restore to keep it by.
func keepAside(path, aside string) error { return os.Link(path, aside) }
