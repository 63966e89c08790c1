package main

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// cutGrace is how long requests cut at --shutdown-timeout get to write their last words (a
// 503, or the error event ending a stream) and record their usage, before their connections
// are closed.
const cutGrace = 2 * time.Second

// inflightHandlers counts the requests its handler is serving, so that shutdown can wait for
// the ones cut at --shutdown-timeout to return before it closes the store: http.Server.Close
// closes their connections but does not wait for their handlers, whose last writes (the
// request history, a virtual key's spend) would otherwise meet a closed store.
type inflightHandlers struct {
	h      http.Handler
	wg     sync.WaitGroup
	active atomic.Int64
}

// ServeHTTP implements http.Handler.
func (f *inflightHandlers) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.wg.Add(1)
	f.active.Add(1)
	defer func() {
		f.active.Add(-1)
		f.wg.Done()
	}()
	f.h.ServeHTTP(w, r)
}

// wait blocks until every handler has returned, or ctx ends; it reports whether they all
// returned. Call it once the server accepts no more requests.
func (f *inflightHandlers) wait(ctx context.Context) bool {
	if f.active.Load() == 0 {
		return true // also with a budget already spent (--shutdown-timeout 0)
	}
	done := make(chan struct{})
	go func() {
		f.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return true
	case <-ctx.Done():
		return false
	}
}
