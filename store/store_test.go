package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/switchyard-ai/switchyard/store"
)

// A Store without a driver (zero or nil) answers ErrNoDriver instead of panicking.
func TestStoreWithoutDriver(t *testing.T) {
	ctx := context.Background()
	for _, s := range []*store.Store{{}, nil} {
		if _, err := s.Get(ctx, store.Sessions, "k"); !errors.Is(err, store.ErrNoDriver) {
			t.Errorf("Get: %v", err)
		}
		if err := s.Put(ctx, store.Sessions, "k", nil); !errors.Is(err, store.ErrNoDriver) {
			t.Errorf("Put: %v", err)
		}
		if err := s.Delete(ctx, store.Sessions, "k"); !errors.Is(err, store.ErrNoDriver) {
			t.Errorf("Delete: %v", err)
		}
		if _, err := s.List(ctx, store.Sessions, store.ListOptions{}); !errors.Is(err, store.ErrNoDriver) {
			t.Errorf("List: %v", err)
		}
		if err := s.Update(ctx, func(store.Tx) error { return nil }); !errors.Is(err, store.ErrNoDriver) {
			t.Errorf("Update: %v", err)
		}
		if err := s.Close(); !errors.Is(err, store.ErrNoDriver) {
			t.Errorf("Close: %v", err)
		}
	}
}
