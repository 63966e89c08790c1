package wasm

import (
	"io/fs"
	"sync/atomic"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// quotaFS is the guest's writable /tmp: a host directory whose total bytes written are capped
// (Limits.MaxFileBytes; past it writes fail with EIO) and in which links cannot be created, because the host resolves them
// (a symlink to /etc/passwd would otherwise be followed on the host).
type quotaFS struct {
	experimentalsys.FS
	left       *atomic.Int64 // bytes that may still be written
	entries    atomic.Int64  // files and directories created so far
	maxEntries int64
}

// maxTmpEntries bounds how many files and directories the guest may create in /tmp.
const maxTmpEntries = 10000

func newQuotaFS(base experimentalsys.FS, limit, maxEntries int64) *quotaFS {
	left := new(atomic.Int64)
	left.Store(limit)
	return &quotaFS{FS: base, left: left, maxEntries: maxEntries}
}

// OpenFile wraps files so their writes count against the quota; creations count against
// maxEntries.
func (q *quotaFS) OpenFile(path string, flag experimentalsys.Oflag, perm fs.FileMode) (experimentalsys.File, experimentalsys.Errno) {
	if flag&experimentalsys.O_CREAT != 0 && q.entries.Add(1) > q.maxEntries {
		return nil, experimentalsys.EIO
	}
	f, errno := q.FS.OpenFile(path, flag, perm)
	if errno != 0 {
		return nil, errno
	}
	return &quotaFile{File: f, left: q.left}, 0
}

// Mkdir counts against maxEntries.
func (q *quotaFS) Mkdir(path string, perm fs.FileMode) experimentalsys.Errno {
	if q.entries.Add(1) > q.maxEntries {
		return experimentalsys.EIO
	}
	return q.FS.Mkdir(path, perm)
}

// Symlink is refused: see quotaFS.
func (q *quotaFS) Symlink(oldPath, linkName string) experimentalsys.Errno {
	return experimentalsys.EPERM
}

// Link is refused: see quotaFS.
func (q *quotaFS) Link(oldPath, newPath string) experimentalsys.Errno { return experimentalsys.EPERM }

type quotaFile struct {
	experimentalsys.File
	left *atomic.Int64
}

func (f *quotaFile) take(n int) bool {
	if f.left.Add(-int64(n)) < 0 {
		f.left.Add(int64(n))
		return false
	}
	return true
}

// Write counts against the quota.
func (f *quotaFile) Write(buf []byte) (int, experimentalsys.Errno) {
	if !f.take(len(buf)) {
		return 0, experimentalsys.EIO
	}
	return f.File.Write(buf)
}

// Pwrite counts against the quota.
func (f *quotaFile) Pwrite(buf []byte, off int64) (int, experimentalsys.Errno) {
	if !f.take(len(buf)) {
		return 0, experimentalsys.EIO
	}
	return f.File.Pwrite(buf, off)
}

// Truncate may not grow a file past what is left of the quota.
func (f *quotaFile) Truncate(size int64) experimentalsys.Errno {
	if size > f.left.Load() {
		return experimentalsys.EIO
	}
	return f.File.Truncate(size)
}
