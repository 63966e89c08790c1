package jobqueue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/switchyard-ai/switchyard/store"
)

// Record is what the shared-queue bookkeeping reads and writes of a job service's stored
// job record (the trainer's and the optimizer's records implement it on their pointer
// type). The helpers below work on the record in the store, inside store transactions.
type Record interface {
	// Unfinished reports whether the job is queued or running.
	Unfinished() bool
	// Running reports whether the job is running.
	Running() bool
	// Attempt is how many times the job was started.
	Attempt() int
	// LastSeen is the running job's heartbeat, else its start.
	LastSeen() time.Time
	// CancelAsked reports whether a cancel was asked for the running job.
	CancelAsked() bool
	// SetHeartbeat records that the job's worker was alive at t.
	SetHeartbeat(t time.Time)
}

// recordPtr is a pointer to a record type T that implements Record.
type recordPtr[T any] interface {
	*T
	Record
}

// IsStale reports whether running record r's worker counts as dead on q: its heartbeat
// (else its start) is older than q's StaleAfter, in wall-clock time. Without a queue no
// worker is ever presumed dead.
func IsStale(q Queue, r Record) bool {
	if q == nil {
		return false
	}
	dead, _ := Stale(r.LastSeen(), time.Now(), q.StaleAfter())
	return dead
}

// Heartbeat returns the beat KeepAlive calls for run attempt of job id, stored in c: it
// refreshes the heartbeat while the record is still that run's; lost reports that the
// record is gone, shows another attempt (a worker took the job over) or is no longer
// running (another process ended it), cancelled that a cancel was asked.
func Heartbeat[T any, P recordPtr[T]](st *store.Store, c store.Collection, id string, attempt int) func(ctx context.Context) (lost, cancelled bool, err error) {
	return func(ctx context.Context) (lost, cancelled bool, err error) {
		err = st.Update(ctx, func(tx store.Tx) error {
			lost, cancelled = false, false
			j, err := store.GetJSON[T](ctx, tx, c, id)
			if errors.Is(err, store.ErrNotFound) {
				lost = true
				return nil
			}
			if err != nil {
				return err
			}
			p := P(&j)
			if !p.Running() || p.Attempt() != attempt {
				// Another worker took the job over, or another process ended it (a cancel
				// or delete of a job whose worker it read as dead): this run is not the
				// job's any more, and whatever it would write is stale.
				lost = true
				return nil
			}
			cancelled = p.CancelAsked()
			p.SetHeartbeat(time.Now())
			return store.PutJSON(ctx, tx, c, id, j)
		})
		return lost, cancelled, err
	}
}

// CountUnfinished counts owner's queued and running jobs, stored in c and indexed under
// kind (store.PutOwned), up to limit: what a per-owner job limit compares against, read in
// the submitting transaction so concurrent submits in different processes cannot pass the
// limit together.
func CountUnfinished[T any, P recordPtr[T]](ctx context.Context, r store.Reader, c store.Collection, kind, owner string, limit int) (int, error) {
	if limit <= 0 {
		return 0, nil // nothing to count up to
	}
	n := 0
	cursor := ""
	for {
		page, next, err := store.ListOwned(ctx, r, store.OwnedQuery{Kind: kind, Owner: owner, Cursor: cursor,
			Limit: min(limit-n, store.MaxPageLimit)}, func(id string) (struct{}, bool, error) {
			j, err := store.GetJSON[T](ctx, r, c, id)
			if errors.Is(err, store.ErrNotFound) {
				return struct{}{}, false, nil
			}
			if err != nil {
				return struct{}{}, false, err
			}
			return struct{}{}, P(&j).Unfinished(), nil
		})
		if err != nil {
			return 0, err
		}
		n += len(page)
		if next == "" || n >= limit {
			return n, nil
		}
		cursor = next
	}
}

// EnqueueUnfinished enqueues on q, as kind, every unfinished job stored in c, by the key it
// is stored under. Enqueueing is a no-op for the jobs q holds; it catches a job whose
// process stopped between storing and enqueueing it. Records that do not decode are
// skipped.
func EnqueueUnfinished[T any, P recordPtr[T]](ctx context.Context, st *store.Store, c store.Collection, q Queue, kind string) error {
	entries, err := st.List(ctx, c, store.ListOptions{})
	if err != nil {
		return fmt.Errorf("list jobs: %w", err)
	}
	return EnqueueListed[T, P](ctx, entries, q, kind)
}

// EnqueueListed is EnqueueUnfinished of the job records a caller has listed already (so that
// a start that reads them for more than enqueueing lists and reads them once): it enqueues
// on q, as kind, those of entries that decode as an unfinished T, by their keys.
func EnqueueListed[T any, P recordPtr[T]](ctx context.Context, entries []store.Entry, q Queue, kind string) error {
	for _, e := range entries {
		var j T
		if json.Unmarshal(e.Value, &j) != nil || !P(&j).Unfinished() {
			continue
		}
		if err := q.Enqueue(ctx, kind, e.Key); err != nil {
			return fmt.Errorf("re-enqueue job %s: %w", e.Key, err)
		}
	}
	return nil
}
