package boltstore

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestBackupRemovesStaleTemporaries: a backup to a path outside serve's backup directory
// (BackupTo, BackupFile: `switchyard backup --out FILE`) removes the temporary files of
// that path an earlier backup cut short left (.<name>.<digits>.tmp, untouched for an
// hour), and leaves one being written (touched lately: a concurrent backup's) and every
// file of another name.
func TestBackupRemovesStaleTemporaries(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "switchyard.db")
	d := openTestDriver(t, src)
	putN(t, d, 0, 10, "v")
	out := filepath.Join(dir, "out")
	if err := os.MkdirAll(out, 0o700); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(out, "nightly.db")
	twoHoursAgo := time.Now().Add(-2 * time.Hour)
	file := func(name string, mtime time.Time) string {
		p := filepath.Join(out, name)
		if err := os.WriteFile(p, []byte("partial copy"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		return p
	}
	stale := file(".nightly.db.1234567.tmp", twoHoursAgo)
	underWay := file(".nightly.db.7654321.tmp", time.Now().Add(-time.Minute))
	kept := []string{
		underWay,
		file(".nightly.db.12ab.tmp", twoHoursAgo),  // not our digits
		file(".other.db.1234567.tmp", twoHoursAgo), // another path's
		file("nightly.db.1234567.tmp", twoHoursAgo),
		file(".nightly.db.1234567.tmp.keep", twoHoursAgo),
	}

	if _, err := d.BackupTo(context.Background(), dst); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("BackupTo left the stale temporary file %s (stat: %v)", stale, err)
	}
	for _, p := range kept {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("BackupTo removed %s: %v", p, err)
		}
	}

	// BackupFile alike, once the database is closed; the file still being written a
	// minute ago is left again.
	stale = file(".nightly.db.42.tmp", twoHoursAgo)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := BackupFile(context.Background(), src, dst, Options{LockTimeout: 200 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("BackupFile left the stale temporary file %s (stat: %v)", stale, err)
	}
	if _, err := os.Stat(underWay); err != nil {
		t.Errorf("BackupFile removed the file being written: %v", err)
	}
	if err := Verify(context.Background(), dst, Options{}); err != nil {
		t.Errorf("the backup: %v", err)
	}
}
