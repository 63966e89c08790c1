package telemetry

import (
	"context"
	"time"

	"github.com/switchyard-ai/switchyard/store"
)

// GetMany forwards store.MultiGetter to the wrapped driver (one Get per key when it has
// none), timed as one get_many operation, so a wrapped store still reads a page's
// records in one go.
func (t *timedDriver) GetMany(ctx context.Context, c store.Collection, keys []string) (map[string][]byte, error) {
	start := time.Now()
	out, err := store.GetMany(ctx, t.d, c, keys)
	t.observe("get_many", start, err)
	return out, err
}
