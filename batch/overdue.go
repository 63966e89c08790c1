package batch

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/switchyard-ai/switchyard/jobqueue"
	"github.com/switchyard-ai/switchyard/store"
)

// DefaultExpireInterval is how often, by default, a service ends the batches past their
// completion window that no run has ended (Options.ExpireInterval). Reads end such a
// batch at once; this bounds how long an unread one holds its input file.
const DefaultExpireInterval = 5 * time.Minute

// holder is a goroutine of this process that claims, runs or expires a batch.
type holder struct {
	expiry bool          // an expiry (a read or the periodic check), not a worker's run
	done   chan struct{} // closed when it lets the batch go
}

// release lets batch id go: h no longer holds it.
func (s *Service) release(id string, h *holder) {
	s.mu.Lock()
	if s.held[id] == h {
		delete(s.held, id)
	}
	s.mu.Unlock()
	close(h.done)
}

// overdue reports whether rec is past its completion window and has not ended.
func (s *Service) overdue(rec *record) bool {
	return !rec.Status.terminal() && !s.now().Before(rec.ExpiresAt)
}

// expireRead is rec, a batch read past its window that has not ended, after expiring it:
// the record read again, or rec as it was when the batch could not be ended here (a live
// run of another process has it and ends it within a heartbeat, or the store failed).
//
// The expiry runs on its own, not under ctx (a client that goes away does not leave the
// finalization half done); the read waits for it only while ctx lasts, and then answers
// rec as it was.
func (s *Service) expireRead(ctx context.Context, rec record) record {
	ended := make(chan error, 1)
	go func() {
		_, err := s.expireOverdue(context.WithoutCancel(ctx), rec.ID)
		ended <- err
	}()
	select {
	case err := <-ended:
		if err != nil {
			s.log.Warn("batch: end a batch past its completion window (it reads as it was)", "batch", rec.ID, "err", err)
			return rec
		}
	case <-ctx.Done():
		return rec
	}
	cur, err := store.GetJSON[record](ctx, s.st, store.Batches, rec.ID)
	if err != nil {
		return rec
	}
	return cur
}

// expireOverdue ends batch id if it is past its completion window and no live run has it:
// it claims the batch as a worker would (the claim and its heartbeat keep any other worker,
// here or in another process, off it) and finalizes it — expired, with the answered lines
// kept and the others as batch_expired; a cancel asked, or a batch whose runs died too
// often, ends as its run would have ended it. A batch that has ended is left as it is. It
// reports whether it ended the batch. A batch an expiry of this process is ending is
// waited for; one a run of this process has is told to stop (it expires at once).
func (s *Service) expireOverdue(ctx context.Context, id string) (bool, error) {
	s.mu.Lock()
	for {
		if s.closed {
			s.mu.Unlock()
			return false, nil
		}
		h := s.held[id]
		if h == nil {
			break
		}
		if !h.expiry {
			r := s.running[id]
			s.mu.Unlock()
			if r != nil {
				r.stop(endExpired) // its heartbeat would see the window's end within a second
			}
			return false, nil
		}
		// Another read or the periodic check ends it: the answer is what it ends with.
		s.mu.Unlock()
		select {
		case <-h.done:
		case <-ctx.Done():
			return false, fmt.Errorf("wait for the expiry of batch %s: %w", id, context.Cause(ctx))
		}
		s.mu.Lock()
	}
	h := &holder{expiry: true, done: make(chan struct{})}
	s.held[id] = h
	s.wg.Add(1)
	s.mu.Unlock()
	defer s.wg.Done()
	defer s.release(id, h)

	rec, err := s.claimOverdue(ctx, id)
	if err != nil || rec == nil {
		return false, err
	}
	r := &run{s: s, rec: *rec, stopped: make(chan struct{})}
	// Reads overlay a run's counts on the record: the expiry's are the record's (it sends
	// no line).
	r.completed, r.failed, r.usage, r.cost = rec.Completed, rec.Failed, rec.Usage, rec.CostUSD
	// Not the reader's context: a client that goes away does not leave the finalization
	// half done (Close still cuts it, and hands the batch back).
	r.lineCtx, r.cancelLines = context.WithCancelCause(context.WithoutCancel(ctx))
	defer r.cancelLines(nil)
	unregister, ok := s.register(id, r)
	if !ok {
		s.handBack(r)
		return false, nil
	}
	defer unregister()
	// A finalization may outlast StaleAfter: the heartbeat keeps other workers off it.
	stopAlive := r.keepAlive()
	defer stopAlive()
	end := rec.Ending
	if end == "" && rec.Status == StatusCancelling {
		end = endCancelled
	}
	s.log.Info("batch: its completion window ended before it finished; it ends", "batch", id, "status", endStatus(end))
	if err := s.finalize(r, end); err != nil {
		if errors.Is(err, errLost) {
			return false, nil
		}
		s.handBack(r)
		return false, fmt.Errorf("finalize batch %s: %w", id, err)
	}
	return true, nil
}

// claimOverdue claims batch id, which this goroutine holds (s.held), to end it: only when
// it is past its window and not ended, and either queued (validating) or claimed by a run
// that is gone (its heartbeat is stale). A queued batch goes straight to finalizing as
// expired (it never ran). It returns nil when there is nothing to do here.
func (s *Service) claimOverdue(ctx context.Context, id string) (*record, error) {
	var out *record
	err := s.st.Update(ctx, func(tx store.Tx) error {
		out = nil
		rec, err := store.GetJSON[record](ctx, tx, store.Batches, id)
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if !s.overdue(&rec) {
			return nil // ended (completed, cancelled, expired by another) or not due
		}
		now := s.now().UTC()
		switch rec.Status {
		case StatusValidating:
			rec.Status, rec.Ending, rec.FinalizingAt = StatusFinalizing, endExpired, now
		case StatusInProgress, StatusCancelling, StatusFinalizing:
			if dead, _ := jobqueue.Stale(rec.LastSeen(), time.Now(), s.q.StaleAfter()); !dead {
				return nil // a live run has it, and ends it itself
			}
			if rec.diedTooOften() {
				rec.Ending = endCrashed
			}
			if rec.Ending == "" && rec.Status == StatusInProgress {
				rec.Ending = endExpired
			}
		default:
			return nil
		}
		rec.startRun()
		out = &rec
		return store.PutJSON(ctx, tx, store.Batches, id, rec)
	})
	if err != nil {
		return nil, fmt.Errorf("claim batch %s: %w", id, err)
	}
	return out, nil
}

// expireLoop ends the batches past their window that no run has ended, at start and every
// expireEvery until ctx ends.
func (s *Service) expireLoop(ctx context.Context) {
	defer s.wg.Done()
	t := time.NewTicker(s.expireEvery)
	defer t.Stop()
	for {
		n, err := s.expireAll(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			s.log.Warn("batch: end the batches past their completion window", "err", err)
		case n > 0:
			s.log.Info("batch: ended batches past their completion window", "batches", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// expireAll ends every batch of the store past its window that no run has ended, and
// reports how many it ended.
func (s *Service) expireAll(ctx context.Context) (int, error) {
	ended := 0
	after := ""
	for {
		entries, err := s.st.List(ctx, store.Batches, store.ListOptions{After: after, Limit: 500})
		if err != nil {
			return ended, fmt.Errorf("batch: list batches: %w", err)
		}
		var firstErr error
		for _, e := range entries {
			var rec record
			if decode(e.Value, &rec) != nil || !s.overdue(&rec) {
				continue
			}
			ok, err := s.expireOverdue(ctx, rec.ID)
			if err != nil && firstErr == nil {
				firstErr = err
			}
			if ok {
				ended++
			}
			if ctx.Err() != nil {
				return ended, ctx.Err()
			}
		}
		if firstErr != nil {
			return ended, firstErr
		}
		if len(entries) < 500 {
			return ended, nil
		}
		after = entries[len(entries)-1].Key
	}
}
