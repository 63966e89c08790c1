package boltstore

import (
	"log/slog"
	"os"
	"path/filepath"
	"time"
)

// staleTemporaryAge is how long a temporary file of writeFileAtomically's must have gone
// untouched before the next write of the same path takes it for a crash's leftover. A
// copy being written is touched at every write, so an hour without one is no copy under
// way: a concurrent writer's file (another `switchyard backup --out` to the same path)
// is left alone.
const staleTemporaryAge = time.Hour

// removeStaleTemporaries removes, from path's directory, the temporary files
// (.<path's name>.<digits>.tmp) an earlier writeFileAtomically of path left behind when a
// crash or a kill stopped it before its rename, untouched for staleTemporaryAge: each is
// as large as a whole database, and nothing else removes one of a path outside serve's
// backup directory (`switchyard backup --out FILE`, BackupTo, BackupFile). A file that
// cannot be removed is logged and left; the write goes on either way.
func removeStaleTemporaries(path string, now time.Time) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if e.IsDir() || !unfinishedRestore(e.Name(), base) { // the same .<base>.<digits>.tmp
			continue
		}
		fi, err := e.Info()
		if err != nil || now.Sub(fi.ModTime()) < staleTemporaryAge {
			continue
		}
		tmp := filepath.Join(dir, e.Name())
		if err := os.Remove(tmp); err != nil && !os.IsNotExist(err) {
			slog.Warn("could not remove the file of a backup cut short", "path", tmp, "err", err)
			continue
		}
		slog.Info("removed the file of a backup cut short", "path", tmp, "bytes", fi.Size())
	}
}
