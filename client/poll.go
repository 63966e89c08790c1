package client

import (
	"context"
	"errors"
	"iter"
	"time"
)

// poll calls get every interval (def when every is 0 or less), yielding each result, until
// done says so, get fails, the consumer stops or ctx ends. When unknown is not nil and
// returns an error for a result that is not done (a state the caller cannot tell to be
// pending), that error is yielded after the result and the poll ends: a state this client
// does not know is never waited on forever.
func poll[T any](ctx context.Context, every, def time.Duration, get func(context.Context) (T, error), done func(T) bool, unknown func(T) error) iter.Seq2[T, error] {
	if every <= 0 {
		every = def
	}
	return func(yield func(T, error) bool) {
		var zero T
		timer := time.NewTimer(0)
		defer timer.Stop()
		for {
			select {
			case <-ctx.Done():
				yield(zero, ctx.Err())
				return
			case <-timer.C:
			}
			v, err := get(ctx)
			if err != nil {
				yield(zero, err)
				return
			}
			if !yield(v, nil) || done(v) {
				return
			}
			if unknown != nil {
				if err := unknown(v); err != nil {
					yield(zero, err)
					return
				}
			}
			timer.Reset(every)
		}
	}
}

// waitLast runs a poll to its end and returns the last value it yielded, with the error
// that ended it if any.
func waitLast[T any](seq iter.Seq2[T, error]) (T, error) {
	var last T
	for v, err := range seq {
		if err != nil {
			return last, err
		}
		last = v
	}
	return last, nil
}

// ErrUnknownState is matched (errors.Is) by the error that ends RouterTrainer and
// AgentOptimizer Watch and Wait when the job reports a state this client does not know
// (neither one it waits through, queued or running, nor a terminal one): rather than
// polling forever, the wait ends after yielding that status.
var ErrUnknownState = errors.New("job state unknown to this client")
