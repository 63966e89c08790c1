// Package riverqueue is the PostgreSQL [jobqueue.Queue], on River
// (github.com/riverqueue/river): a maintained Postgres job queue with unique jobs, stuck-job
// rescue and cancellation that reaches the worker running a job in any process.
//
// Every Switchyard job is one River job of kind "switchyard_job" whose args are the
// service's kind and job id; each service kind has its own River queue
// ("switchyard_<kind>"), worked by the number of workers the service registered. Inserts
// are unique by args (kind, id and, for a hand-over from a dead worker, its start count),
// so a job id is enqueued at most once while its River job waits, runs or is kept as
// completed; and a service claims a job in its record (a SERIALIZABLE read-modify-write on
// PostgreSQL) before running it, so two River jobs for one id never run it twice. Open runs River's own migrations (rivermigrate) at start-up,
// under an advisory lock so processes starting together do not race.
//
// Detecting a dead worker. The services keep a heartbeat in each running job's record,
// refreshed by its worker every jobqueue.HeartbeatInterval(StaleAfter); only a heartbeat
// older than StaleAfter counts as a dead worker, so a short StaleAfter is safe for slow
// jobs. Two paths hand a dead worker's job to another worker:
//   - the sweep: every started process looks, every StaleAfter/2, at the jobs River has
//     running and asks their kind's jobqueue.Kind.Dead about each; for a dead worker's job
//     it inserts a new River job for the same id, unique by (kind, id, start count), so
//     each dead start is handed over once. A job whose worker was killed runs again after
//     about 1.5 × StaleAfter (+ RetryDelay and a poll): this is the detection time;
//   - the backstop, River's job rescuer (run by the elected leader every 30 s, River's
//     fixed interval), which moves a job running longer than both its timeout and
//     RescueStuckJobsAfter back to the queue (a job without a timeout is never rescued).
//     Both are StaleAfter here, and the handler ignores River's timeout (its context does
//     not end with it; JobStuckThreshold is set far out so River does not log slow jobs as
//     stuck): River's timing is only a suspicion, the handler of a rescued job re-runs it
//     only once the heartbeat is stale, else asks to be run again later while the live
//     worker finishes the job.
//
// Cancellation: Cancel uses River's JobCancel, which drops a waiting job and signals the
// process running a running one, whose handler context then ends with
// jobqueue.ErrCancelled. River delivers that signal through the job's context, which past
// the job's River timeout (StaleAfter) has already ended without effect; the services
// therefore also mark the record and their heartbeat picks the mark up within a heartbeat
// interval (at most jobqueue.MaxHeartbeatInterval, 5 s).
package riverqueue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"

	"github.com/switchyard-ai/switchyard/jobqueue"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/pgstore"
)

// Defaults of Options.
const (
	// DefaultStaleAfter is how long a running job's heartbeat may stay unchanged before
	// its worker counts as dead.
	DefaultStaleAfter = 2 * time.Minute
	// DefaultRetryDelay is the delay before a job whose run ended in an error (its worker
	// stopped or died) runs again.
	DefaultRetryDelay = time.Second
	// riverMaxAttempts is River's own attempt cap. The services count attempts in their
	// records (their MaxAttempts), so River's cap only has to be out of their way.
	riverMaxAttempts = 1000
	// maintenanceQueue is the River queue a process without workers listens on; no job is
	// put in it.
	maintenanceQueue = "switchyard_maintenance"
	// jobKind is the River kind of every Switchyard job.
	jobKind = "switchyard_job"
	// migrationLock is the advisory lock key held while River's migrations run ("SWRQ").
	migrationLock = 0x53575251
)

// Options configure Open. The zero value is ready to use.
type Options struct {
	// Schema is the PostgreSQL schema of River's tables (created when missing); "" uses
	// the connection's search_path. Use the schema of the store (pgstore.Options.Schema).
	Schema string
	// StaleAfter is how long a running job's heartbeat may stay silent before its worker
	// counts as dead; a dead worker's job runs again about 1.5 × StaleAfter after the
	// worker's last heartbeat (see the package comment). 0 means DefaultStaleAfter. Tests
	// use a second or two.
	StaleAfter time.Duration
	// RetryDelay is the delay before a job whose run ended in an error runs again; 0 means
	// DefaultRetryDelay.
	RetryDelay time.Duration
	// PollInterval is how often workers look for jobs besides being notified of new
	// ones; 0 keeps River's default (1 s); values below 100 ms (River's fetch cooldown)
	// mean 100 ms.
	PollInterval time.Duration
	// Logger receives River's warnings and errors (default slog.Default()); River's info
	// and debug lines (client started, periodic job counts, retries) are dropped.
	Logger *slog.Logger
}

// Queue is the River jobqueue.Queue. Create it with Open (it can enqueue and cancel from
// then on), Register the services' kinds (their Start does), then Start it to work jobs;
// Stop it before closing the pool.
type Queue struct {
	pool *pgxpool.Pool
	opts Options

	// inserter inserts and cancels jobs; it never works any (created by Open, so the
	// services can enqueue before Start).
	inserter *river.Client[pgx.Tx]

	mu      sync.Mutex
	kinds   map[string]jobqueue.Kind
	worker  *river.Client[pgx.Tx] // works jobs; set by Start
	started bool                  // Start was called
	// stopSweep ends the dead-worker sweep Start runs; sweepDone is closed when it has.
	stopSweep func()
	sweepDone chan struct{}
}

var _ jobqueue.Queue = (*Queue)(nil)

// Open migrates River's schema on pool and returns a queue to Register kinds on.
func Open(ctx context.Context, pool *pgxpool.Pool, opts Options) (*Queue, error) {
	if pool == nil {
		return nil, errors.New("riverqueue: nil pool")
	}
	if opts.StaleAfter <= 0 {
		opts.StaleAfter = DefaultStaleAfter
	}
	if opts.RetryDelay <= 0 {
		opts.RetryDelay = DefaultRetryDelay
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	opts.Logger = slog.New(warnHandler{opts.Logger.Handler()})
	if opts.PollInterval > 0 {
		opts.PollInterval = max(opts.PollInterval, river.FetchCooldownDefault)
	}
	if err := migrate(ctx, pool, opts); err != nil {
		return nil, err
	}
	q := &Queue{pool: pool, opts: opts, kinds: map[string]jobqueue.Kind{}}
	inserter, err := river.NewClient(riverpgxv5.New(pool), q.config(nil))
	if err != nil {
		return nil, fmt.Errorf("riverqueue: client: %w", err)
	}
	q.inserter = inserter
	return q, nil
}

// config is the River configuration of this queue's clients, working queues (none for the
// inserter).
func (q *Queue) config(queues map[string]river.QueueConfig) *river.Config {
	workers := river.NewWorkers()
	river.AddWorker(workers, river.WorkFunc(q.work))
	cfg := &river.Config{
		Schema:      q.opts.Schema,
		Workers:     workers,
		MaxAttempts: riverMaxAttempts,
		// River rescues a running job only past its timeout: both are StaleAfter, and work
		// ignores the timeout (see the package comment).
		JobTimeout:           q.opts.StaleAfter,
		RescueStuckJobsAfter: q.opts.StaleAfter,
		JobStuckThreshold:    365 * 24 * time.Hour,
		RetryPolicy:          retryPolicy{q.opts.RetryDelay},
		FetchPollInterval:    q.opts.PollInterval,
		Logger:               q.opts.Logger,
	}
	if len(queues) > 0 {
		cfg.Queues = queues
	}
	return cfg
}

// migrate creates the schema and applies River's migrations, one process at a time.
func migrate(ctx context.Context, pool *pgxpool.Pool, opts Options) error {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("riverqueue: connect: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", int64(migrationLock)); err != nil {
		return fmt.Errorf("riverqueue: lock migrations: %w", err)
	}
	defer func() {
		_, _ = conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", int64(migrationLock))
	}()
	if opts.Schema != "" {
		if _, err := conn.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+pgx.Identifier{opts.Schema}.Sanitize()); err != nil {
			return fmt.Errorf("riverqueue: create schema %s: %w", opts.Schema, err)
		}
	}
	m, err := rivermigrate.New(riverpgxv5.New(pool), &rivermigrate.Config{Schema: opts.Schema, Logger: opts.Logger})
	if err != nil {
		return fmt.Errorf("riverqueue: migrator: %w", err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("riverqueue: migrate: %w", err)
	}
	return nil
}

// StaleAfter implements jobqueue.Queue.
func (q *Queue) StaleAfter() time.Duration { return q.opts.StaleAfter }

// Register implements jobqueue.Queue. It fails once the queue has started.
func (q *Queue) Register(kind string, k jobqueue.Kind) error {
	if kind == "" || k.Run == nil {
		return errors.New("riverqueue: Register needs a kind and a handler")
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.started {
		return fmt.Errorf("riverqueue: register %s: the queue has started", kind)
	}
	if _, dup := q.kinds[kind]; dup {
		return fmt.Errorf("riverqueue: kind %s registered twice", kind)
	}
	k.Workers = max(k.Workers, 0)
	q.kinds[kind] = k
	return nil
}

// warnHandler passes on the records of warning level and above.
type warnHandler struct{ slog.Handler }

// Enabled implements slog.Handler.
func (h warnHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn && h.Handler.Enabled(ctx, l)
}

// WithAttrs implements slog.Handler.
func (h warnHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return warnHandler{h.Handler.WithAttrs(as)}
}

// WithGroup implements slog.Handler.
func (h warnHandler) WithGroup(name string) slog.Handler {
	return warnHandler{h.Handler.WithGroup(name)}
}

// jobArgs are the River args of a Switchyard job.
type jobArgs struct {
	// JobKind is the service's kind ("train", "optimize"); ID its job id.
	JobKind string `json:"kind"`
	ID      string `json:"id"`
	// Starts is, for a job handed over from a dead worker, how many times it had been
	// started (0 for the first insert); inserts are unique by all three fields.
	Starts int `json:"starts,omitempty"`
}

// Kind implements river.JobArgs.
func (jobArgs) Kind() string { return jobKind }

// queueName is the River queue of a kind.
func queueName(kind string) string { return "switchyard_" + kind }

// retryPolicy retries a job after a fixed delay.
type retryPolicy struct{ delay time.Duration }

// NextRetry implements river.ClientRetryPolicy.
func (p retryPolicy) NextRetry(*rivertype.JobRow) time.Time { return time.Now().Add(p.delay) }

// Start starts working the registered kinds that have workers in this process (a process
// with none runs no job but still takes part in River's maintenance: leader election,
// stuck-job rescue, cleanup) and the sweep that hands dead workers' jobs over (see the
// package comment). When ctx ends (a shutdown's signal) the queue takes no more jobs, but
// the running ones go on — their services may let work in flight finish, as a batch's
// paid upstream calls — until Stop ends them. Call it after the services' Start (which
// Register their kinds).
func (q *Queue) Start(ctx context.Context) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.started {
		return errors.New("riverqueue: already started")
	}
	q.started = true
	queues := map[string]river.QueueConfig{}
	for kind, k := range q.kinds {
		if k.Workers > 0 {
			queues[queueName(kind)] = river.QueueConfig{MaxWorkers: k.Workers, FetchPollInterval: q.opts.PollInterval}
		}
	}
	if len(queues) == 0 {
		// No workers here, but the client still runs, on a queue no job is put in, so that
		// every process takes part in River's leader election: stuck-job rescue and
		// cleanup go on as long as any process of the deployment runs.
		queues[maintenanceQueue] = river.QueueConfig{MaxWorkers: 1}
	}
	client, err := river.NewClient(riverpgxv5.New(q.pool), q.config(queues))
	if err != nil {
		return fmt.Errorf("riverqueue: client: %w", err)
	}
	// Not ctx: River cancels every running job's context when its Start context ends,
	// which would cut a batch's lines in flight at the signal, before the services' Close
	// has let them finish.
	if err := client.Start(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("riverqueue: start: %w", err)
	}
	q.worker = client
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() {
		cancel()
		// A soft stop: no more fetching; it returns once the running jobs have (Stop).
		go func() { _ = client.Stop(context.WithoutCancel(ctx)) }() // Queue.Stop waits on Stopped
	})
	q.stopSweep, q.sweepDone = func() { stop(); cancel() }, make(chan struct{})
	go q.sweep(sctx, q.sweepDone)
	return nil
}

// sweep hands the running jobs whose worker is dead (their kind's Dead says so) to another
// worker, every StaleAfter/2 until ctx ends.
func (q *Queue) sweep(ctx context.Context, done chan struct{}) {
	defer close(done)
	t := time.NewTicker(max(q.opts.StaleAfter/2, 100*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := q.sweepOnce(ctx); err != nil && ctx.Err() == nil {
			q.opts.Logger.Warn("riverqueue: looking for jobs of dead workers", "err", err)
		}
	}
}

// sweepOnce hands over the jobs of dead workers among those River has running.
func (q *Queue) sweepOnce(ctx context.Context) error {
	res, err := q.inserter.JobList(ctx, river.NewJobListParams().Kinds(jobKind).
		States(rivertype.JobStateRunning).First(10000))
	if err != nil {
		return fmt.Errorf("list running jobs: %w", err)
	}
	seen := map[jobArgs]bool{}
	for _, row := range res.Jobs {
		var a jobArgs
		if err := json.Unmarshal(row.EncodedArgs, &a); err != nil {
			continue
		}
		a.Starts = 0
		q.mu.Lock()
		dead := q.kinds[a.JobKind].Dead
		q.mu.Unlock()
		if seen[a] || dead == nil {
			continue
		}
		seen[a] = true
		isDead, starts, err := dead(ctx, a.ID)
		if err != nil {
			return fmt.Errorf("%s %s: %w", a.JobKind, a.ID, err)
		}
		if !isDead {
			continue
		}
		a.Starts = starts
		r, err := q.inserter.Insert(ctx, a, &river.InsertOpts{Queue: queueName(a.JobKind), UniqueOpts: river.UniqueOpts{ByArgs: true}})
		if err != nil {
			return fmt.Errorf("hand over %s %s: %w", a.JobKind, a.ID, err)
		}
		if !r.UniqueSkippedAsDuplicate {
			q.opts.Logger.Warn("riverqueue: a job's worker is dead; handing the job to another worker", "kind", a.JobKind, "job", a.ID, "starts", starts)
		}
	}
	return nil
}

// Stop stops the sweep and working jobs: running handlers' contexts end with
// jobqueue.ErrShutdown at once (the services put or leave such jobs for the next worker),
// and Stop waits for them to return until ctx ends.
func (q *Queue) Stop(ctx context.Context) error {
	q.mu.Lock()
	client, stopSweep, sweepDone := q.worker, q.stopSweep, q.sweepDone
	q.worker, q.stopSweep = nil, nil
	q.mu.Unlock()
	if client == nil {
		return nil
	}
	stopSweep()
	<-sweepDone
	// When Start's ctx has ended a soft stop is under way: StopAndCancel then only cancels
	// the running jobs and returns, so wait for the client itself.
	if err := client.StopAndCancel(ctx); err != nil {
		return fmt.Errorf("riverqueue: stop: %w", err)
	}
	select {
	case <-client.Stopped():
		return nil
	case <-ctx.Done():
		return fmt.Errorf("riverqueue: stop: %w", ctx.Err())
	}
}

// work runs one River job through its kind's handler.
func (q *Queue) work(ctx context.Context, job *river.Job[jobArgs]) error {
	q.mu.Lock()
	h := q.kinds[job.Args.JobKind].Run
	q.mu.Unlock()
	if h == nil {
		return river.JobCancel(fmt.Errorf("riverqueue: no handler for kind %q", job.Args.JobKind))
	}
	// Translate River's cancellation causes into jobqueue's; River's timeout only makes
	// the job eligible for rescue (the heartbeat decides), so it does not end the job.
	jctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cancel(nil)
	stop := context.AfterFunc(ctx, func() {
		switch cause := context.Cause(ctx); {
		case errors.Is(cause, river.ErrJobCancelledRemotely):
			cancel(jobqueue.ErrCancelled)
		case errors.Is(cause, context.DeadlineExceeded):
		default:
			cancel(fmt.Errorf("%w: %w", jobqueue.ErrShutdown, cause))
		}
	})
	defer stop()
	err := h(jctx, job.Args.ID)
	var later *jobqueue.RetryLaterError
	if errors.As(err, &later) {
		return river.JobSnooze(later.After)
	}
	return err
}

// Enqueue implements jobqueue.Queue: a River insert unique by args (kind and id).
func (q *Queue) Enqueue(ctx context.Context, kind, id string) error {
	_, err := q.inserter.Insert(ctx, jobArgs{JobKind: kind, ID: id}, &river.InsertOpts{
		Queue:      queueName(kind),
		UniqueOpts: river.UniqueOpts{ByArgs: true},
	})
	if err != nil {
		return fmt.Errorf("riverqueue: enqueue %s %s: %w", kind, id, err)
	}
	return nil
}

// EnqueueTx implements jobqueue.TxEnqueuer: the same insert as Enqueue, in the store's
// PostgreSQL transaction tx (pgstore.PgxTx), so it commits or rolls back with the job's
// record. It reports false for a transaction of another store.
func (q *Queue) EnqueueTx(ctx context.Context, tx store.Tx, kind, id string) (bool, error) {
	ptx, ok := pgstore.PgxTx(tx)
	if !ok {
		return false, nil
	}
	_, err := q.inserter.InsertTx(ctx, ptx, jobArgs{JobKind: kind, ID: id}, &river.InsertOpts{
		Queue:      queueName(kind),
		UniqueOpts: river.UniqueOpts{ByArgs: true},
	})
	if err != nil {
		return false, fmt.Errorf("riverqueue: enqueue %s %s: %w", kind, id, err)
	}
	return true, nil
}

var _ jobqueue.TxEnqueuer = (*Queue)(nil)

// Cancel implements jobqueue.Queue with River's JobCancel, which cancels a waiting job at
// once and signals the process running a running one.
func (q *Queue) Cancel(ctx context.Context, kind, id string) error {
	client := q.inserter
	res, err := client.JobList(ctx, river.NewJobListParams().
		Kinds(jobKind).
		States(rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRetryable,
			rivertype.JobStateRunning, rivertype.JobStateScheduled).
		Where("args->>'kind' = @switchyard_kind AND args->>'id' = @switchyard_id", river.NamedArgs{"switchyard_kind": kind, "switchyard_id": id}).
		First(10))
	if err != nil {
		return fmt.Errorf("riverqueue: find %s %s: %w", kind, id, err)
	}
	for _, j := range res.Jobs {
		if _, err := client.JobCancel(ctx, j.ID); err != nil && !errors.Is(err, river.ErrNotFound) {
			return fmt.Errorf("riverqueue: cancel %s %s: %w", kind, id, err)
		}
	}
	return nil
}
