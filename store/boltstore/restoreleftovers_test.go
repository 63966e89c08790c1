package boltstore

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestOpenRemovesUnfinishedRestores: a restore cut short by a crash leaves its temporary
// copy (.switchyard.db.<digits>.tmp, named as writeFileAtomically names it) beside the
// database; the next open (and the next restore) removes it, logging it, and leaves the
// database and every other file — another file's temporary, a name that only looks alike —
// as they were.
func TestOpenRemovesUnfinishedRestores(t *testing.T) {
	if !restoreHoldsLock {
		t.Skip("here a fresh temporary file may be a restore under way: only files untouched for a minute are removed")
	}
	dir := t.TempDir()
	live := filepath.Join(dir, "switchyard.db")
	d := openTestDriver(t, live)
	putN(t, d, 0, 3, "v")
	d.Close()

	// What writeFileAtomically makes for path before a crash stops it.
	f, err := os.CreateTemp(dir, ".switchyard.db.*.tmp")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(bytes.Repeat([]byte("x"), 4096)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	leftover := filepath.Base(f.Name())
	kept := []string{".switchyard.db.bak.123.tmp", ".switchyard.db.12a.tmp", ".switchyard.db..tmp", ".other.db.123.tmp", "switchyard.db.123.tmp", ".switchyard.db.123.tmp.keep"}
	for _, name := range kept {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("keep"), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	var logged bytes.Buffer
	d, err = OpenDriver(live, Options{Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	if _, err := os.Stat(filepath.Join(dir, leftover)); !os.IsNotExist(err) {
		t.Errorf("the restore's leftover %s is still there (%v)", leftover, err)
	}
	if !strings.Contains(logged.String(), "removed the file of a restore cut short") || !strings.Contains(logged.String(), leftover) {
		t.Errorf("no log line of the removal: %s", logged.String())
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	for _, name := range append(kept, "switchyard.db") {
		if !slices.Contains(names, name) {
			t.Errorf("%s was removed: %v", name, names)
		}
	}
	if n := len(keysOf(t, live)); n != 3 {
		t.Errorf("the database holds %d keys after the cleanup, want 3", n)
	}

	// A restore run again after one cut short removes its leftover too.
	backup := filepath.Join(t.TempDir(), "b.db")
	if _, err := BackupFile(context.Background(), live, backup, Options{}); err != nil {
		t.Fatal(err)
	}
	again := filepath.Join(dir, ".switchyard.db.42.tmp")
	if err := os.WriteFile(again, []byte("partial"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Restore(context.Background(), backup, live, Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(again); !os.IsNotExist(err) {
		t.Errorf("restore left an earlier restore's leftover (%v)", err)
	}
}
