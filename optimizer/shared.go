package optimizer

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/switchyard-ai/switchyard/jobqueue"
	"github.com/switchyard-ai/switchyard/store"
)

// QueueKind is the kind of optimization jobs in a shared jobqueue.Queue.
const QueueKind = "optimize"

// errLostJob is the cause a running job's context ends with when its record shows that
// another worker took the job over (this worker was presumed dead).
var errLostJob = errors.New("job taken over by another worker")

// WithQueue makes the service share its jobs with every process on q (the PostgreSQL
// deployment): Submit stores the job and enqueues it on q; Start registers WithWorkers
// workers (0: this process runs none) with q instead of an in-process pool, and q's
// workers, in whichever process, run each job once. Cancel and DeleteJob reach a job
// running in another process (through q, and through a mark in the job's record that the
// running worker's heartbeat reads); per-owner limits count the owner's unfinished jobs
// in the store. A job whose worker dies starts over on another worker once its heartbeat
// is older than q.StaleAfter(), or is failed after MaxAttempts starts, as restart
// recovery does (see package jobqueue). The queue bound (WithQueueSize) does not apply:
// the queue lives in the database. Start the queue after the service, stop it after
// Close. Without WithQueue the service runs its jobs in process, as before.
func WithQueue(q jobqueue.Queue) Option { return func(s *Service) { s.q = q } }

// stale reports whether running job j's worker counts as dead (jobqueue.IsStale).
func (s *Service) stale(j *job) bool { return jobqueue.IsStale(s.q, j) }

// The jobqueue.Record methods: what the shared-queue bookkeeping reads and writes.

// Unfinished reports whether the job is queued or running.
func (j *job) Unfinished() bool { return j.Status == StatusQueued || j.Status == StatusRunning }

// Running reports whether the job is running.
func (j *job) Running() bool { return j.Status == StatusRunning }

// Attempt is how many times the job was started.
func (j *job) Attempt() int { return j.Attempts }

// LastSeen is the heartbeat, else the start.
func (j *job) LastSeen() time.Time {
	if !j.HeartbeatAt.IsZero() || j.StartedAt == nil {
		return j.HeartbeatAt
	}
	return *j.StartedAt
}

// CancelAsked reports whether a cancel was asked for the running job.
func (j *job) CancelAsked() bool { return j.CancelRequested }

// SetHeartbeat records that the job's worker was alive at t.
func (j *job) SetHeartbeat(t time.Time) { j.HeartbeatAt = t }

// startShared registers the service's handler with the queue and enqueues the unfinished
// jobs in the store (a no-op for those the queue holds; it catches a job whose process
// stopped between storing and enqueueing it).
func (s *Service) startShared(ctx context.Context) error {
	if err := s.q.Register(QueueKind, jobqueue.Kind{Workers: s.workers, Run: s.handle, Dead: s.dead}); err != nil {
		return fmt.Errorf("optimizer: %w", err)
	}
	// One listing of the stored jobs serves the enqueueing and the reclaiming below.
	entries, err := s.store.List(ctx, store.OptimizationJobs, store.ListOptions{})
	if err != nil {
		return fmt.Errorf("optimizer: list jobs: %w", err)
	}
	if err := jobqueue.EnqueueListed[job](ctx, entries, s.q, QueueKind); err != nil {
		return fmt.Errorf("optimizer: %w", err)
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		unfinished := s.reclaimEndedJobs(context.WithoutCancel(ctx), entries)
		s.sweepBundles(ctx, unfinished)
	}()
	return nil
}

// reclaimEndedJobs reclaims the keys a crash left open on ended jobs (failDead ends a dead
// worker's job before it reclaims the run's keys): their spend goes into the jobs' results
// as failDead's would have. It returns the ids of the jobs that were queued or running
// (for sweepBundles). entries is startShared's listing of the stored jobs, read once: only
// a job it shows ended with keys open is read again (in the transaction that records them).
func (s *Service) reclaimEndedJobs(ctx context.Context, entries []store.Entry) map[string]bool {
	unfinished := map[string]bool{}
	for _, e := range entries {
		j, err := decodeJob(e)
		if err == nil && j.Unfinished() {
			unfinished[j.ID] = true
		}
		if err != nil || j.Unfinished() || len(j.OpenKeys) == 0 {
			continue
		}
		apply := s.reclaimForEnd(ctx, &j)
		err = s.store.Update(ctx, func(tx store.Tx) error {
			cur, err := store.GetJSON[job](ctx, tx, store.OptimizationJobs, j.ID)
			if err != nil {
				return err
			}
			if cur.Unfinished() || len(cur.OpenKeys) == 0 {
				return nil
			}
			apply(&cur)
			return store.PutJSON(ctx, tx, store.OptimizationJobs, cur.ID, cur)
		})
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			s.log.Warn("optimizer: record an ended job's reclaimed keys", "job", j.ID, "err", err)
		}
	}
	return unfinished
}

// dead reports whether job id is running on a dead worker (its heartbeat is stale and no
// worker of this process runs it), and how many times it was started.
func (s *Service) dead(ctx context.Context, id string) (bool, int, error) {
	j, err := store.GetJSON[job](ctx, s.store, store.OptimizationJobs, id)
	if errors.Is(err, store.ErrNotFound) {
		return false, 0, nil
	}
	if err != nil {
		return false, 0, fmt.Errorf("optimizer: read job %s: %w", id, err)
	}
	s.mu.Lock()
	local := s.running[id] != nil
	s.mu.Unlock()
	return j.Status == StatusRunning && !local && s.stale(&j), j.Attempts, nil
}

// handle is the queue's handler of an optimization job.
func (s *Service) handle(ctx context.Context, id string) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return errors.New("optimizer: service closed")
	}
	s.wg.Add(1)
	s.mu.Unlock()
	defer s.wg.Done()
	j, err := store.GetJSON[job](ctx, s.store, store.OptimizationJobs, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil // deleted
	}
	if err != nil {
		return fmt.Errorf("optimizer: read job %s: %w", id, err)
	}
	switch j.Status {
	case StatusQueued:
	case StatusRunning:
		s.mu.Lock()
		local := s.running[id] != nil
		s.mu.Unlock()
		if dead, wait := jobqueue.Stale(j.LastSeen(), time.Now(), s.q.StaleAfter()); local || !dead {
			// Its worker is alive (the queue only suspected it): look again later.
			return jobqueue.RetryLater(max(wait, s.q.StaleAfter()/4) + 100*time.Millisecond)
		}
		end := func(status Status, msg string) error {
			ended, err := s.failDead(ctx, &j, status, msg)
			if err == nil && !ended { // its worker beat again: look again later
				return jobqueue.RetryLater(s.q.StaleAfter()/4 + 100*time.Millisecond)
			}
			return err
		}
		switch {
		case j.CancelRequested:
			return end(StatusInterrupted, fmt.Sprintf("cancelled by the caller (%s); the best result so far is kept", s.progressText(&j)))
		case j.Attempts >= MaxAttempts:
			s.log.Warn("optimizer: failed job interrupted too often", "job", j.ID, "attempts", j.Attempts)
			return end(StatusFailed, fmt.Sprintf("the job's worker stopped %d times while this job was running; giving up", j.Attempts))
		}
		s.log.Info("optimizer: starting over a job whose worker died", "job", j.ID, "attempts", j.Attempts)
	default:
		return nil
	}
	if s.runJob(ctx, id, true) {
		return errors.New("optimizer: job cut by shutdown; it starts over on the next worker")
	}
	return nil
}

// claim marks job id running for this worker, if it is queued (or, with resume, running
// with a stale heartbeat: it starts over, as restart recovery does); recMu is held.
func (s *Service) claim(ctx context.Context, id string, resume bool) (job, bool, error) {
	var j job
	claimed := false
	err := s.store.Update(ctx, func(tx store.Tx) error {
		claimed = false
		cur, err := store.GetJSON[job](ctx, tx, store.OptimizationJobs, id)
		if err != nil {
			return err
		}
		j = cur
		if j.Status != StatusQueued && !(resume && j.Status == StatusRunning && s.stale(&j)) {
			return nil
		}
		if j.Status == StatusRunning { // start over: partial results of the cut run are dropped
			if err := deleteArtifacts(ctx, tx, j.dropCutRun()); err != nil {
				return err
			}
		}
		now := s.now().UTC()
		j.Status, j.StartedAt, j.ErrorMessage = StatusRunning, &now, ""
		j.Attempts++
		j.CancelRequested = false
		if s.q != nil {
			j.HeartbeatAt = time.Now()
		}
		claimed = true
		return store.PutJSON(ctx, tx, store.OptimizationJobs, j.ID, j)
	})
	if err != nil {
		return job{}, false, fmt.Errorf("optimizer: start job %s: %w", id, err)
	}
	return j, claimed, nil
}

// releasedAt is the heartbeat of a job whose worker stopped on purpose (shutdown): long
// stale, so the next worker takes the job over at once instead of after StaleAfter.
var releasedAt = time.Unix(1, 0).UTC()

// releaseCut marks running job j, cut by a shutdown, as released by its worker: with a
// shared queue the next worker takes it over at once; in every case the cut run does not
// count against MaxAttempts (a deploy is not the job's doing; the limit is for jobs whose
// worker keeps dying). The next Start or worker starts it over.
func (s *Service) releaseCut(j *job) {
	ctx := context.Background()
	s.recMu.Lock()
	defer s.recMu.Unlock()
	err := s.store.Update(ctx, func(tx store.Tx) error {
		cur, err := store.GetJSON[job](ctx, tx, store.OptimizationJobs, j.ID)
		if err != nil {
			return err
		}
		if cur.Status != StatusRunning || cur.Attempts != j.Attempts {
			return nil
		}
		cur.HeartbeatAt = releasedAt
		cur.Attempts = max(cur.Attempts-1, 0)
		return store.PutJSON(ctx, tx, store.OptimizationJobs, cur.ID, cur)
	})
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		s.log.Warn("optimizer: release job cut by shutdown", "job", j.ID, "err", err)
	}
}

// failDead ends running job j, whose worker is dead, with status and msg, unless its
// record moved on or shows the worker alive after all (its heartbeat, re-read in the
// transaction, is fresh again: the worker was slow, not dead); ended says it ended the job
// (j then holds the record as ended). Its run's open keys are reclaimed only once the job
// has ended, so a live worker never loses its keys; keys a crash leaves open on an ended
// job are reclaimed when a process starts (reclaimEndedJobs).
func (s *Service) failDead(ctx context.Context, j *job, status Status, msg string) (ended bool, err error) {
	var final job
	err = s.store.Update(ctx, func(tx store.Tx) error {
		ended = false
		cur, err := store.GetJSON[job](ctx, tx, store.OptimizationJobs, j.ID)
		if err != nil {
			return err
		}
		if cur.Status != StatusRunning || cur.Attempts != j.Attempts || !s.stale(&cur) {
			return nil
		}
		t := s.now().UTC()
		cur.Status, cur.ErrorMessage, cur.FinishedAt = status, msg, &t
		if err := s.keepBestAgents(ctx, tx, &cur); err != nil {
			return err
		}
		if err := dropBundleTx(ctx, tx, &cur); err != nil {
			return err
		}
		if err := store.PutJSON(ctx, tx, store.OptimizationJobs, cur.ID, cur); err != nil {
			return err
		}
		final, ended = cur, true
		return nil
	})
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return false, fmt.Errorf("optimizer: end job %s: %w", j.ID, err)
	}
	if !ended {
		return false, nil
	}
	*j = final
	if len(j.OpenKeys) == 0 {
		return true, nil
	}
	apply := s.reclaimForEnd(ctx, j)
	err = s.store.Update(ctx, func(tx store.Tx) error {
		cur, err := store.GetJSON[job](ctx, tx, store.OptimizationJobs, j.ID)
		if err != nil {
			return err
		}
		if cur.Status != status || cur.Attempts != j.Attempts || len(cur.OpenKeys) == 0 {
			return nil
		}
		apply(&cur)
		return store.PutJSON(ctx, tx, store.OptimizationJobs, cur.ID, cur)
	})
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return true, fmt.Errorf("optimizer: record job %s's reclaimed keys: %w", j.ID, err)
	}
	return true, nil
}

// thisRun reads j's record in tx and reports whether it is still the run j is: not
// deleted, ended by another process or taken over by another attempt meanwhile.
func thisRun(ctx context.Context, tx store.Reader, j *job) (cur job, ours bool, err error) {
	cur, err = store.GetJSON[job](ctx, tx, store.OptimizationJobs, j.ID)
	if errors.Is(err, store.ErrNotFound) {
		return cur, false, nil
	}
	if err != nil {
		return cur, false, err
	}
	return cur, cur.Status == StatusRunning && cur.Attempts == j.Attempts, nil
}

// saveShared persists a running job's progress with a queue: only while the record is
// still this run's (a worker that took the job over owns it then), keeping a cancel mark
// another process set, and refreshing the heartbeat; recMu is held.
func (s *Service) saveShared(j *job) {
	ctx := context.Background()
	err := s.store.Update(ctx, func(tx store.Tx) error {
		cur, ours, err := thisRun(ctx, tx, j)
		if err != nil || !ours {
			return err
		}
		j.CancelRequested = j.CancelRequested || cur.CancelRequested
		if j.Status == StatusRunning {
			j.HeartbeatAt = time.Now()
		}
		return putSaved(ctx, tx, j)
	})
	if err != nil {
		s.log.Log(ctx, jobqueue.FailureLevel(err), "optimizer: saving progress", "job", j.ID, "err", err)
	}
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
	refresh := jobqueue.Heartbeat[job](s.store, store.OptimizationJobs, id, attempt)
	beat := func(ctx context.Context) (lost, cancelled bool, err error) {
		s.recMu.Lock() // the run's own saves go through recMu too
		defer s.recMu.Unlock()
		return refresh(ctx)
	}
	return jobqueue.KeepAlive(ctx, s.q.StaleAfter(), beat, cancel, errLostJob, errCancelled,
		func(err error) { s.log.Warn("optimizer: heartbeat", "job", id, "err", err) })
}

// openShared reports whether the service takes jobs on its shared queue: ErrClosed once
// it is closed, else the failure of indexing the stored jobs (ensureIndexed) when it has
// not been done.
func (s *Service) openShared(ctx context.Context) error {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return ErrClosed
	}
	return s.ensureIndexed(ctx)
}

// submitShared stores job j and enqueues it, counting the owner's unfinished jobs in the
// store in the same transaction (SERIALIZABLE on PostgreSQL), so concurrent submits in
// different processes cannot pass the per-owner limit together.
func (s *Service) submitShared(ctx context.Context, j *job, bundle []byte) (*Submitted, error) {
	if err := s.openShared(ctx); err != nil {
		return nil, err
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
		if err := store.PutJSON(ctx, tx, store.OptimizationJobs, j.ID, j); err != nil {
			return err
		}
		if err := putBundleTx(ctx, tx, j.ID, bundle); err != nil {
			return err
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
		return nil, limit
	}
	if err != nil {
		return nil, fmt.Errorf("optimizer: save job %s: %w", j.ID, err)
	}
	if enqueued {
		err = nil
	} else {
		err = s.q.Enqueue(ctx, QueueKind, j.ID)
	}
	if err != nil {
		dctx := context.WithoutCancel(ctx)
		_ = s.store.Update(dctx, func(tx store.Tx) error {
			if err := tx.Delete(dctx, store.OptimizationJobs, j.ID); err != nil {
				return err
			}
			if err := dropBundleTx(dctx, tx, j); err != nil {
				return err
			}
			return store.DeleteOwned(dctx, tx, j.ref())
		})
		return nil, fmt.Errorf("optimizer: queue job %s: %w", j.ID, err)
	}
	s.log.Info("optimizer: job queued", "job", j.ID, "models", len(j.TargetModels), "n_iterations", j.NIterations)
	return &Submitted{JobID: j.ID, Status: StatusQueued, Version: s.version}, nil
}

// activeStored counts owner's queued and running jobs in the store, up to the per-owner
// limit.
func (s *Service) activeStored(ctx context.Context, r store.Reader, owner string) (int, error) {
	return jobqueue.CountUnfinished[job](ctx, r, store.OptimizationJobs, jobKind, owner, s.perOwner)
}

// cancelQueued ends queued job j as interrupted, unless a worker claimed it meanwhile
// (claimed; j is then the current record); recMu is held.
func (s *Service) cancelQueued(ctx context.Context, j *job) (claimed bool, err error) {
	err = s.store.Update(ctx, func(tx store.Tx) error {
		cur, err := store.GetJSON[job](ctx, tx, store.OptimizationJobs, j.ID)
		if err != nil {
			return err
		}
		*j = cur
		if claimed = cur.Status != StatusQueued; claimed {
			return nil
		}
		t := s.now().UTC()
		j.Status, j.ErrorMessage, j.FinishedAt = StatusInterrupted, "cancelled by the caller before it started", &t
		if err := dropBundleTx(ctx, tx, j); err != nil {
			return err
		}
		return store.PutJSON(ctx, tx, store.OptimizationJobs, j.ID, j)
	})
	if errors.Is(err, store.ErrNotFound) { // deleted meanwhile
		return false, fmt.Errorf("%w: optimization job %q", ErrNotFound, j.ID)
	}
	if err != nil {
		return false, fmt.Errorf("optimizer: cancel job %s: %w", j.ID, err)
	}
	if !claimed && s.q != nil {
		if err := s.q.Cancel(ctx, QueueKind, j.ID); err != nil { // drop it from the queue
			s.log.Warn("optimizer: drop cancelled job from the queue", "job", j.ID, "err", err)
		}
	}
	if !claimed && len(j.OpenKeys) > 0 {
		s.reclaimEnded(ctx, j) // a run cut short before the job was re-queued left its keys
	}
	return claimed, nil
}

// cancelElsewhere cancels running job j that no worker of this process runs: a dead
// worker's job ends at once; otherwise the record is marked (the running worker's
// heartbeat reads it) and the queue signals the process that runs it.
func (s *Service) cancelElsewhere(ctx context.Context, j *job) error {
	if s.q == nil {
		return nil
	}
	if s.stale(j) {
		ended, err := s.failDead(ctx, j, StatusInterrupted,
			fmt.Sprintf("cancelled by the caller (%s); the best result so far is kept", s.progressText(j)))
		if err != nil || ended {
			return err
		}
		// Its worker beat again: marked and signalled as a live worker's job is.
	}
	if err := s.markCancelRequested(ctx, j.ID); err != nil {
		return err
	}
	if err := s.q.Cancel(ctx, QueueKind, j.ID); err != nil {
		return fmt.Errorf("optimizer: cancel job %s: %w", j.ID, err)
	}
	return nil
}

// markCancelRequested records in running job id's record that it was cancelled: the
// worker running it elsewhere reads the mark (heartbeat), and a run cut short before it
// stopped is ended interrupted rather than started over (recover, handle).
func (s *Service) markCancelRequested(ctx context.Context, id string) error {
	err := s.store.Update(ctx, func(tx store.Tx) error {
		cur, err := store.GetJSON[job](ctx, tx, store.OptimizationJobs, id)
		if err != nil {
			return err
		}
		if cur.Status != StatusRunning {
			return nil
		}
		cur.CancelRequested = true
		return store.PutJSON(ctx, tx, store.OptimizationJobs, cur.ID, cur)
	})
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("optimizer: cancel job %s: %w", id, err)
	}
	return nil
}
