package pgstore

import (
	"context"
	"fmt"

	"github.com/switchyard-ai/switchyard/store"
)

// GetMany implements store.MultiGetter: the records of keys in c read in one query.
func (d *Driver) GetMany(ctx context.Context, c store.Collection, keys []string) (map[string][]byte, error) {
	if err := d.open(); err != nil {
		return nil, err
	}
	bkeys := make([][]byte, len(keys))
	for i, k := range keys {
		bkeys[i] = []byte(k)
	}
	rows, err := d.pool.Query(ctx, "SELECT key, value FROM switchyard_records WHERE collection = $1 AND key = ANY($2)", string(c), bkeys)
	if err != nil {
		return nil, fmt.Errorf("pgstore: get %d records of %s: %w", len(keys), c, err)
	}
	defer rows.Close()
	out := make(map[string][]byte, len(keys))
	for rows.Next() {
		var k, v []byte
		if err := rows.Scan(&k, &v); err != nil {
			return nil, fmt.Errorf("pgstore: get records of %s: %w", c, err)
		}
		if v == nil {
			v = []byte{}
		}
		out[string(k)] = v
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("pgstore: get records of %s: %w", c, err)
	}
	return out, nil
}
