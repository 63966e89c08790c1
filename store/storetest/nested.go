package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/store"
)

// testNested checks that an Update, UpdateLocked, Put or Delete called from inside an
// Update's function on the same goroutine (which store.Driver forbids: the function acts
// only through its Tx) fails at once with an error matching store.ErrNested rather than
// wait for ever for what the outer transaction holds; that the outer transaction goes on
// and keeps its writes; that the mark ends with the outer call (its function failing or
// panicking, too); and that a call from another goroutine while a function runs is not
// refused.
func testNested(t *testing.T, h Harness) {
	s := open(t, h)
	ctx := context.Background()
	// A regression hangs in the inner call (memstore's mutex takes no context): end the
	// test binary with the case's name rather than wait for go test's timeout.
	var current string
	var mu sync.Mutex
	watchdog := time.AfterFunc(time.Minute, func() {
		mu.Lock()
		defer mu.Unlock()
		panic(fmt.Sprintf("storetest: a nested %s never returned: it waits for the outer transaction", current))
	})
	defer watchdog.Stop()
	hot := []store.Ref{{Collection: store.Budgets, Key: "hot"}}
	nested := []struct {
		name  string
		inner func() error
	}{
		{"Update", func() error {
			return s.Update(ctx, func(tx store.Tx) error { return tx.Put(ctx, store.Budgets, "hot", []byte("inner")) })
		}},
		{"UpdateLocked", func() error {
			return s.UpdateLocked(ctx, hot, func(tx store.Tx) error { return tx.Put(ctx, store.Budgets, "hot", []byte("inner")) })
		}},
		{"Put", func() error { return s.Put(ctx, store.Budgets, "hot", []byte("inner")) }},
		{"Delete", func() error { return s.Delete(ctx, store.Budgets, "hot") }},
	}
	for i, c := range nested {
		for _, outerLocked := range []bool{false, true} {
			mu.Lock()
			current = c.name
			mu.Unlock()
			want := fmt.Sprintf("outer %d %v", i, outerLocked)
			var innerErr error
			fn := func(tx store.Tx) error {
				if err := tx.Put(ctx, store.Budgets, "hot", []byte(want)); err != nil {
					return err
				}
				innerErr = c.inner()
				return nil
			}
			var err error
			if outerLocked {
				err = s.UpdateLocked(ctx, hot, fn)
			} else {
				err = s.Update(ctx, fn)
			}
			if err != nil {
				t.Fatalf("%s nested: the outer transaction failed: %v", c.name, err)
			}
			if !errors.Is(innerErr, store.ErrNested) {
				t.Errorf("%s nested in an Update's function (outer UpdateLocked %v): %v, want an error matching store.ErrNested", c.name, outerLocked, innerErr)
			}
			if got := mustGet(t, s, store.Budgets, "hot"); got != want {
				t.Errorf("%s nested: hot = %q, want %q: the outer transaction's write alone", c.name, got, want)
			}
		}
	}
	// The mark ends with the outer call, also when its function failed or panicked.
	boom := errors.New("boom")
	if err := s.Update(ctx, func(store.Tx) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("Update whose function failed: %v", err)
	}
	func() {
		defer func() { recover() }()
		s.Update(ctx, func(store.Tx) error { panic("boom") })
	}()
	mustPut(t, s, store.Budgets, "after", "1")
	if err := s.UpdateLocked(ctx, hot, func(tx store.Tx) error { return tx.Put(ctx, store.Budgets, "hot", []byte("after")) }); err != nil {
		t.Fatalf("UpdateLocked after the nested ones: %v", err)
	}
	// Another goroutine's write while a function runs waits for it (or not), and is done.
	running, release := make(chan struct{}), make(chan struct{})
	outer := make(chan error, 1)
	go func() {
		outer <- s.Update(ctx, func(tx store.Tx) error {
			close(running)
			<-release
			return tx.Put(ctx, store.Budgets, "outer", []byte("1"))
		})
	}()
	<-running
	other := make(chan error, 1)
	go func() { other <- s.Put(ctx, store.Budgets, "other", []byte("1")) }()
	close(release)
	if err := <-outer; err != nil {
		t.Fatalf("the outer Update: %v", err)
	}
	if err := <-other; err != nil {
		t.Errorf("a Put from another goroutine while an Update's function ran: %v, want nil", err)
	}
}
