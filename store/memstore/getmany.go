package memstore

import (
	"context"
	"fmt"

	"github.com/switchyard-ai/switchyard/store"
)

// GetMany implements store.MultiGetter: the records of keys in c read under one lock.
func (d *Driver) GetMany(ctx context.Context, c store.Collection, keys []string) (map[string][]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if d.nestedRead() {
		return nil, fmt.Errorf("memstore: get many %s: %w", c, store.ErrNested)
	}
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.closed {
		return nil, store.ErrClosed
	}
	out := make(map[string][]byte, len(keys))
	for _, k := range keys {
		if v, ok := d.data[c][k]; ok {
			out[k] = clone(v)
		}
	}
	return out, nil
}
