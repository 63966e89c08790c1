package boltstore

import (
	"errors"
	"io/fs"
	"syscall"
	"testing"

	"github.com/switchyard-ai/switchyard/store"
)

// TestUnwritableErrors: a commit the file system refuses for want of space or because it is
// read-only matches store.ErrUnwritable (the server answers it with a 503 and Retry-After),
// keeping the system's error and the file's name; other failures do not. (A real full disk
// needs root and a small tmpfs: see the README's "Storage faults".)
func TestUnwritableErrors(t *testing.T) {
	for _, errno := range []syscall.Errno{syscall.ENOSPC, syscall.EDQUOT, syscall.EROFS} {
		err := wrap(&fs.PathError{Op: "write", Path: "/data/switchyard.db", Err: errno})
		if !errors.Is(err, store.ErrUnwritable) || !errors.Is(err, errno) {
			t.Errorf("%v: %v does not match store.ErrUnwritable and the errno", errno, err)
		}
	}
	if err := wrap(&fs.PathError{Op: "write", Path: "/data/switchyard.db", Err: syscall.EIO}); errors.Is(err, store.ErrUnwritable) {
		t.Errorf("EIO: %v matches store.ErrUnwritable", err)
	}
}
