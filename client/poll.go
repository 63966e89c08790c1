package client

import (
	"context"
	"iter"
	"time"
)

// poll calls get every interval (def when every is 0 or less), yielding each result, until
// done says so, get fails, the consumer stops or ctx ends.
func poll[T any](ctx context.Context, every, def time.Duration, get func(context.Context) (T, error), done func(T) bool) iter.Seq2[T, error] {
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
