package boltstore

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// unfinishedRestoreAge is how long, where a restore does not hold the database's lock while
// it writes (restoreHoldsLock false: Windows), a restore's temporary file must have gone
// untouched before Open takes it for a crash's leftover: one being written is touched all
// the time.
const unfinishedRestoreAge = time.Minute

// removeUnfinishedRestores removes, from the directory of the database at path, the
// temporary files a restore cut short by a crash (or a kill) left there
// (.<path's name>.<digits>.tmp, what writeFileAtomically writes before renaming it over
// path), which nothing else would remove: each is as large as a whole database. The caller
// holds the database's lock, so no restore of it is under way — where a restore holds that
// lock throughout (restoreHoldsLock); elsewhere only files untouched for
// unfinishedRestoreAge are removed. A file that cannot be removed is logged and left.
func removeUnfinishedRestores(path string, log *slog.Logger) {
	minAge := time.Duration(0)
	if !restoreHoldsLock {
		minAge = unfinishedRestoreAge
	}
	removeLeftoverTemporaries(path, time.Now(), minAge, "restore", log)
}

// removeLeftoverTemporaries removes, from the directory of path, writeFileAtomically's
// temporary files of path (.<path's name>.<digits>.tmp) untouched for minAge, which a
// crash (or a kill) of the writer (what: "restore", "backup") left before its rename. A
// file that cannot be removed is logged and left.
func removeLeftoverTemporaries(path string, now time.Time, minAge time.Duration, what string, log *slog.Logger) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if e.IsDir() || !unfinishedRestore(e.Name(), base) {
			continue
		}
		fi, err := e.Info()
		if err != nil || minAge > 0 && now.Sub(fi.ModTime()) < minAge {
			continue
		}
		tmp := filepath.Join(dir, e.Name())
		if err := os.Remove(tmp); err != nil && !os.IsNotExist(err) {
			log.Warn("could not remove the file of a "+what+" cut short", "path", tmp, "err", err)
			continue
		}
		log.Info("removed the file of a "+what+" cut short", "path", tmp, "bytes", fi.Size())
	}
}

// unfinishedRestore reports whether name is a temporary file writeFileAtomically makes to
// put a file in place of the database named base: .<base>.<digits>.tmp.
func unfinishedRestore(name, base string) bool {
	rest, ok := strings.CutPrefix(name, "."+base+".")
	if !ok {
		return false
	}
	digits, ok := strings.CutSuffix(rest, ".tmp")
	return ok && digits != "" && strings.Trim(digits, "0123456789") == ""
}
