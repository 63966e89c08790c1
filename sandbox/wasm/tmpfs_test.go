package wasm

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/experimental/sysfs"
)

func TestQuotaFS(t *testing.T) {
	dir := t.TempDir()
	const maxEntries = 50
	q := newQuotaFS(sysfs.DirFS(dir), 10, maxEntries)
	f, errno := q.OpenFile("a", experimentalsys.O_CREAT|experimentalsys.O_WRONLY, 0o600)
	if errno != 0 {
		t.Fatal(errno)
	}
	if n, errno := f.Write([]byte("123456")); errno != 0 || n != 6 {
		t.Fatalf("first write: %d %v", n, errno)
	}
	if _, errno := f.Write([]byte("123456")); errno == 0 {
		t.Fatal("write past the quota succeeded")
	}
	if _, errno := f.Pwrite([]byte("1234"), 0); errno != 0 {
		t.Fatalf("write within the quota failed: %v", errno)
	}
	if errno := f.Truncate(1 << 30); errno == 0 {
		t.Fatal("growing truncate past the quota succeeded")
	}
	f.Close()
	if errno := q.Symlink("/etc/passwd", "l"); errno != experimentalsys.EPERM {
		t.Fatalf("symlink: %v, want EPERM", errno)
	}
	if errno := q.Link("a", "b"); errno != experimentalsys.EPERM {
		t.Fatalf("link: %v, want EPERM", errno)
	}
	if _, err := os.Lstat(filepath.Join(dir, "l")); err == nil {
		t.Fatal("symlink created on the host")
	}
	// "a" was the first entry; maxEntries-1 directories fit, the next does not.
	for i := range maxEntries {
		errno := q.Mkdir(fmt.Sprintf("d%d", i), 0o700)
		if i < maxEntries-1 && errno != 0 {
			t.Fatalf("mkdir %d: %v", i, errno)
		}
		if i == maxEntries-1 && errno == 0 {
			t.Fatalf("entry %d created past the cap", i+1)
		}
	}
}
