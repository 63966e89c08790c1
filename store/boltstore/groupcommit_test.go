package boltstore_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/boltstore"
)

// TestGroupCommitIsolatesFailures runs many concurrent writers, some failing and some
// panicking, so that they share commits: each failing writer gets its own error and leaves
// nothing behind, every other writer's records are committed, and the store keeps working.
func TestGroupCommitIsolatesFailures(t *testing.T) {
	s, err := boltstore.Open(filepath.Join(t.TempDir(), "g.db"), boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	const n = 200
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			errs[i] = s.Update(ctx, func(tx store.Tx) error {
				if err := tx.Put(ctx, store.Sessions, fmt.Sprintf("k%03d", i), []byte("v")); err != nil {
					return err
				}
				switch i % 10 {
				case 3:
					return fmt.Errorf("writer %d refuses", i)
				case 7:
					panic(fmt.Sprintf("writer %d panics", i))
				}
				return nil
			})
		}(i)
	}
	wg.Wait()
	for i, err := range errs {
		_, gerr := s.Get(ctx, store.Sessions, fmt.Sprintf("k%03d", i))
		switch i % 10 {
		case 3:
			if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("writer %d refuses", i)) {
				t.Fatalf("writer %d: err = %v", i, err)
			}
		case 7:
			if err == nil || !strings.Contains(err.Error(), "panicked") {
				t.Fatalf("writer %d: err = %v", i, err)
			}
		default:
			if err != nil {
				t.Fatalf("writer %d: %v", i, err)
			}
		}
		failed := i%10 == 3 || i%10 == 7
		if failed != errors.Is(gerr, store.ErrNotFound) {
			t.Fatalf("writer %d: failed=%v but Get err = %v", i, failed, gerr)
		}
	}
	if err := s.Put(ctx, store.Sessions, "after", []byte("x")); err != nil {
		t.Fatalf("store unusable after failures: %v", err)
	}
}
