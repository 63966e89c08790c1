package boltstore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/boltstore"
)

// writeDatabase creates a database at path holding enough data to span many pages.
func writeDatabase(t *testing.T, path string) {
	t.Helper()
	s, err := boltstore.Open(path, boltstore.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	value := []byte(strings.Repeat("x", 1000))
	for i := range 300 {
		if err := s.Put(ctx, "rows", fmt.Sprintf("k%04d", i), value); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestTruncatedFileFailsClearly cuts a real database file at several points and checks that
// Open refuses it with ErrCorrupt and a message naming the file and the remedy, instead of
// bbolt faulting on the short mapping.
func TestTruncatedFileFailsClearly(t *testing.T) {
	dir := t.TempDir()
	whole := filepath.Join(dir, "whole.db")
	writeDatabase(t, whole)
	data, err := os.ReadFile(whole)
	if err != nil {
		t.Fatal(err)
	}
	page := os.Getpagesize()
	if len(data) < 8*page {
		t.Fatalf("database is only %d bytes; the test needs many pages", len(data))
	}
	cuts := map[string]int{
		"half a page":                page / 2,
		"one page":                   page,
		"middle of the data":         (len(data) / page / 2) * page,
		"middle of the data, ragged": len(data)/2 + 100,
		"one byte short":             len(data) - 1,
	}
	for name, n := range cuts {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "cut.db")
			if err := os.WriteFile(path, data[:n], 0o600); err != nil {
				t.Fatal(err)
			}
			s, err := boltstore.Open(path, boltstore.Options{})
			if err == nil {
				s.Close()
				t.Fatalf("opened a %d-byte cut of a %d-byte database", n, len(data))
			}
			if !errors.Is(err, store.ErrCorrupt) {
				t.Fatalf("err = %v, want ErrCorrupt", err)
			}
			for _, want := range []string{path, "backup", "move it aside"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("message %q does not mention %q", err, want)
				}
			}
		})
	}
}

// TestDamagedMetaPagesFail overwrites both meta pages' checksums.
func TestDamagedMetaPagesFail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "meta.db")
	writeDatabase(t, path)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	page := os.Getpagesize()
	data[16+60] ^= 0xff // checksum of meta 0
	data[page+16+60] ^= 0xff
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = boltstore.Open(path, boltstore.Options{})
	if !errors.Is(err, store.ErrCorrupt) || !strings.Contains(err.Error(), "meta") {
		t.Fatalf("err = %v, want ErrCorrupt about the meta pages", err)
	}
}

// TestEmptyAndWholeFilesOpen checks the check does not refuse good files: an empty file is a
// new database, and a whole database reopens with its data.
func TestEmptyAndWholeFilesOpen(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := boltstore.Open(empty, boltstore.Options{})
	if err != nil {
		t.Fatalf("empty file: %v", err)
	}
	ctx := context.Background()
	if err := s.Put(ctx, "c", "k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	s.Close()

	whole := filepath.Join(dir, "whole.db")
	writeDatabase(t, whole)
	s, err = boltstore.Open(whole, boltstore.Options{})
	if err != nil {
		t.Fatalf("whole file: %v", err)
	}
	defer s.Close()
	if _, err := s.Get(ctx, "rows", "k0007"); err != nil {
		t.Fatalf("data lost on reopen: %v", err)
	}
}
