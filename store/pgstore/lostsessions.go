package pgstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/switchyard-ai/switchyard/store"
)

// maxLostTxs bounds the lost transactions a driver remembers (past it the oldest is
// forgotten: CommitStatus then waits for the server to end its session, as it would
// without the record).
const maxLostTxs = 1024

// lostTxs are the transactions whose COMMIT a driver sent on a connection it then lost
// before the answer came (a *store.CommitUnknownError's), each with its session's server
// process: CommitStatus may end such a session, and only such a one (never a transaction
// some other caller names). The zero value is ready.
type lostTxs struct {
	mu    sync.Mutex
	pids  map[int64]int32 // transaction id -> server process id
	order []int64         // ids in the order lost, for maxLostTxs
}

func (l *lostTxs) add(xid int64, pid int32) {
	if pid == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.pids == nil {
		l.pids = map[int64]int32{}
	}
	if _, ok := l.pids[xid]; ok {
		return
	}
	for len(l.order) >= maxLostTxs {
		delete(l.pids, l.order[0])
		l.order = l.order[1:]
	}
	l.pids[xid] = pid
	l.order = append(l.order, xid)
}

func (l *lostTxs) pid(xid int64) (int32, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	pid, ok := l.pids[xid]
	return pid, ok
}

func (l *lostTxs) forget(xid int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.pids[xid]; !ok {
		return
	}
	delete(l.pids, xid)
	for i, x := range l.order {
		if x == xid {
			l.order = append(l.order[:i], l.order[i+1:]...)
			break
		}
	}
}

// endLostSessionSQL terminates server process $1 only while it is still in transaction $2
// (its 32-bit id: backend_xid, the id of the transaction it runs, which no other running
// transaction shares) and idle in it, waiting for a statement: the COMMIT lost on the way.
// A process busy (the COMMIT arrived and is being processed) or reused since by another
// session matches no row. It is one statement, so the test and the signal see one state;
// a COMMIT arriving between them is harmless, CommitStatus asking txid_status again.
const endLostSessionSQL = `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
	WHERE pid = $1 AND backend_xid = ($2::bigint % 4294967296)::text::xid
		AND state IN ('idle in transaction', 'idle in transaction (aborted)')`

// ownConn opens a connection outside the pool, with the pool's configuration, for ending a
// lost session: every connection of the pool may be held by a writer waiting for the
// record locks (UpdateLocked's advisory locks, the rows written) that very session holds,
// and a query waiting for one of them would wait for what it is there to free.
func (d *Driver) ownConn(ctx context.Context) (*pgx.Conn, error) {
	c, err := pgx.ConnectConfig(ctx, d.pool.Config().ConnConfig)
	if err != nil {
		return nil, fmt.Errorf("pgstore: connect to end a lost session: %w", err)
	}
	return c, nil
}

// endLostSession terminates the server process pid of lost transaction xid when it still
// waits, idle in the transaction, for the COMMIT that will never come: ended says it was
// signalled. It runs on a connection of its own (ownConn). An error is the server's
// refusal (a role without the right to signal it) or the connection's failure.
func (d *Driver) endLostSession(ctx context.Context, xid int64, pid int32) (ended bool, err error) {
	c, err := d.ownConn(ctx)
	if err != nil {
		return false, err
	}
	defer c.Close(context.WithoutCancel(ctx))
	return endLostSessionOn(ctx, c, xid, pid)
}

// endLostSessionOn is endLostSession's query on q.
func endLostSessionOn(ctx context.Context, q querier, xid int64, pid int32) (ended bool, err error) {
	rows, err := q.Query(ctx, endLostSessionSQL, pid, xid)
	if err != nil {
		return false, fmt.Errorf("pgstore: end the lost session of transaction %d: %w", xid, err)
	}
	defer rows.Close()
	for rows.Next() {
		var ok bool
		if err := rows.Scan(&ok); err != nil {
			return false, fmt.Errorf("pgstore: end the lost session of transaction %d: %w", xid, err)
		}
		ended = ended || ok
	}
	if err := rows.Err(); err != nil {
		return false, fmt.Errorf("pgstore: end the lost session of transaction %d: %w", xid, err)
	}
	return ended, nil
}

// The driver's own tries to end a lost session (endLostLater): the first endLostDelay
// after the loss (time for a COMMIT still on its way to arrive), then doubling the wait
// up to endLostMaxGap, endLostTries in all (about five minutes); CommitStatus tries again
// whenever it is asked.
const (
	endLostDelay  = time.Second
	endLostMaxGap = 30 * time.Second
	endLostTries  = 12
	endLostTry    = 10 * time.Second // bounds each try's queries
)

// endLostSession's work, without waiting to be asked: a lost session the server still
// holds open keeps the rows its transaction wrote and UpdateLocked's advisory locks, and
// every other writer of those records (a budget account every request charges) waits for
// them until the server's keepalive ends the session, hours later, unless CommitStatus is
// asked about it meanwhile. endLostLater tries to end it in the background, until it is
// ended, told (by txid_status) or forgotten (told to CommitStatus), or its tries run out,
// and stops at Close.
func (d *Driver) endLostLater(xid int64, pid int32) {
	d.bgMu.Lock()
	defer d.bgMu.Unlock()
	if d.closed.Load() {
		return
	}
	d.background.Add(1)
	go func() {
		defer d.background.Done()
		wait := endLostDelay
		for range endLostTries {
			select {
			case <-d.stopping.Done():
				return
			case <-time.After(wait):
			}
			if _, ok := d.lost.pid(xid); !ok {
				return // CommitStatus was told
			}
			ctx, cancel := context.WithTimeout(d.stopping, endLostTry)
			ended, err := d.tryEndLost(ctx, xid, pid)
			cancel()
			if ended || err == nil || errors.Is(err, store.ErrInvalid) {
				return // ended, or over: CommitStatus tells the rest
			}
			wait = min(2*wait, endLostMaxGap)
		}
	}()
}

// tryEndLost is one of endLostLater's tries, on a connection of its own (ownConn), as the
// pool's may all wait for the lost session: it asks txid_status and, the transaction still
// in progress, ends its session. err is txid_status's answer (nil: told; matching
// store.ErrCommitUnknown: still in progress, or the question could not be asked).
func (d *Driver) tryEndLost(ctx context.Context, xid int64, pid int32) (ended bool, err error) {
	c, err := d.ownConn(ctx)
	if err != nil {
		return false, fmt.Errorf("%w: %w", store.ErrCommitUnknown, err)
	}
	defer c.Close(context.WithoutCancel(ctx))
	if _, err = txidStatusOn(ctx, c, xid); errors.Is(err, store.ErrCommitUnknown) {
		ended, _ = endLostSessionOn(ctx, c, xid, pid)
	}
	return ended, err
}
