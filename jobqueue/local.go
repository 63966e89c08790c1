package jobqueue

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// DefaultLocalRetryDelay is how long Local waits before running again a job whose handler
// failed (with an error other than RetryLater).
const DefaultLocalRetryDelay = time.Second

// Local is the in-process [Queue], for a deployment of one process (the bbolt and
// in-memory stores): each kind's jobs wait in a first-in first-out list worked by the
// kind's Workers goroutines, and an id is queued at most once while it waits or runs.
// Nothing of it outlives the process: a service re-enqueues its unfinished jobs from the
// store when it starts (EnqueueUnfinished).
//
// No other process can run a job, so StaleAfter is 0: a job that a service's record shows
// running while this process does not run it was left by a process that stopped, and is
// resumed at once.
//
// Make one with NewLocal, Register the kinds, Start it and Stop it when done.
type Local struct {
	retryDelay time.Duration

	mu      sync.Mutex
	cond    *sync.Cond
	kinds   map[string]*localKind
	started bool
	stopped bool
	cancel  context.CancelCauseFunc // ends the workers' context (Start's)
	wg      sync.WaitGroup
}

// localKind is one registered kind's list and jobs.
type localKind struct {
	k       Kind
	waiting []string
	// state is every id this kind holds: waiting, scheduled (a retry's timer) or running.
	state map[string]*localJob
}

// localJob is one job held by a Local queue.
type localJob struct {
	running bool
	timer   *time.Timer             // a scheduled retry
	cancel  context.CancelCauseFunc // a running job's
}

var _ Queue = (*Local)(nil)

// NewLocal returns an in-process queue; retryDelay is how long a failed job waits before it
// runs again (0: DefaultLocalRetryDelay).
func NewLocal(retryDelay time.Duration) *Local {
	if retryDelay <= 0 {
		retryDelay = DefaultLocalRetryDelay
	}
	q := &Local{retryDelay: retryDelay, kinds: map[string]*localKind{}}
	q.cond = sync.NewCond(&q.mu)
	return q
}

// Register implements Queue. It fails once the queue has started.
func (q *Local) Register(kind string, k Kind) error {
	if kind == "" || k.Run == nil {
		return errors.New("jobqueue: Register needs a kind and a handler")
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.started {
		return fmt.Errorf("jobqueue: register %s: the queue has started", kind)
	}
	if _, dup := q.kinds[kind]; dup {
		return fmt.Errorf("jobqueue: kind %s registered twice", kind)
	}
	q.kinds[kind] = &localKind{k: k, state: map[string]*localJob{}}
	return nil
}

// StaleAfter implements Queue: 0, as no other process can hold a job.
func (q *Local) StaleAfter() time.Duration { return 0 }

// Enqueue implements Queue: a no-op for an id that waits or runs. It fails for a kind
// that was not registered.
func (q *Local) Enqueue(ctx context.Context, kind, id string) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	lk := q.kinds[kind]
	if lk == nil {
		return fmt.Errorf("jobqueue: enqueue %s %s: kind not registered", kind, id)
	}
	if q.stopped {
		return fmt.Errorf("jobqueue: enqueue %s %s: %w", kind, id, ErrShutdown)
	}
	if _, held := lk.state[id]; held {
		return nil
	}
	lk.state[id] = &localJob{}
	lk.waiting = append(lk.waiting, id)
	q.cond.Broadcast()
	return nil
}

// Cancel implements Queue: a waiting or scheduled job is dropped, a running one's context
// ends with ErrCancelled.
func (q *Local) Cancel(ctx context.Context, kind, id string) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	lk := q.kinds[kind]
	if lk == nil {
		return nil
	}
	j, ok := lk.state[id]
	if !ok {
		return nil
	}
	if j.running {
		j.cancel(ErrCancelled)
		return nil
	}
	if j.timer != nil {
		j.timer.Stop()
	}
	delete(lk.state, id)
	for i, w := range lk.waiting {
		if w == id {
			lk.waiting = append(lk.waiting[:i:i], lk.waiting[i+1:]...)
			break
		}
	}
	return nil
}

// Start runs each kind's workers until ctx ends or Stop is called; handlers' contexts then
// end with ErrShutdown.
func (q *Local) Start(ctx context.Context) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.started {
		return errors.New("jobqueue: already started")
	}
	q.started = true
	wctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	q.cancel = cancel
	context.AfterFunc(ctx, func() { q.stop() })
	for _, lk := range q.kinds {
		for range lk.k.Workers {
			q.wg.Add(1)
			go q.work(wctx, lk)
		}
	}
	return nil
}

// Stop stops the workers: running handlers' contexts end with ErrShutdown, waiting jobs
// are dropped (their services re-enqueue them at their next start); Stop waits for the
// handlers to return until ctx ends.
func (q *Local) Stop(ctx context.Context) error {
	q.stop()
	done := make(chan struct{})
	go func() { q.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("jobqueue: stop: %w", ctx.Err())
	}
}

// stop marks the queue stopped and ends the running handlers' contexts.
func (q *Local) stop() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.stopped {
		return
	}
	q.stopped = true
	if q.cancel != nil {
		q.cancel(ErrShutdown)
	}
	for _, lk := range q.kinds {
		for _, j := range lk.state {
			if j.timer != nil {
				j.timer.Stop()
			}
		}
	}
	q.cond.Broadcast()
}

// work runs lk's jobs one at a time until the queue stops.
func (q *Local) work(ctx context.Context, lk *localKind) {
	defer q.wg.Done()
	for {
		q.mu.Lock()
		for !q.stopped && len(lk.waiting) == 0 {
			q.cond.Wait()
		}
		if q.stopped {
			q.mu.Unlock()
			return
		}
		id := lk.waiting[0]
		lk.waiting = lk.waiting[1:]
		jctx, cancel := context.WithCancelCause(ctx)
		j := lk.state[id]
		j.running, j.cancel = true, cancel
		q.mu.Unlock()

		err := lk.k.Run(jctx, id)
		cancel(nil)

		q.mu.Lock()
		j.running, j.cancel = false, nil
		var later *RetryLaterError
		switch {
		case q.stopped:
			delete(lk.state, id)
		case errors.As(err, &later):
			q.scheduleLocked(lk, id, j, later.After)
		case err != nil && !errors.Is(context.Cause(jctx), ErrCancelled):
			q.scheduleLocked(lk, id, j, q.retryDelay)
		default:
			delete(lk.state, id)
		}
		q.mu.Unlock()
	}
}

// scheduleLocked puts job id back in lk's list after d; q.mu is held.
func (q *Local) scheduleLocked(lk *localKind, id string, j *localJob, d time.Duration) {
	j.timer = time.AfterFunc(d, func() {
		q.mu.Lock()
		defer q.mu.Unlock()
		if q.stopped || lk.state[id] != j {
			return // stopped, or cancelled meanwhile
		}
		j.timer = nil
		lk.waiting = append(lk.waiting, id)
		q.cond.Broadcast()
	})
}
