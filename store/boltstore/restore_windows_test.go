//go:build windows

package boltstore

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/store"
)

// TestRestoreRefusedByAServerStartingMeanwhile (Windows): Restore cannot hold the lock
// across the rename there, so a server opening the database after Restore's check and
// before the rename makes the rename fail: Restore fails with store.ErrLocked naming the
// file, the database keeps what it held, and no file is put aside.
func TestRestoreRefusedByAServerStartingMeanwhile(t *testing.T) {
	dir := t.TempDir()
	live := filepath.Join(dir, "switchyard.db")
	d := openTestDriver(t, live)
	putN(t, d, 0, 3, "live")
	d.Close()
	backup := filepath.Join(dir, "b.db")
	b := openTestDriver(t, backup)
	putN(t, b, 0, 5, "backup")
	b.Close()

	var server *Driver
	restoreLocked = func() { server = openTestDriver(t, live) }
	defer func() { restoreLocked = nil }()
	_, err := Restore(context.Background(), backup, live, Options{})
	if server == nil {
		t.Fatal("the hook did not run")
	}
	if !errors.Is(err, store.ErrLocked) || !strings.Contains(err.Error(), live) {
		server.Close()
		t.Fatalf("restore under a server that started meanwhile: %v", err)
	}
	server.Close()
	if n := len(keysOf(t, live)); n != 3 {
		t.Fatalf("the database holds %d keys after a refused restore, want its own 3", n)
	}
	if aside, _ := filepath.Glob(live + ".before-restore-*"); len(aside) != 0 {
		t.Fatalf("a refused restore left %v", aside)
	}
}
