package boltstore_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/boltstore"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// TestUpdateOfAnotherStoreInsideFunction: an Update of one store from inside another
// store's Update function was refused with store.ErrNested (the nesting mark was one for
// the process), though it waits for nothing the outer transaction holds. It now goes on —
// another bbolt file's, and a memstore's inside a bbolt function and the other way round —
// and both writes are kept; an Update of the same store there is still refused, as is one
// of a store whose own Update runs its function on another goroutine at the time (which
// Run the stack shows cannot be told then).
func TestUpdateOfAnotherStoreInsideFunction(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	open := func() *store.Store {
		s, err := boltstore.Open(filepath.Join(t.TempDir(), "switchyard.db"), boltstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	a, b, m := open(), open(), memstore.New()
	put := func(s *store.Store, key string) error {
		return s.Update(ctx, func(tx store.Tx) error { return tx.Put(ctx, store.Budgets, key, []byte("1")) })
	}
	for _, c := range []struct {
		name         string
		outer, inner *store.Store
	}{
		{"bbolt in bbolt", a, b},
		{"memstore in bbolt", a, m},
		{"bbolt in memstore", m, a},
		{"memstore in memstore", m, memstore.New()},
	} {
		var inner error
		err := c.outer.Update(ctx, func(tx store.Tx) error {
			inner = put(c.inner, "inner "+c.name)
			return tx.Put(ctx, store.Budgets, "outer "+c.name, []byte("1"))
		})
		if err != nil || inner != nil {
			t.Errorf("%s: outer %v, inner %v; want both written", c.name, err, inner)
			continue
		}
		for s, key := range map[*store.Store]string{c.outer: "outer " + c.name, c.inner: "inner " + c.name} {
			if _, err := s.Get(ctx, store.Budgets, key); err != nil {
				t.Errorf("%s: %s: %v", c.name, key, err)
			}
		}
	}
	for _, s := range []*store.Store{a, m} {
		var inner error
		if err := s.Update(ctx, func(store.Tx) error { inner = put(s, "same"); return nil }); err != nil {
			t.Fatal(err)
		}
		if !errors.Is(inner, store.ErrNested) {
			t.Errorf("an Update of the same store inside its function: %v, want store.ErrNested", inner)
		}
	}
	// b's own Update runs its function on another goroutine: b's inside a's is refused.
	running, release, done := make(chan struct{}), make(chan struct{}), make(chan error)
	go func() {
		done <- b.Update(ctx, func(store.Tx) error { close(running); <-release; return nil })
	}()
	<-running
	var inner error
	if err := a.Update(ctx, func(store.Tx) error { inner = put(b, "while b runs"); return nil }); err != nil {
		t.Fatal(err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !errors.Is(inner, store.ErrNested) {
		t.Errorf("b's Update inside a's function while b's own runs elsewhere: %v, want store.ErrNested", inner)
	}
}
