package server

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestReview10cKeyLimitCheckThenTake: the per-key limit checks and takes a request in one
// step (review 10c found a check and a take apart, which let concurrent requests through):
// of many concurrent requests against a limit of 1, one passes.
func TestReview10cKeyLimitCheckThenTake(t *testing.T) {
	l := newKeyLimiter(1)
	now := time.Now()
	var passed atomic.Int32
	var wg sync.WaitGroup
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if ok, _ := l.take("k", now); ok {
				passed.Add(1)
			}
		}()
	}
	wg.Wait()
	if n := passed.Load(); n != 1 {
		t.Errorf("%d requests passed a limit of 1", n)
	}
}
