package boltstore

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// openFDs counts this process's descriptors open on path (Linux's /proc).
func openFDs(t *testing.T, path string) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && target == path {
			n++
		}
	}
	return n
}

// TestServerStartingDuringRestoreOpensTheRestoredFile: a server started while a restore
// runs waits for the restore's lock and then serves the restored file, not the file the
// restore replaced (or the empty one standing in for a missing file), whose writes would
// be lost at the next start.
func TestServerStartingDuringRestoreOpensTheRestoredFile(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("counts open files through /proc")
	}
	for _, existing := range []bool{true, false} {
		name := map[bool]string{true: "replacing a file", false: "no file before"}[existing]
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "data", "switchyard.db")
			src := filepath.Join(dir, "backup.db")
			b := openTestDriver(t, src)
			putN(t, b, 0, 1, "restored")
			b.Close()
			if existing {
				d := openTestDriver(t, path)
				putN(t, d, 0, 1, "replaced")
				d.Close()
			}
			type opened struct {
				d   *Driver
				err error
			}
			started := make(chan opened, 1)
			called := false
			restoreLocked = func() {
				called = true
				go func() {
					d, err := OpenDriver(path, Options{LockTimeout: time.Minute})
					started <- opened{d, err}
				}()
				// The server has the file open and waits for its lock (restore holds one
				// descriptor on it, the server another).
				for openFDs(t, path) < 2 {
					select {
					case o := <-started:
						t.Fatalf("the server did not wait for the restore's lock: %v", o.err)
					case <-time.After(5 * time.Millisecond):
					}
				}
			}
			defer func() { restoreLocked = nil }()
			if _, err := Restore(context.Background(), src, path, Options{}); err != nil {
				t.Fatal(err)
			}
			if !called {
				t.Fatal("restore took no lock before putting the backup in place")
			}
			o := <-started
			if o.err != nil {
				t.Fatal(o.err)
			}
			got, err := o.d.Get(context.Background(), backupColl, "k000000")
			if err != nil || string(got) != "restored0" {
				t.Fatalf("server started during the restore reads %q, %v; want the restored restored0", got, err)
			}
			putN(t, o.d, 1, 2, "written")
			o.d.Close()
			d := openTestDriver(t, path)
			defer d.Close()
			if got, err := d.Get(context.Background(), backupColl, "k000001"); err != nil {
				t.Fatalf("the write of the server started during the restore is not in %s: %v", path, err)
			} else if string(got) != "written1" {
				t.Fatalf("got %q", got)
			}
		})
	}
}
