package boltstore_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/boltstore"
	"github.com/switchyard-ai/switchyard/store/storetest"
)

func TestConformance(t *testing.T) {
	paths := map[*store.Store]string{}
	storetest.Run(t, storetest.Harness{
		Open: func(t *testing.T) *store.Store {
			path := filepath.Join(t.TempDir(), "db", "switchyard.db")
			s, err := boltstore.Open(path, boltstore.Options{})
			if err != nil {
				t.Fatal(err)
			}
			paths[s] = path
			return s
		},
		Reopen: func(t *testing.T, s *store.Store) *store.Store {
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s2, err := boltstore.Open(paths[s], boltstore.Options{})
			if err != nil {
				t.Fatal(err)
			}
			return s2
		},
	})
}

func TestConformanceNoGroupCommit(t *testing.T) {
	paths := map[*store.Store]string{}
	opts := boltstore.Options{NoGroupCommit: true}
	storetest.Run(t, storetest.Harness{
		Open: func(t *testing.T) *store.Store {
			path := filepath.Join(t.TempDir(), "single.db")
			s, err := boltstore.Open(path, opts)
			if err != nil {
				t.Fatal(err)
			}
			paths[s] = path
			return s
		},
		Reopen: func(t *testing.T, s *store.Store) *store.Store {
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s2, err := boltstore.Open(paths[s], opts)
			if err != nil {
				t.Fatal(err)
			}
			return s2
		},
	})
}

// TestLockedByAnotherProcess opens the file in a child process and checks that this process
// gets a clear ErrLocked instead of hanging.
func TestLockedByAnotherProcess(t *testing.T) {
	if os.Getenv("BOLTSTORE_HOLD") != "" {
		s, err := boltstore.Open(os.Getenv("BOLTSTORE_HOLD"), boltstore.Options{})
		if err != nil {
			os.Exit(3)
		}
		defer s.Close()
		os.Stdout.WriteString("held\n")
		time.Sleep(30 * time.Second)
		return
	}
	path := filepath.Join(t.TempDir(), "locked.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockedByAnotherProcess$")
	cmd.Env = append(os.Environ(), "BOLTSTORE_HOLD="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	buf := make([]byte, 5)
	if _, err := out.Read(buf); err != nil || string(buf[:4]) != "held" {
		t.Fatalf("child did not open the database: %q %v", buf, err)
	}
	start := time.Now()
	_, err = boltstore.Open(path, boltstore.Options{LockTimeout: 200 * time.Millisecond})
	if !errors.Is(err, store.ErrLocked) {
		t.Fatalf("err = %v, want ErrLocked", err)
	}
	if !strings.Contains(err.Error(), "locked by another process") {
		t.Fatalf("message %q does not say the file is locked", err)
	}
	if time.Since(start) > 20*time.Second {
		t.Fatal("Open hung instead of timing out")
	}
}

// An open error names the file once (the OS error already carries the path).
func TestOpenErrorNamesTheFileOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "switchyard.db")
	if err := os.Mkdir(path, 0o700); err != nil { // a directory where the file should be
		t.Fatal(err)
	}
	_, err := boltstore.Open(path, boltstore.Options{})
	if err == nil || strings.Count(err.Error(), path) != 1 {
		t.Fatalf("err = %v: want the path named once", err)
	}
}

func BenchmarkDriver(b *testing.B) {
	storetest.Bench(b, func(b *testing.B) *store.Store {
		// NoSync: the driver's own cost, not the disk's.
		s, err := boltstore.Open(filepath.Join(b.TempDir(), "bench.db"), boltstore.Options{NoSync: true})
		if err != nil {
			b.Fatal(err)
		}
		return s
	})
}
