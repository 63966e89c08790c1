// Package jobqueue is the seam between Switchyard's job services (trainer, optimizer, batch) and a
// job queue shared by several processes.
//
// Without a Queue a service runs its jobs in its own process, on an in-process pool fed by
// a Go channel (the bbolt and memstore deployments); [Local] is such a pool behind the
// Queue interface, for a service that keeps one code path for both (package batch). With one (package
// jobqueue/riverqueue, on PostgreSQL) any process accepts a job — the service stores the
// job's record, then [Queue.Enqueue]s its id — and exactly one worker, in whichever
// process, runs it. The job record in the store stays the source of truth for the job's
// state; the queue only decides who runs what, and carries cancellation to the process
// that runs a job.
//
// Worker death: a running job's worker refreshes a heartbeat in the job's record every
// [HeartbeatInterval] of the queue's [Queue.StaleAfter]. When a worker dies mid-job the
// queue hands the job to another worker — as soon as [Kind.Dead] reports the heartbeat
// stale, or after the queue's own (slower) detection of stuck jobs; the service's handler
// then finds the record still "running", and
//   - with a heartbeat younger than StaleAfter, the first worker is alive (the queue only
//     suspected it): the handler answers [RetryLater] until the heartbeat is stale or the
//     job has ended, so a slow job is never run twice;
//   - with a stale heartbeat, the worker is gone: the job is re-run, or failed once it was
//     started MaxAttempts times, by the same rules as the services' restart recovery.
package jobqueue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/switchyard-ai/switchyard/store"
)

// Handler runs one job of a kind: id is the service's job id. ctx ends when the job is
// cancelled (context.Cause(ctx) matches ErrCancelled, in whatever process Cancel was
// called) or when the worker shuts down (the cause matches ErrShutdown). A nil return
// finishes the job for the queue; an error from RetryLater runs it again after the delay
// without counting a queue attempt; any other error runs it again after the queue's retry
// delay (the handler's record decides what the next run does).
type Handler func(ctx context.Context, id string) error

// Kind is what a service registers with a Queue for one kind of job.
type Kind struct {
	// Workers is how many jobs of the kind this process runs at once; 0 runs none here
	// (the process enqueues and cancels jobs of the kind: an HTTP-only replica).
	Workers int
	// Run runs one job.
	Run Handler
	// Dead, when set, reports whether the worker of running job id is dead (the job's
	// heartbeat is older than StaleAfter) and how many times the job has been started. The
	// queue asks it about the jobs it sees running, and hands a dead worker's job to
	// another worker at once (one hand-over per start count, so never twice), instead of
	// waiting for its own slower rescue of stuck jobs.
	Dead func(ctx context.Context, id string) (dead bool, starts int, err error)
}

// Queue is a job queue shared by every process of a deployment. Implementations are safe
// for concurrent use.
type Queue interface {
	// Register declares a kind of job: how many this process runs, the handler that runs
	// them, and how to tell a dead worker's job. Register every kind before the queue
	// starts.
	Register(kind string, k Kind) error
	// Enqueue adds job id of kind. Enqueueing an id that is already waiting, running or
	// finished is a no-op, so a job is never queued twice.
	Enqueue(ctx context.Context, kind, id string) error
	// Cancel asks the worker running job id of kind, in any process, to stop (its
	// handler's ctx ends with ErrCancelled), and drops the job if it is still waiting. A
	// job the queue no longer holds is not an error.
	Cancel(ctx context.Context, kind, id string) error
	// StaleAfter is how long a running job's heartbeat may stay unchanged before its
	// worker counts as dead (see the package comment).
	StaleAfter() time.Duration
}

// TxEnqueuer is implemented by a Queue that can enqueue inside the store transaction that
// creates the job's record, so that a stored job is never left without its queue entry by
// a crash between the two. EnqueueTx reports false when tx is not a transaction of its
// database (the caller then calls Enqueue after the commit).
type TxEnqueuer interface {
	EnqueueTx(ctx context.Context, tx store.Tx, kind, id string) (bool, error)
}

// Causes of a handler's context ending.
var (
	// ErrCancelled is the cause when Cancel was called for the job.
	ErrCancelled = errors.New("jobqueue: job cancelled")
	// ErrShutdown is the cause when the worker stops (the queue is stopped).
	ErrShutdown = errors.New("jobqueue: worker shutting down")
)

// RetryLaterError asks the queue to run the job again after After, without counting an
// attempt. Make it with RetryLater.
type RetryLaterError struct {
	// After is the delay before the next run.
	After time.Duration
}

// Error implements error.
func (e *RetryLaterError) Error() string { return fmt.Sprintf("jobqueue: run again in %s", e.After) }

// RetryLater returns the error a Handler returns to be run again after d.
func RetryLater(d time.Duration) error { return &RetryLaterError{After: max(d, 0)} }

// MaxHeartbeatInterval bounds HeartbeatInterval: the heartbeat also carries cancel
// requests from other processes to the worker, so it stays frequent with a long
// StaleAfter.
const MaxHeartbeatInterval = 5 * time.Second

// HeartbeatInterval is how often a running job refreshes its heartbeat for a queue whose
// StaleAfter is staleAfter: a quarter of it, so three beats may be lost before the job
// counts as dead, at least 100ms and at most MaxHeartbeatInterval.
func HeartbeatInterval(staleAfter time.Duration) time.Duration {
	return min(max(staleAfter/4, 100*time.Millisecond), MaxHeartbeatInterval)
}

// Stale reports whether a running job last seen (heartbeat, else start time) at seen is
// past the queue's staleAfter at now, and if not, how long until it will be.
func Stale(seen, now time.Time, staleAfter time.Duration) (bool, time.Duration) {
	age := now.Sub(seen)
	if age >= staleAfter {
		return true, 0
	}
	return false, staleAfter - age
}

// JobStat is one job as a job service reports it to monitoring (trainer and optimizer
// JobStats; telemetry's job metrics).
type JobStat struct {
	ID    string
	State string
	// Seconds is how long a finished job ran (started to finished); 0 for one not finished.
	Seconds float64
	// Finished is when a finished job ended (zero for one not finished).
	Finished time.Time
}

// Stats reads every record of collection c in st (every owner's) and turns each into a
// JobStat with stat; a record that does not decode is skipped. It reads the whole
// collection: callers cache the result (telemetry scrapes do).
func Stats[T any](ctx context.Context, st *store.Store, c store.Collection, stat func(*T) JobStat) ([]JobStat, error) {
	entries, err := st.List(ctx, c, store.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := make([]JobStat, 0, len(entries))
	for _, e := range entries {
		var r T
		if json.Unmarshal(e.Value, &r) != nil {
			continue
		}
		out = append(out, stat(&r))
	}
	return out, nil
}

// FailureLevel is the log level of a job's failure: a cancelled context (a shutdown, a
// cancelled job) is expected and the work recovers, so it is Info, not Error.
func FailureLevel(err error) slog.Level {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return slog.LevelInfo
	}
	return slog.LevelError
}
