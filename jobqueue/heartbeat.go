package jobqueue

import (
	"context"
	"time"
)

// Beat is one heartbeat of a running job: it refreshes the job's record and reports
// whether the job is lost to this worker (its record is gone, or shows another start: a
// worker took it over after presuming this one dead) and whether a cancel was requested
// in the record (by a process the queue's own signal may not reach).
type Beat func(ctx context.Context) (lost, cancelRequested bool, err error)

// KeepAlive calls beat every HeartbeatInterval(staleAfter) until the returned stop is
// called or ctx ends. A lost job ends with cancel(lostCause) and the beats stop; a cancel
// request ends it with cancel(cancelCause). A failed beat is passed to onErr (while ctx
// lasts) and the next one tries again. stop waits for a beat in progress.
func KeepAlive(ctx context.Context, staleAfter time.Duration, beat Beat, cancel context.CancelCauseFunc,
	lostCause, cancelCause error, onErr func(error)) (stop func()) {
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(HeartbeatInterval(staleAfter))
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
			lost, cancelled, err := beat(ctx)
			if err != nil && ctx.Err() == nil {
				onErr(err)
			}
			if lost {
				cancel(lostCause)
				return
			}
			if cancelled {
				cancel(cancelCause)
			}
		}
	}()
	return func() { close(quit); <-done }
}
