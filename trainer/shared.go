package trainer

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/switchyard-ai/switchyard/jobqueue"
	"github.com/switchyard-ai/switchyard/store"
)

// QueueKind is the kind of training jobs in a shared jobqueue.Queue.
const QueueKind = "train"

// errLostJob is the cause a running job's context ends with when its record shows that
// another worker took the job over (this worker was presumed dead).
var errLostJob = errors.New("job taken over by another worker")

// WithQueue makes the service share its jobs with every process on q (the PostgreSQL
// deployment): Submit stores the job and enqueues it on q; Start registers WithWorkers
// workers (0: this process runs none) with q instead of an in-process pool, and q's
// workers, in whichever process, run each job once. Cancel and DeleteJob reach a job
// running in another process through q; per-owner limits count the owner's unfinished
// jobs in the store. A job whose worker dies is run again by another worker once its
// heartbeat is older than q.StaleAfter(), or failed after MaxAttempts starts, as restart
// recovery does (see package jobqueue). The queue bound (WithQueueSize) does not apply:
// the queue lives in the database. Start the queue after the service, stop it before
// Close. Without WithQueue the service runs its jobs in process, as before.
func WithQueue(q jobqueue.Queue) Option { return func(s *Service) { s.q = q } }

// stale reports whether running job j's worker counts as dead (jobqueue.IsStale).
func (s *Service) stale(j *jobRecord) bool { return jobqueue.IsStale(s.q, j) }

// The jobqueue.Record methods: what the shared-queue bookkeeping reads and writes.

// Unfinished reports whether the job is queued or running.
func (j *jobRecord) Unfinished() bool { return j.State == StateQueued || j.State == StateRunning }

// Running reports whether the job is running.
func (j *jobRecord) Running() bool { return j.State == StateRunning }

// Attempt is how many times the job was started.
func (j *jobRecord) Attempt() int { return j.Attempts }

// LastSeen is the heartbeat, else the start.
func (j *jobRecord) LastSeen() time.Time {
	if j.HeartbeatAt.IsZero() {
		return j.StartedAt
	}
	return j.HeartbeatAt
}

// CancelAsked reports whether a cancel was asked for the running job.
func (j *jobRecord) CancelAsked() bool { return j.CancelRequested }

// SetHeartbeat records that the job's worker was alive at t.
func (j *jobRecord) SetHeartbeat(t time.Time) { j.HeartbeatAt = t }

// startShared registers the service's handler with the queue and enqueues the unfinished
// jobs in the store (a no-op for those the queue holds; it catches a job whose process
// stopped between storing and enqueueing it).
func (s *Service) startShared(ctx context.Context) error {
	if err := s.q.Register(QueueKind, jobqueue.Kind{Workers: s.workers, Run: s.handle, Dead: s.dead}); err != nil {
		return fmt.Errorf("trainer: %w", err)
	}
	if err := jobqueue.EnqueueUnfinished[jobRecord](ctx, s.store, store.TrainingJobs, s.q, QueueKind); err != nil {
		return fmt.Errorf("trainer: %w", err)
	}
	return nil
}

// dead reports whether job id is running on a dead worker (its heartbeat is stale and no
// worker of this process runs it), and how many times it was started.
func (s *Service) dead(ctx context.Context, id string) (bool, int, error) {
	j, err := s.getJob(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return false, 0, nil
	}
	if err != nil {
		return false, 0, err
	}
	s.jobMu.Lock()
	local := s.running[id] != nil
	s.jobMu.Unlock()
	return j.State == StateRunning && !local && s.stale(&j), j.Attempts, nil
}

// handle is the queue's handler of a training job.
func (s *Service) handle(ctx context.Context, id string) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return errors.New("trainer: service closed")
	}
	s.wg.Add(1)
	s.mu.Unlock()
	defer s.wg.Done()
	j, err := s.getJob(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return nil // deleted
	}
	if err != nil {
		return err
	}
	switch j.State {
	case StateQueued:
	case StateRunning:
		s.jobMu.Lock()
		local := s.running[id] != nil
		s.jobMu.Unlock()
		if dead, wait := jobqueue.Stale(j.LastSeen(), time.Now(), s.q.StaleAfter()); local || !dead {
			// Its worker is alive (the queue only suspected it): look again later.
			return jobqueue.RetryLater(max(wait, s.q.StaleAfter()/4) + 100*time.Millisecond)
		}
		end := func(msg, kind string) error {
			ended, err := s.failDead(ctx, &j, msg, kind)
			if err == nil && !ended { // its worker beat again: look again later
				return jobqueue.RetryLater(s.q.StaleAfter()/4 + 100*time.Millisecond)
			}
			return err
		}
		switch {
		case j.CancelRequested:
			return end(cancelledWhileRunning, ErrorKindCancelled)
		case j.Attempts >= MaxAttempts:
			s.log.Warn("trainer: failed job interrupted too often", "job", j.ID, "attempts", j.Attempts)
			return end(fmt.Sprintf("job was interrupted %d times (its worker stopped or died); submit it again", j.Attempts), ErrorKindInterrupted)
		}
		s.log.Info("trainer: running again a job whose worker died", "job", j.ID, "attempts", j.Attempts)
	default:
		return nil
	}
	if s.run(ctx, id, true) {
		return errors.New("trainer: job interrupted by shutdown; queued again")
	}
	return nil
}

// failDead fails running job j, whose worker is dead, with msg of kind, unless its record
// moved on or shows the worker alive after all (its heartbeat, re-read in the transaction,
// is fresh again: the worker was slow, not dead); ended says it failed the job.
func (s *Service) failDead(ctx context.Context, j *jobRecord, msg, kind string) (ended bool, err error) {
	err = s.store.Update(ctx, func(tx store.Tx) error {
		ended = false
		cur, err := store.GetJSON[jobRecord](ctx, tx, store.TrainingJobs, j.ID)
		if err != nil {
			return err
		}
		if cur.State != StateRunning || cur.Attempts != j.Attempts || !s.stale(&cur) {
			return nil
		}
		cur.State = StateFailed
		cur.CompletedAt = s.now()
		cur.ErrorMessage, cur.ErrorKind = msg, kind
		ended = true
		if err := dropUploadTx(ctx, tx, &cur); err != nil {
			return err
		}
		return store.PutJSON(ctx, tx, store.TrainingJobs, cur.ID, cur)
	})
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return false, fmt.Errorf("trainer: fail job %s: %w", j.ID, err)
	}
	return ended, nil
}

// heartbeat refreshes running job id's heartbeat until the returned stop is called, when
// the queue is shared. If the record shows another attempt (a worker took the job over
// after presuming this one dead) or is gone, it ends the job with errLostJob; if it shows
// a cancel request, it cancels the job (the queue's own signal may not arrive, see
// package riverqueue).
func (s *Service) heartbeat(ctx context.Context, cancel context.CancelCauseFunc, id string, attempt int) (stop func()) {
	if s.q == nil {
		return func() {}
	}
	beat := jobqueue.Heartbeat[jobRecord](s.store, store.TrainingJobs, id, attempt)
	return jobqueue.KeepAlive(ctx, s.q.StaleAfter(), beat, cancel, errLostJob, errCancelled,
		func(err error) { s.log.Warn("trainer: heartbeat", "job", id, "err", err) })
}

// submitShared stores job j and enqueues it, counting owner's unfinished jobs in the
// store in the same transaction (SERIALIZABLE on PostgreSQL), so concurrent submits in
// different processes cannot pass the per-owner limit together.
func (s *Service) submitShared(ctx context.Context, j jobRecord, extra func(tx store.Tx) error) (Job, error) {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return Job{}, ErrClosed
	}
	if err := s.ensureJobsIndexed(ctx); err != nil {
		return Job{}, err
	}
	enqueued := false
	err := s.store.Update(ctx, func(tx store.Tx) error {
		n, err := s.activeStored(ctx, tx, j.Owner)
		if err != nil {
			return err
		}
		if n >= s.perOwner {
			return jobLimit(s.perOwner, n)
		}
		if err := store.PutJSON(ctx, tx, store.TrainingJobs, j.ID, j); err != nil {
			return err
		}
		if extra != nil {
			if err := extra(tx); err != nil {
				return err
			}
		}
		if err := store.PutOwned(ctx, tx, j.ref()); err != nil {
			return err
		}
		// On PostgreSQL the queue entry commits with the record: no crash in between can
		// leave a stored job that no worker will ever take.
		enqueued = false
		if te, ok := s.q.(jobqueue.TxEnqueuer); ok {
			enqueued, err = te.EnqueueTx(ctx, tx, QueueKind, j.ID)
			return err
		}
		return nil
	})
	var limit *JobLimitError
	if errors.As(err, &limit) {
		return Job{}, limit
	}
	if err != nil {
		return Job{}, fmt.Errorf("trainer: save job: %w", err)
	}
	if enqueued {
		err = nil
	} else {
		err = s.q.Enqueue(ctx, QueueKind, j.ID)
	}
	if err != nil {
		dctx := context.WithoutCancel(ctx)
		_ = s.store.Update(dctx, func(tx store.Tx) error { return deleteJobTx(dctx, tx, &j) })
		return Job{}, fmt.Errorf("trainer: queue job: %w", err)
	}
	s.log.Info("trainer: job queued", "job", j.ID, "files", len(j.DataURLs), "uploaded", j.Upload != nil)
	return Job{TrainingJobID: j.ID, Status: j.State, Version: s.version}, nil
}

// activeStored counts owner's queued and running jobs in the store, up to the per-owner
// limit.
func (s *Service) activeStored(ctx context.Context, r store.Reader, owner string) (int, error) {
	return jobqueue.CountUnfinished[jobRecord](ctx, r, store.TrainingJobs, jobKind, owner, s.perOwner)
}

// cancelElsewhere cancels running job j that no worker of this process runs: a dead
// worker's job is failed at once; otherwise the record is marked and the queue signals
// the process that runs it.
func (s *Service) cancelElsewhere(ctx context.Context, j *jobRecord) error {
	if s.stale(j) {
		ended, err := s.failDead(ctx, j, cancelledWhileRunning, ErrorKindCancelled)
		if err != nil || ended {
			return err
		}
		// Its worker beat again: marked and signalled as a live worker's job is.
	}
	err := s.store.Update(ctx, func(tx store.Tx) error {
		cur, err := store.GetJSON[jobRecord](ctx, tx, store.TrainingJobs, j.ID)
		if err != nil {
			return err
		}
		if cur.State != StateRunning {
			return nil
		}
		cur.CancelRequested = true
		return store.PutJSON(ctx, tx, store.TrainingJobs, cur.ID, cur)
	})
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("trainer: cancel job %s: %w", j.ID, err)
	}
	if err := s.q.Cancel(ctx, QueueKind, j.ID); err != nil {
		return fmt.Errorf("trainer: cancel job %s: %w", j.ID, err)
	}
	return nil
}
