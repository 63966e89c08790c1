package usagelog

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/switchyard-ai/switchyard/store"
)

// writeCountingDriver counts the keys its committed transactions put, by collection, and
// in the owner index by kind (the part of the key before its first "/"); and the stored
// requests read outside transactions (Gets of request_log: what a listing reads).
type writeCountingDriver struct {
	store.Driver
	mu    sync.Mutex
	puts  map[string]int
	reads atomic.Int64
}

func (d *writeCountingDriver) Get(ctx context.Context, c store.Collection, key string) ([]byte, error) {
	if c == store.RequestLog {
		d.reads.Add(1)
	}
	return d.Driver.Get(ctx, c, key)
}

func newWriteCountingDriver(d store.Driver) *writeCountingDriver {
	return &writeCountingDriver{Driver: d, puts: map[string]int{}}
}

// Update counts the puts of fn's last run once the transaction is committed (a driver may
// run fn more than once).
func (d *writeCountingDriver) Update(ctx context.Context, fn func(tx store.Tx) error) error {
	var run map[string]int
	err := d.Driver.Update(ctx, func(tx store.Tx) error {
		run = map[string]int{}
		return fn(&countingTx{Tx: tx, puts: run})
	})
	if err == nil {
		d.mu.Lock()
		for k, n := range run {
			d.puts[k] += n
		}
		d.mu.Unlock()
	}
	return err
}

// counts returns the puts so far and starts counting afresh.
func (d *writeCountingDriver) counts() map[string]int {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := d.puts
	d.puts = map[string]int{}
	return out
}

// total is the sum of counts' values.
func total(counts map[string]int) int {
	n := 0
	for _, v := range counts {
		n += v
	}
	return n
}

type countingTx struct {
	store.Tx
	puts map[string]int
}

func (t *countingTx) Put(ctx context.Context, c store.Collection, key string, value []byte) error {
	name := string(c)
	if c == store.OwnerIndex {
		kind, _, _ := strings.Cut(key, "/")
		name += ":" + kind
	}
	t.puts[name]++
	return t.Tx.Put(ctx, c, key, value)
}
