package client_test

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/switchyard-ai/switchyard/client"
)

// fakeStatusServer answers every status request of a training or optimization job with
// the given state until it has answered limit of them; after that it answers 404, so that
// a poll that does not stop by itself ends anyway (with a NotFound error) instead of
// running until a deadline.
func fakeStatusServer(t *testing.T, state string, limit int64) (*client.Client, *atomic.Int64) {
	t.Helper()
	var calls atomic.Int64
	c := fakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) > limit {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"error":"Not Found","message":"gone"}`))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api/v1/routers/train/status":
			w.Write([]byte(`{"training_job_id":"tj_1","status":"` + state + `"}`))
		case "/api/v1/optimize/status":
			w.Write([]byte(`{"job_id":"oj_1","status":"` + state + `","n_iterations":3}`))
		default:
			http.NotFound(w, r)
		}
	})
	return c, &calls
}

// A job in a state the client does not know (a newer server's "cancelled", or an empty
// status) is not polled forever: Wait returns that status with an error matching
// ErrUnknownState after one request, and Watch yields the status before that error.
func TestReview22iWaitEndsOnUnknownState(t *testing.T) {
	for _, state := range []string{"cancelled", "archived", ""} {
		c, calls := fakeStatusServer(t, state, 20)
		tr := c.RouterTrainer()
		tr.UseJob("tj_1")
		st, err := tr.Wait(context.Background(), 1)
		if !errors.Is(err, client.ErrUnknownState) || st == nil || st.Status != state || calls.Load() != 1 {
			t.Fatalf("training state %q: Wait = %+v, %v after %d requests; want the status and ErrUnknownState after 1", state, st, err, calls.Load())
		}

		c, calls = fakeStatusServer(t, state, 20)
		o := c.AgentOptimizer()
		o.UseJob("oj_1")
		var seen []string
		var last error
		for st, err := range o.Watch(context.Background(), 1) {
			if err != nil {
				last = err
				continue
			}
			seen = append(seen, st.Status)
		}
		if !errors.Is(last, client.ErrUnknownState) || len(seen) != 1 || seen[0] != state || calls.Load() != 1 {
			t.Fatalf("optimization state %q: Watch yielded %q then %v after %d requests; want [%q] then ErrUnknownState after 1", state, seen, last, calls.Load(), state)
		}
	}
}

// The known states still behave as before: queued and running are polled again, the
// terminal states (interrupted included for optimization) end the wait without an error.
func TestReview22iWaitKnownStates(t *testing.T) {
	for _, state := range []string{client.OptimizeCompleted, client.OptimizeFailed, client.OptimizeInterrupted} {
		c, calls := fakeStatusServer(t, state, 20)
		o := c.AgentOptimizer()
		o.UseJob("oj_1")
		st, err := o.Wait(context.Background(), 1)
		if err != nil || st.Status != state || calls.Load() != 1 {
			t.Fatalf("optimization %q: Wait = %+v, %v after %d requests", state, st, err, calls.Load())
		}
	}
	for _, state := range []string{client.TrainQueued, client.TrainRunning} {
		c, calls := fakeStatusServer(t, state, 3)
		tr := c.RouterTrainer()
		tr.UseJob("tj_1")
		st, err := tr.Wait(context.Background(), 1)
		if !errors.Is(err, client.ErrNotFound) || errors.Is(err, client.ErrUnknownState) || st.Status != state || calls.Load() != 4 {
			t.Fatalf("training %q: Wait = %+v, %v after %d requests; want polling on until the 404", state, st, err, calls.Load())
		}
	}
}
