package telemetry

import (
	"context"
	"errors"
	"time"

	"github.com/switchyard-ai/switchyard/store"
)

// Store wraps a store driver so that every operation's latency is observed
// (switchyard_store_operation_duration_seconds by operation and outcome). Operations
// inside an Update are timed as the one update.
func (m *Metrics) Store(d store.Driver) store.Driver { return &timedDriver{d: d, m: m} }

type timedDriver struct {
	d store.Driver
	m *Metrics
}

func (t *timedDriver) observe(op string, start time.Time, err error) {
	outcome := "ok"
	switch {
	case err == nil:
	case errors.Is(err, store.ErrNotFound):
		outcome = "not_found"
	default:
		outcome = "error"
	}
	t.m.storeOps.WithLabelValues(op, outcome).Observe(time.Since(start).Seconds())
}

func (t *timedDriver) Get(ctx context.Context, c store.Collection, key string) ([]byte, error) {
	start := time.Now()
	v, err := t.d.Get(ctx, c, key)
	t.observe("get", start, err)
	return v, err
}

func (t *timedDriver) List(ctx context.Context, c store.Collection, opts store.ListOptions) ([]store.Entry, error) {
	start := time.Now()
	es, err := t.d.List(ctx, c, opts)
	t.observe("list", start, err)
	return es, err
}

func (t *timedDriver) Put(ctx context.Context, c store.Collection, key string, value []byte) error {
	start := time.Now()
	err := t.d.Put(ctx, c, key, value)
	t.observe("put", start, err)
	return err
}

func (t *timedDriver) Delete(ctx context.Context, c store.Collection, key string) error {
	start := time.Now()
	err := t.d.Delete(ctx, c, key)
	t.observe("delete", start, err)
	return err
}

func (t *timedDriver) Update(ctx context.Context, fn func(tx store.Tx) error) error {
	start := time.Now()
	err := t.d.Update(ctx, fn)
	t.observe("update", start, err)
	return err
}

// UpdateLocked forwards store.RecordLocker's locking to the wrapped driver (its Update
// when it has none), timed as an update.
func (t *timedDriver) UpdateLocked(ctx context.Context, locks []store.Ref, fn func(tx store.Tx) error) error {
	start := time.Now()
	err := store.UpdateLocked(ctx, t.d, locks, fn)
	t.observe("update", start, err)
	return err
}

func (t *timedDriver) Close() error { return t.d.Close() }

// Unwrap returns the wrapped driver (e.g. to reach pgstore's connection pool).
func (t *timedDriver) Unwrap() store.Driver { return t.d }
