package client_test

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/switchyard-ai/switchyard/client"
)

// Calls of RouterTrainer and AgentOptimizer made before any id is known fail without a
// request, with an error callers can tell apart: errors.Is(err, client.ErrMissingID).
func TestReview22iMissingIDIsExported(t *testing.T) {
	var calls atomic.Int64
	c := fakeServer(t, func(w http.ResponseWriter, r *http.Request) { calls.Add(1); http.NotFound(w, r) })
	ctx := context.Background()
	tr, o := c.RouterTrainer(), c.AgentOptimizer()
	_, e1 := tr.Status(ctx)
	_, e2 := tr.Wait(ctx, 1)
	_, e3 := tr.Cancel(ctx)
	_, e4 := tr.Model(ctx)
	_, e5 := tr.Predict(ctx, []string{"x"})
	_, e6 := o.Status(ctx)
	_, e7 := o.Wait(ctx, 1)
	_, e8 := o.Results(ctx)
	_, e9 := o.Cancel(ctx)
	for i, err := range []error{e1, e2, e3, e4, e5, e6, e7, e8, e9} {
		if !errors.Is(err, client.ErrMissingID) {
			t.Errorf("call %d: err = %v; want one matching client.ErrMissingID", i+1, err)
		}
	}
	if calls.Load() != 0 {
		t.Fatalf("%d requests sent without an id", calls.Load())
	}
}
