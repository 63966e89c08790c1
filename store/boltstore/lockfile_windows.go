//go:build windows

package boltstore

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"

	"github.com/switchyard-ai/switchyard/store"
)

// Windows error codes syscall does not name.
const (
	errorSharingViolation syscall.Errno = 32
	errorLockViolation    syscall.Errno = 33
)

// restoreHoldsLock is false: Restore cannot hold the database's lock while it writes the
// restored file (lockFile), so a process that took the lock meanwhile may meet a restore's
// temporary file being written.
const restoreHoldsLock = false

// lockFile checks that no process has the database file at path open, waiting at most
// timeout for one that has: it opens the file sharing nothing, which fails while any other
// handle on it is open (a server's, which maps it). It cannot hold that open for Restore:
// Windows refuses to rename a file over one that is open, its own handle's too. So unlock
// does nothing, and the rename that puts the restored file in place is the last check: a
// server that opened the file since makes it fail (replaceRefused), and nothing is changed.
// It neither reads nor maps the file, so it works on a damaged one.
func lockFile(path string, timeout time.Duration) (unlock func(), err error) {
	name, err := syscall.UTF16PtrFromString(path)
	if err != nil {
		return nil, fileError("open", path, err)
	}
	deadline := time.Now().Add(timeout)
	for {
		h, err := syscall.CreateFile(name, syscall.GENERIC_READ, 0, nil, syscall.OPEN_EXISTING, syscall.FILE_ATTRIBUTE_NORMAL, 0)
		if err == nil {
			syscall.CloseHandle(h)
			return func() {}, nil
		}
		if !errors.Is(err, errorSharingViolation) && !errors.Is(err, errorLockViolation) {
			return nil, fileError("open", path, err)
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("boltstore: %s is open in another process: %w (waited %s)", path, store.ErrLocked, timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// replaceRefused reports whether err, from putting a file in place of path, was Windows
// refusing because another process has path open (a server that started meanwhile).
func replaceRefused(path string, err error) bool {
	if !errors.Is(err, syscall.ERROR_ACCESS_DENIED) && !errors.Is(err, errorSharingViolation) && !errors.Is(err, errorLockViolation) {
		return false
	}
	_, lerr := lockFile(path, 0)
	return errors.Is(lerr, store.ErrLocked)
}

// keepAside copies the file at path to aside, for Restore to keep it by: a copy, not a
// second name, as Windows will not remove a name of a file another process has open,
// which a refused restore must do with the name it made.
func keepAside(path, aside string) error {
	src, err := os.Open(path)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(aside, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(dst, src)
	if err == nil {
		err = dst.Sync()
	}
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(aside)
	}
	return err
}
