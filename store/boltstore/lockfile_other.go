//go:build !unix && !windows

package boltstore

import (
	"os"
	"time"
)

// lockFile takes a database file's lock: on systems without flock it opens the database
// through bbolt, which locks it its own way, and closes it to unlock.
func lockFile(path string, timeout time.Duration) (unlock func(), err error) {
	d, err := OpenDriver(path, Options{LockTimeout: timeout, NoGroupCommit: true})
	if err != nil {
		return nil, err
	}
	return func() { d.Close() }, nil
}

// replaceRefused reports whether err, from putting a file in place of path, was the
// system refusing because path is open: never said apart here.
func replaceRefused(path string, err error) bool { return false }

// keepAside gives the file at path the second name aside, for Restore to keep it by.
func keepAside(path, aside string) error { return os.Link(path, aside) }
