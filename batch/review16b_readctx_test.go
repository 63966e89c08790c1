package batch_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/batch"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// gatedResults is a store whose listings of batch results wait, once gated, until gate is
// closed or their context ends (a store that hangs; a finalization of a huge batch).
type gatedResults struct {
	*memstore.Driver
	gated atomic.Bool
	gate  chan struct{}
}

func (d *gatedResults) List(ctx context.Context, c store.Collection, o store.ListOptions) ([]store.Entry, error) {
	if c == store.BatchResults && d.gated.Load() {
		select {
		case <-d.gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return d.Driver.List(ctx, c, o)
}

// TestReview16bReadOfOverdueBatchHonoursItsContext: a Get (or List) that finds a batch
// past its window finalizes it in the request; a slow finalization must not hold the
// read past its context (the client's deadline, or its going away): the read answers (the
// batch as it was, or an error) and the finalization may go on.
func TestReview16bReadOfOverdueBatchHonoursItsContext(t *testing.T) {
	d := &gatedResults{Driver: memstore.NewDriver(), gate: make(chan struct{})}
	st := store.New(d)
	defer st.Close()
	clock := newFakeClock()
	h, _ := parked(t, st, newScripted(), batch.Options{Clock: clock.Now})
	b := h.create(t, "alice", h.upload(t, "alice", jsonl("ok", "ok")).ID)
	clock.Add(25 * time.Hour)
	d.gated.Store(true)
	defer close(d.gate)

	for _, name := range []string{"get", "list"} {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		done := make(chan error, 1)
		go func() {
			var err error
			if name == "get" {
				_, err = h.svc.Get(ctx, "alice", b.ID)
			} else {
				_, err = h.svc.List(ctx, "alice", "", 0)
			}
			done <- err
		}()
		select {
		case <-done:
		case <-time.After(3 * time.Second):
			cancel()
			t.Fatalf("%s of a batch past its window still blocked 3 s after its 200 ms context ended", name)
		}
		cancel()
	}
}
