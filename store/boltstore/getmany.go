package boltstore

import (
	"context"

	bolt "go.etcd.io/bbolt"

	"github.com/switchyard-ai/switchyard/store"
)

// GetMany implements store.MultiGetter: the records of keys in c read in one read
// transaction.
func (d *Driver) GetMany(ctx context.Context, c store.Collection, keys []string) (map[string][]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make(map[string][]byte, len(keys))
	err := d.db.View(func(btx *bolt.Tx) error {
		b := btx.Bucket([]byte(c))
		if b == nil {
			return nil
		}
		for _, k := range keys {
			if v := b.Get([]byte(k)); v != nil {
				out[k] = append([]byte(nil), v...)
			}
		}
		return nil
	})
	if err != nil {
		return nil, wrap(err)
	}
	return out, nil
}
