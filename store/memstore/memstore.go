// Package memstore is an in-memory store driver, for tests and for embedding Switchyard's
// packages in a process that needs no persistence. Nothing survives Close.
package memstore

import (
	"context"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/internal/nesting"
)

// New returns an empty in-memory store.
func New() *store.Store { return store.New(NewDriver()) }

// Driver keeps records in maps guarded by one RWMutex. The zero value is not usable; use
// NewDriver.
type Driver struct {
	mu     sync.RWMutex
	data   map[store.Collection]map[string][]byte
	closed bool
	// writing is true while an Update of this driver runs its function (holding mu).
	writing atomic.Bool
	nest    nesting.Marker // marks fn's runs, to refuse an Update nested in one
}

// writers counts the memstore Updates running their functions in the process, of any
// driver: with one, a goroutine inside a memstore Update's function is inside that one's.
var writers atomic.Int64

// updateEntry is the entry PC of Update, the only caller of nesting.Marker.Run here.
var updateEntry = runtime.FuncForPC(reflect.ValueOf((*Driver).Update).Pointer()).Entry()

// nestedRead reports whether a read of d from the calling goroutine would wait for ever:
// it is inside the function of d's own Update, which holds d's write lock until it
// returns. A read inside another driver's function (or another memstore's) is no such
// call and waits its turn as any read does. When two memstores run Updates at once and
// the goroutine is inside one's function, which one cannot be told: the read then waits.
func (d *Driver) nestedRead() bool {
	return d.writing.Load() && writers.Load() == 1 && nesting.InsideRunBy(updateEntry)
}

// NewDriver returns an empty driver.
func NewDriver() *Driver {
	return &Driver{data: map[store.Collection]map[string][]byte{}}
}

func clone(b []byte) []byte { return append([]byte(nil), b...) }

// Get implements store.Driver.
func (d *Driver) Get(ctx context.Context, c store.Collection, key string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if d.nestedRead() {
		return nil, fmt.Errorf("memstore: get %s/%s: %w", c, key, store.ErrNested)
	}
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.closed {
		return nil, store.ErrClosed
	}
	v, ok := d.data[c][key]
	if !ok {
		return nil, notFound(c, key)
	}
	return clone(v), nil
}

func notFound(c store.Collection, key string) error {
	return &notFoundError{c: c, key: key}
}

type notFoundError struct {
	c   store.Collection
	key string
}

func (e *notFoundError) Error() string { return "store: " + string(e.c) + "/" + e.key + " not found" }
func (e *notFoundError) Is(target error) bool {
	return target == store.ErrNotFound
}

// List implements store.Driver.
func (d *Driver) List(ctx context.Context, c store.Collection, opts store.ListOptions) ([]store.Entry, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if d.nestedRead() {
		return nil, fmt.Errorf("memstore: list %s: %w", c, store.ErrNested)
	}
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.closed {
		return nil, store.ErrClosed
	}
	return list(d.data[c], opts), nil
}

func list(m map[string][]byte, opts store.ListOptions) []store.Entry {
	keys := make([]string, 0, len(m))
	for k := range m {
		if strings.HasPrefix(k, opts.Prefix) && (opts.After == "" || (!opts.Descending && k > opts.After) || (opts.Descending && k < opts.After)) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	if opts.Descending {
		slices.Reverse(keys)
	}
	if opts.Limit > 0 && len(keys) > opts.Limit {
		keys = keys[:opts.Limit]
	}
	out := make([]store.Entry, len(keys))
	for i, k := range keys {
		out[i] = store.Entry{Key: k, Value: clone(m[k])}
	}
	return out
}

// Put implements store.Driver.
func (d *Driver) Put(ctx context.Context, c store.Collection, key string, value []byte) error {
	return d.Update(ctx, func(tx store.Tx) error { return tx.Put(ctx, c, key, value) })
}

// Delete implements store.Driver.
func (d *Driver) Delete(ctx context.Context, c store.Collection, key string) error {
	return d.Update(ctx, func(tx store.Tx) error { return tx.Delete(ctx, c, key) })
}

// Update implements store.Driver. Writes are staged and applied only when fn succeeds;
// writers are serialised.
//
// Called from inside fn of an Update of this driver on the same goroutine, which
// store.Driver forbids, it returns an error matching store.ErrNested at once, as do Put
// and Delete there: it would wait for ever for the lock the outer Update holds until fn
// returns. So do Get, List and GetMany of this driver there (they would wait for the same
// lock); fn reads through its Tx. Inside another driver's function an Update goes on,
// unless an Update of this one is running its function on another goroutine at the time
// (store/internal/nesting cannot tell the two apart then).
func (d *Driver) Update(ctx context.Context, fn func(tx store.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d.nest.Inside() {
		return fmt.Errorf("memstore: update: %w", store.ErrNested)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return store.ErrClosed
	}
	d.writing.Store(true)
	writers.Add(1)
	defer func() {
		writers.Add(-1)
		d.writing.Store(false)
	}()
	tx := &memTx{d: d, staged: map[store.Collection]map[string][]byte{}, deleted: map[store.Collection]map[string]bool{}}
	if err := d.nest.Run(fn, tx); err != nil {
		return err
	}
	for c, m := range tx.staged {
		if d.data[c] == nil {
			d.data[c] = map[string][]byte{}
		}
		for k, v := range m {
			d.data[c][k] = v
		}
	}
	for c, m := range tx.deleted {
		for k := range m {
			delete(d.data[c], k)
		}
	}
	return nil
}

// Close implements store.Driver.
func (d *Driver) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	d.data = nil
	return nil
}

// memTx stages writes; the driver's write lock is held for its whole life.
type memTx struct {
	d       *Driver
	staged  map[store.Collection]map[string][]byte
	deleted map[store.Collection]map[string]bool
}

func (t *memTx) Get(ctx context.Context, c store.Collection, key string) ([]byte, error) {
	if v, ok := t.staged[c][key]; ok {
		return clone(v), nil
	}
	if t.deleted[c][key] {
		return nil, notFound(c, key)
	}
	v, ok := t.d.data[c][key]
	if !ok {
		return nil, notFound(c, key)
	}
	return clone(v), nil
}

func (t *memTx) List(ctx context.Context, c store.Collection, opts store.ListOptions) ([]store.Entry, error) {
	merged := map[string][]byte{}
	for k, v := range t.d.data[c] {
		if !t.deleted[c][k] {
			merged[k] = v
		}
	}
	for k, v := range t.staged[c] {
		merged[k] = v
	}
	return list(merged, opts), nil
}

func (t *memTx) Put(ctx context.Context, c store.Collection, key string, value []byte) error {
	if t.staged[c] == nil {
		t.staged[c] = map[string][]byte{}
	}
	t.staged[c][key] = clone(value)
	delete(t.deleted[c], key)
	return nil
}

func (t *memTx) Delete(ctx context.Context, c store.Collection, key string) error {
	delete(t.staged[c], key)
	if t.deleted[c] == nil {
		t.deleted[c] = map[string]bool{}
	}
	t.deleted[c][key] = true
	return nil
}
