package memstore

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/internal/nesting"
)

// TestNestedReadIsRefused: a Get, List or GetMany of a memstore called from inside its own
// Update's function on the same goroutine waited for ever for the write lock that Update
// holds until the function returns; it now fails at once with an error matching
// store.ErrNested. A read of it from inside another driver's function (a foreign Update,
// here a nesting.Marker's Run as the drivers call it) is no such call: it is answered, also while
// another goroutine's Update of it runs (then after that Update). bbolt and PostgreSQL
// answer such reads, so this is memstore's own test, not the conformance suite's.
func TestNestedReadIsRefused(t *testing.T) {
	var foreign nesting.Marker // a foreign driver's
	ctx := context.Background()
	d := NewDriver()
	if err := d.Put(ctx, store.Budgets, "k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	// A regression hangs in the inner read: end the test binary naming it rather than
	// wait for go test's timeout.
	var current string
	watchdog := time.AfterFunc(time.Minute, func() { panic(fmt.Sprintf("memstore: a nested %s never returned", current)) })
	defer watchdog.Stop()
	reads := []struct {
		name string
		read func(*Driver) error
	}{
		{"Get", func(d *Driver) error { _, err := d.Get(ctx, store.Budgets, "k"); return err }},
		{"List", func(d *Driver) error { _, err := d.List(ctx, store.Budgets, store.ListOptions{}); return err }},
		{"GetMany", func(d *Driver) error { _, err := d.GetMany(ctx, store.Budgets, []string{"k"}); return err }},
	}
	for _, r := range reads {
		current = r.name
		var inner error
		if err := d.Update(ctx, func(tx store.Tx) error { inner = r.read(d); return nil }); err != nil {
			t.Fatalf("%s nested: the outer Update failed: %v", r.name, err)
		}
		if !errors.Is(inner, store.ErrNested) {
			t.Errorf("%s inside the driver's own Update's function: %v, want an error matching store.ErrNested", r.name, inner)
		}
		// Inside another memstore's Update, and inside a foreign driver's function.
		if err := NewDriver().Update(ctx, func(store.Tx) error { inner = r.read(d); return nil }); err != nil || inner != nil {
			t.Errorf("%s inside another memstore's Update's function: %v %v, want it answered", r.name, err, inner)
		}
		if err := foreign.Run(func(store.Tx) error { return r.read(d) }, nil); err != nil {
			t.Errorf("%s inside a foreign driver's function: %v, want it answered", r.name, err)
		}
		// Inside a foreign driver's function while another goroutine's Update of d runs:
		// not refused (it would wait for that Update, not for itself).
		started, release, done := make(chan struct{}), make(chan struct{}), make(chan error)
		go func() {
			done <- d.Update(ctx, func(store.Tx) error { close(started); <-release; return nil })
		}()
		<-started
		var nested bool
		foreign.Run(func(store.Tx) error { nested = d.nestedRead(); return nil }, nil)
		close(release)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if nested {
			t.Errorf("%s inside a foreign driver's function while another goroutine updates the driver: refused as nested", r.name)
		}
	}
}
