package storetest

import (
	"context"
	"sync"

	"github.com/switchyard-ai/switchyard/store"
)

// ReadCounter wraps a driver and counts, per collection, the entries its List calls
// return and its Gets, inside transactions too: for tests that bound what a piece of code
// reads (a sweep that must read only what expired). It is safe for concurrent use.
type ReadCounter struct {
	store.Driver
	mu        sync.Mutex
	listed    map[store.Collection]int
	gets      map[store.Collection]int
	afterList map[store.Collection]func()
}

// NewReadCounter wraps d.
func NewReadCounter(d store.Driver) *ReadCounter {
	return &ReadCounter{Driver: d, listed: map[store.Collection]int{}, gets: map[store.Collection]int{}, afterList: map[store.Collection]func(){}}
}

// Reset sets every count back to zero.
func (d *ReadCounter) Reset() {
	d.mu.Lock()
	defer d.mu.Unlock()
	clear(d.listed)
	clear(d.gets)
}

// Counts returns the entries listed and the Gets made of c since the last Reset.
func (d *ReadCounter) Counts(c store.Collection) (listed, gets int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.listed[c], d.gets[c]
}

// AfterList makes f run once, after the next List of c outside a transaction returns
// (another writer between a listing and the transaction that acts on it).
func (d *ReadCounter) AfterList(c store.Collection, f func()) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.afterList[c] = f
}

func (d *ReadCounter) countGet(c store.Collection) {
	d.mu.Lock()
	d.gets[c]++
	d.mu.Unlock()
}

// countList counts n entries listed of c; outside a transaction (takeAfter) it returns
// what AfterList set for c, once.
func (d *ReadCounter) countList(c store.Collection, n int, takeAfter bool) func() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.listed[c] += n
	if !takeAfter {
		return nil
	}
	f := d.afterList[c]
	delete(d.afterList, c)
	return f
}

// Get implements store.Driver, counting the read.
func (d *ReadCounter) Get(ctx context.Context, c store.Collection, key string) ([]byte, error) {
	d.countGet(c)
	return d.Driver.Get(ctx, c, key)
}

// List implements store.Driver, counting the entries returned.
func (d *ReadCounter) List(ctx context.Context, c store.Collection, opts store.ListOptions) ([]store.Entry, error) {
	page, err := d.Driver.List(ctx, c, opts)
	if f := d.countList(c, len(page), true); f != nil {
		f()
	}
	return page, err
}

// Update implements store.Driver, counting the reads made through the transaction.
func (d *ReadCounter) Update(ctx context.Context, fn func(tx store.Tx) error) error {
	return d.Driver.Update(ctx, func(tx store.Tx) error { return fn(&readCountingTx{Tx: tx, d: d}) })
}

type readCountingTx struct {
	store.Tx
	d *ReadCounter
}

// Unwrap returns the driver's transaction, so that pgstore.PgxTx sees through the counter.
func (t *readCountingTx) Unwrap() store.Tx { return t.Tx }

func (t *readCountingTx) Get(ctx context.Context, c store.Collection, key string) ([]byte, error) {
	t.d.countGet(c)
	return t.Tx.Get(ctx, c, key)
}

func (t *readCountingTx) List(ctx context.Context, c store.Collection, opts store.ListOptions) ([]store.Entry, error) {
	page, err := t.Tx.List(ctx, c, opts)
	t.d.countList(c, len(page), false)
	return page, err
}
