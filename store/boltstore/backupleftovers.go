package boltstore

import (
	"log/slog"
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
	removeLeftoverTemporaries(path, now, staleTemporaryAge, "backup", slog.Default())
}
