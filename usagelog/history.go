package usagelog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/store"
)

// History keeps the gateway's request history in a store.Store (collection
// store.RequestLog, listed through the owner index): unlike a Recorder's it survives
// restarts, and every replica over one PostgreSQL store writes to and lists the same
// history. It is a completions.Observer that never waits for the store: ObserveRequest
// queues the request (at most HistoryOptions.Queue; past that it is dropped, counted and
// logged) and a background writer commits what is queued in transactions of up to
// historyBatch requests, each holding the requests received within
// HistoryOptions.GroupWindow of its first (group commit: one disk sync for them all).
// Reads (Each) first have what this process queued written at once, so a caller sees its
// own requests. Requests are kept HistoryOptions.Retention after they were
// received: older ones are not listed, and Sweep deletes them. Make one with NewHistory
// and Close it to write the rest.
//
// A request's ID is its receipt time in Unix microseconds, made unique in the store: the
// writer claims it in the transaction that writes the request (its record key is the ID),
// and takes the next free microsecond when another request (of this process or of another
// replica) already has it. The listing is in ID order, newest first, so paging back by ID
// (RequestQuery.Before) neither repeats nor skips a request. IDs stay below 2^53: a
// JavaScript client reads them exactly.
type History struct {
	st    *store.Store
	opts  HistoryOptions
	queue chan Request
	// flushNow asks the writer to end its group window at once (endWindow).
	flushNow chan struct{}
	// timer starts the group window's timer (a fake clock in tests).
	timer func(time.Duration) (<-chan time.Time, func() bool)

	mu       sync.Mutex
	closed   bool
	queued   uint64        // requests put in queue so far
	written  uint64        // of those, how many the writer is done with (committed or failed)
	advanced chan struct{} // closed (and replaced) whenever written grows

	// lookupIndexed: both runs of historyLookupMigration are recorded in the store (the
	// lookup index holds every request): lookups by status and id read it from then on.
	lookupIndexed atomic.Bool
	// failuresOnly: both runs of historyFailuresOnlyMigration are recorded in the store,
	// so no replica of a build that reads successful requests through their own status
	// entries is left: the writer stops writing those (it checks at its first batch, the
	// sweep each time it runs). Until then it writes them for those replicas.
	failuresOnly atomic.Bool
	// failuresOnlyChecked: the writer has checked failuresOnly in the store (the writer's
	// goroutine alone reads and sets it).
	failuresOnlyChecked bool

	dropped  atomic.Int64
	failed   atomic.Int64
	lastWarn atomic.Int64 // Unix seconds of the last "dropped" warning
	done     chan struct{}

	// life is the writer's context: Close cancels it (stop) once its ctx and CloseGrace
	// have ended, which ends the writer's retry waits and cancels the write under way.
	// lastChance, set by stop before it cancels life, bounds the one last attempt the
	// writer then makes at what is left (the store may answer at once).
	life       context.Context
	stop       context.CancelFunc
	stopOnce   sync.Once
	lastChance context.Context
	endLast    context.CancelFunc
}

// HistoryOptions configure a History; the zero value is usable.
type HistoryOptions struct {
	// Retention is how long a request is kept after it was received: 0 means
	// DefaultHistoryRetention, a negative value keeps requests forever.
	Retention time.Duration
	// Queue bounds the requests waiting to be written (default DefaultHistoryQueue); a
	// request observed while it is full is dropped (Dropped counts them).
	Queue int
	// Logger receives write failures and drops; nil discards them.
	Logger *slog.Logger
	// Now is the clock of the retention; nil means time.Now.
	Now func() time.Time
	// CloseGrace is how long Close keeps waiting for the queued requests to be written
	// after its ctx ended, counted from the call: a program whose shutdown deadline other
	// work may use up can still have what is queued written. 0 or negative: none, Close
	// returns when ctx ends (as everything that waits here does; serve gives the history
	// a budget of its own at shutdown, --shutdown-timeout again after the requests').
	CloseGrace time.Duration
	// RetryWait is how long the writer waits before writing again the requests a failed
	// transaction did not commit (a database restarting, a replica's connection lost),
	// doubling after each failure, historyWriteAttempts tries in all: 0 means
	// DefaultHistoryRetryWait (1s: about 31 s of outage survived); negative, no retry.
	RetryWait time.Duration
	// GroupWindow is how long the writer, once it has taken the first request of its next
	// transaction, waits for more before it commits (group commit): the requests received
	// within it are written in one transaction, with one disk sync, where each lone
	// request was committed and synced alone. The requests' answers never wait for it
	// (ObserveRequest only queues); a request waits at most this long once the writer is
	// done with the transaction before it, Flush (and so Each and Count) and Close end the
	// window at once, and a full batch (historyBatch) is committed without waiting. 0
	// means DefaultHistoryGroupWindow; negative, no window (each transaction takes what is
	// queued when the writer gets to it).
	GroupWindow time.Duration
}

// Defaults of HistoryOptions.
const (
	// DefaultHistoryRetention keeps requests 30 days, as LiteLLM's spend logs are commonly
	// kept (its maximum_spend_logs_retention_period) and long enough for a month's review.
	DefaultHistoryRetention = 30 * 24 * time.Hour
	// DefaultHistoryQueue is how many requests may wait to be written (a full queue takes
	// 32 transactions to write: a second or two on a disk or a nearby PostgreSQL).
	DefaultHistoryQueue = 8192
	// DefaultHistoryRetryWait is the writer's first wait before writing a failed batch again.
	DefaultHistoryRetryWait = time.Second
	// DefaultHistoryGroupWindow groups the requests of a few milliseconds in one commit:
	// on a disk that syncs in about a millisecond, a lone request no longer puts a sync
	// beside every answer, and another replica lists a request a few milliseconds later.
	DefaultHistoryGroupWindow = 5 * time.Millisecond
)

// historyWriteAttempts is how many times the writer tries a request before it counts it
// failed (HistoryOptions.RetryWait).
const historyWriteAttempts = 6

// historyKind is the owner index kind of the history's records.
const historyKind = "request"

// historyBatch bounds the requests one transaction writes, or a sweep deletes.
const historyBatch = 256

// historyWriteTimeout bounds one batch's transaction.
const historyWriteTimeout = 30 * time.Second

// historyLastChance bounds, all together, the writes the writer still tries once Close's
// ctx has ended (one attempt at each batch left): a store that answers takes them, an
// unreachable one does not hold the shutdown up for longer.
const historyLastChance = 2 * time.Second

// writeContext is the context of one of the writer's transactions: bounded by
// historyWriteTimeout, and by life until Close stops the writer, by lastChance after.
func (h *History) writeContext() (context.Context, context.CancelFunc) {
	if h.life.Err() != nil {
		return context.WithTimeout(h.lastChance, historyWriteTimeout)
	}
	return context.WithTimeout(h.life, historyWriteTimeout)
}

// stopWriter ends the writer's waits: the write under way is cancelled and what is left
// gets one last attempt within historyLastChance, then is counted failed and logged.
func (h *History) stopWriter() {
	h.stopOnce.Do(func() {
		h.lastChance, h.endLast = context.WithTimeout(context.Background(), historyLastChance)
		h.stop()
	})
}

// NewHistory returns a History over st, its writer started.
func NewHistory(st *store.Store, opts HistoryOptions) *History {
	return newHistory(st, opts, realTimer)
}

// realTimer is the group window's timer of the wall clock.
func realTimer(d time.Duration) (<-chan time.Time, func() bool) {
	t := time.NewTimer(d)
	return t.C, t.Stop
}

// newHistory is NewHistory with the group window's timer.
func newHistory(st *store.Store, opts HistoryOptions, timer func(time.Duration) (<-chan time.Time, func() bool)) *History {
	if opts.Retention == 0 {
		opts.Retention = DefaultHistoryRetention
	}
	if opts.Queue <= 0 {
		opts.Queue = DefaultHistoryQueue
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.RetryWait == 0 {
		opts.RetryWait = DefaultHistoryRetryWait
	}
	if opts.GroupWindow == 0 {
		opts.GroupWindow = DefaultHistoryGroupWindow
	}
	h := &History{st: st, opts: opts, queue: make(chan Request, opts.Queue),
		flushNow: make(chan struct{}, 1), timer: timer,
		advanced: make(chan struct{}), done: make(chan struct{})}
	h.life, h.stop = context.WithCancel(context.Background())
	go h.run()
	return h
}

var _ completions.Observer = (*History)(nil)

// storedRequest is a request as stored: Request hides its owner from the wire.
type storedRequest struct {
	Owner string `json:"owner"`
	Key   string `json:"key"`
	Request
}

// refs are the owner index entries of a stored request: under its owner, and under
// owner/tag for a scope's own listing (a virtual key's); the lookup entries under its
// status for a failed request (for its owner, and for its scope; a successful one's too
// with withSuccess, see History.failuresOnly) and under each of its request and response
// ids (historyIDKind; one entry when they are the same, none for an id it lacks; a record
// of the first key format also under its decimal ID, which is not its key then). They are
// created at the ID's microsecond, so that the index is in ID order (a record of the first
// key format, receipt time.process.sequence, was indexed at its receipt time). All are
// written with the record and deleted with it (refs(true): what any build wrote).
func (s *storedRequest) refs(withSuccess bool) []store.OwnedRef {
	created := time.UnixMicro(s.ID)
	legacy := strings.Contains(s.Key, ".")
	if legacy {
		created = s.Start
	}
	r := store.OwnedRef{Kind: historyKind, Owner: s.Owner, Created: created, ID: s.Key}
	refs := []store.OwnedRef{r}
	if s.Tag != "" {
		t := r
		t.Owner = scopeOwner(s.Owner, s.Tag)
		refs = append(refs, t)
	}
	if status := s.status(); status != StatusSuccess || withSuccess {
		refs = append(refs, store.OwnedRef{Kind: historyStatusKind, Owner: lookupOwner(s.Owner, status), Created: created, ID: s.Key})
		if s.Tag != "" {
			refs = append(refs, store.OwnedRef{Kind: historyScopeStatusKind, Owner: lookupOwner(s.Owner, s.Tag, status), Created: created, ID: s.Key})
		}
	}
	ids := []string{s.RequestID, s.ResponseID}
	if legacy {
		ids = append(ids, strconv.FormatInt(s.ID, 10))
	}
	for i, id := range ids {
		if id != "" && !slices.Contains(ids[:i], id) {
			refs = append(refs, store.OwnedRef{Kind: historyIDKind, Owner: lookupOwner(s.Owner, id), Created: created, ID: s.Key})
		}
	}
	return refs
}

// Owner index kinds of the history's lookups, beside historyKind's listing.
const (
	// historyIDKind indexes each request under lookupOwner(owner, id) for its RequestID and
	// its ResponseID: a lookup by id reads the requests it names.
	historyIDKind = "request_id"
	// historyStatusKind indexes each failed request under lookupOwner(owner,
	// StatusFailure). The successful ones are the owner's listing without those (an
	// earlier build indexed them under lookupOwner(owner, StatusSuccess) too, and this one
	// does until the failures-only migration is done: readers never read those entries).
	historyStatusKind = "request_status"
	// historyScopeStatusKind indexes each failed request of a scope under
	// lookupOwner(owner, tag, StatusFailure), as historyStatusKind for the scope.
	historyScopeStatusKind = "request_scope_status"
)

// lookupOwner is the owner index owner of a lookup entry: its parts path-escaped and
// joined by "/", so that no two lists of parts make the same owner.
func lookupOwner(parts ...string) string {
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return strings.Join(parts, "/")
}

// scopeOwner is the owner index owner of one scope's requests.
func scopeOwner(owner, tag string) string { return owner + "/" + tag }

// ObserveRequest queues rec for the writer (completions.Observer); it never waits.
func (h *History) ObserveRequest(_ context.Context, rec completions.RequestRecord) {
	req := newRequest(rec)
	if req.Start.IsZero() {
		req.Start = h.opts.Now().UTC()
	}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		h.drop("closed")
		return
	}
	select {
	case h.queue <- req:
		h.queued++
		if len(h.queue) >= historyBatch-1 {
			h.endWindow() // a full batch waits for no one
		}
		h.mu.Unlock()
	default:
		h.mu.Unlock()
		h.drop("queue full")
	}
}

// drop counts a request not written and warns, at most once a minute.
func (h *History) drop(why string) {
	n := h.dropped.Add(1)
	now := time.Now().Unix()
	if last := h.lastWarn.Load(); now-last >= 60 && h.lastWarn.CompareAndSwap(last, now) {
		h.opts.Logger.Warn("usagelog: request history: a request was not recorded", "why", why, "dropped_so_far", n)
	}
}

// Dropped is how many requests were not recorded (the queue was full, or after Close).
func (h *History) Dropped() int64 { return h.dropped.Load() }

// Failed is how many requests the writer could not commit.
func (h *History) Failed() int64 { return h.failed.Load() }

func (h *History) run() {
	defer close(h.done)
	for req := range h.queue {
		batch := h.gather(req)
		h.commit(batch)
		h.mu.Lock()
		h.written += uint64(len(batch))
		close(h.advanced)
		h.advanced = make(chan struct{})
		h.mu.Unlock()
	}
}

// gather is the batch first begins: first and what is queued behind it, up to
// historyBatch, when GroupWindow ends. The writer sleeps through the window rather than
// taking each request as it comes: a request queued meanwhile wakes no one (waking the
// writer for each was a cost of its own on a busy machine). The window ends early when a
// Flush or Close asks (flushNow), the queue holds a full batch (ObserveRequest asks), or
// the writer is stopped.
func (h *History) gather(first Request) []Request {
	if h.opts.GroupWindow > 0 && len(h.queue) < historyBatch-1 && h.life.Err() == nil {
		window, stop := h.timer(h.opts.GroupWindow)
		select {
		case <-window:
		case <-h.flushNow:
		case <-h.life.Done():
		}
		stop()
	}
	return h.drain([]Request{first})
}

// drain adds to batch what is queued, without waiting, up to historyBatch.
func (h *History) drain(batch []Request) []Request {
	for len(batch) < historyBatch {
		select {
		case r, ok := <-h.queue:
			if !ok {
				return batch
			}
			batch = append(batch, r)
		default:
			return batch
		}
	}
	return batch
}

// historyKey is the record key of the request with id: 16 hex digits, so that the
// collection is in ID order, which is receipt order (Sweep reads the oldest first).
func historyKey(id int64) string { return fmt.Sprintf("%016x", uint64(max(id, 0))) }

// commit writes batch in one transaction; when that fails, one request at a time, so one
// bad request does not take the others with it. Each request gets its ID in the
// transaction: its receipt microsecond, or the first free one after it.
func (h *History) commit(batch []Request) {
	if !h.failuresOnlyChecked {
		h.failuresOnlyChecked = true
		ctx, cancel := h.writeContext()
		if err := h.checkFailuresOnly(ctx); err != nil {
			h.opts.Logger.Warn("usagelog: request history: writing the successful requests' status entries too", "err", err)
		}
		cancel()
	}
	withSuccess := !h.failuresOnly.Load()
	recs := make([]storedRequest, len(batch))
	for i, r := range batch {
		recs[i] = storedRequest{Owner: r.Owner, Request: r}
	}
	write := func(recs []storedRequest) error {
		ctx, cancel := h.writeContext()
		defer cancel()
		return h.st.Update(ctx, func(tx store.Tx) error {
			for i := range recs {
				// A driver may run this again (PostgreSQL after a serialization failure,
				// when another replica claimed the same ID): the ID is claimed afresh.
				id := max(recs[i].Start.UnixMicro(), 1)
				for {
					_, err := tx.Get(ctx, store.RequestLog, historyKey(id))
					if errors.Is(err, store.ErrNotFound) {
						break
					}
					if err != nil {
						return err
					}
					id++
				}
				recs[i].ID, recs[i].Key = id, historyKey(id)
				if err := store.PutJSON(ctx, tx, store.RequestLog, recs[i].Key, &recs[i]); err != nil {
					return err
				}
				for _, ref := range recs[i].refs(withSuccess) {
					if err := store.PutOwned(ctx, tx, ref); err != nil {
						return err
					}
				}
			}
			return nil
		})
	}
	// A transaction that fails is tried one request at a time, so one bad request does not
	// take the others with it; when none of them commits (the store is unreachable), they
	// are tried again after RetryWait, doubling, rather than lost: the daily spend keeps its
	// batches for the next write, and /spend/logs would otherwise miss what it counts.
	// Once Close has stopped the writer (its ctx ended), a wait ends at once and a failed
	// attempt is the last.
	pending := recs
	wait := h.opts.RetryWait
	for attempt := 1; ; attempt++ {
		last := h.life.Err() != nil // Close stopped the writer: this attempt is the last
		err := write(pending)
		if err == nil {
			return
		}
		if len(pending) > 1 {
			var left []storedRequest
			for i := range pending {
				if err = write(pending[i : i+1]); err != nil {
					left = append(left, pending[i])
				}
			}
			if len(left) < len(pending) {
				// Some committed: the store is up, so the others are refused for themselves.
				h.fail(left, err)
				return
			}
		}
		if attempt >= historyWriteAttempts || wait < 0 || errors.Is(err, store.ErrInvalid) || last {
			h.fail(pending, err)
			return
		}
		h.opts.Logger.Warn("usagelog: request history: writing again after a failed write", "requests", len(pending), "attempt", attempt, "wait", wait, "err", err)
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-h.life.Done():
			t.Stop()
		}
		wait *= 2
	}
}

// fail counts and logs the requests recs the writer gave up on, each with what an
// operator needs to find it elsewhere (the key's spend, the provider's logs).
func (h *History) fail(recs []storedRequest, err error) {
	for i := range recs {
		h.failed.Add(1)
		r := &recs[i]
		h.opts.Logger.Error("usagelog: request history: a request was not saved", "owner", r.Owner,
			"request_id", r.RequestID, "model", r.Model, "start", r.Start, "cost_usd", r.CostUSD, "err", err)
	}
}

// endWindow ends the writer's group window, or its next one, at once.
func (h *History) endWindow() {
	select {
	case h.flushNow <- struct{}{}:
	default: // already asked
	}
}

// Flush returns once every request observed before the call is written (or failed), or
// with ctx's error. The writer's group window, when one is open, ends at once.
func (h *History) Flush(ctx context.Context) error {
	h.mu.Lock()
	target := h.queued
	for h.written < target {
		h.endWindow()
		ch := h.advanced
		h.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		case <-h.done:
			return nil // closed: nothing more will be written
		}
		h.mu.Lock()
	}
	h.mu.Unlock()
	return nil
}

// Close stops taking requests and returns once the queued ones are written. When ctx
// ends first it keeps waiting until HistoryOptions.CloseGrace after the call, if set;
// past both it stops the writer: a retry wait (the store failing) ends at once, the write
// under way is cancelled, and what is left gets one last attempt (within
// historyLastChance, all batches together); each request still not written is then
// logged at error (owner, request id, model, start, cost) and counted in Failed, and Close
// returns ctx's error saying how many. Requests observed after Close are dropped.
func (h *History) Close(ctx context.Context) error {
	grace := time.Now().Add(h.opts.CloseGrace)
	h.mu.Lock()
	if !h.closed {
		h.closed = true
		close(h.queue)
		h.endWindow() // what is queued is written now
	}
	h.mu.Unlock()
	select {
	case <-h.done:
		return nil
	case <-ctx.Done():
	}
	if wait := time.Until(grace); wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-h.done:
			return nil
		case <-t.C:
		}
	}
	failed := h.failed.Load()
	h.stopWriter()
	defer h.endLast()
	// The writer's writes are bounded by lastChance now; a driver that ignores its ctx is
	// not waited for much longer.
	t := time.NewTimer(historyLastChance + time.Second)
	defer t.Stop()
	select {
	case <-h.done:
	case <-t.C:
	}
	h.mu.Lock()
	left := h.queued - h.written
	h.mu.Unlock()
	lost := h.failed.Load() - failed + int64(left)
	if lost == 0 {
		return nil
	}
	h.opts.Logger.Warn("usagelog: request history: closed before the queued requests were written (each logged)", "not_written", lost, "err", ctx.Err())
	return fmt.Errorf("usagelog: closing the request history (%d requests not written): %w", lost, ctx.Err())
}

// firstKept is the receipt time before which requests are past the retention at now
// (zero: every request is kept).
func (h *History) firstKept(now time.Time) time.Time {
	if h.opts.Retention < 0 {
		return time.Time{}
	}
	return now.Add(-h.opts.Retention)
}

// historyPage is how many index entries one read of Each lists.
const historyPage = store.MaxPageLimit

// Each lists the stored requests q selects, newest first (RequestSource), after waiting
// for the requests this process queued. It reads the owner index of q.Owner (or of its
// scope q.Tag; for q.Status, see ownedQuery), within q's time window and the retention,
// one record per entry; q's other filters (RequestTag, Match) are applied to the records.
// With q.IDs it reads only the requests they name (see lookup). A request's time, for the window
// and the retention, is its ID's microsecond (its receipt time to the microsecond, or a
// few microseconds later when others were received in the same one), and the window's
// bounds are taken to the microsecond. Without RequestTag and Match the
// requests q.Skip leaves out are not read.
func (h *History) Each(ctx context.Context, q RequestQuery, fn func(Request) bool) error {
	if err := h.Flush(ctx); err != nil {
		return err
	}
	if err := h.checkLookupIndex(ctx, &q); err != nil {
		return err
	}
	oq, ok := h.ownedQuery(q)
	if !ok {
		return nil // an empty window
	}
	if len(q.IDs) > 0 && !q.scan {
		return h.lookup(ctx, q, oq, fn)
	}
	// The index window decides the time (as Count counts): the records' receipt times are
	// not checked again.
	skip, indexOnly := q.Skip, q.indexOnly()
	q.From, q.Until = time.Time{}, time.Time{}
	listed := 0
	for {
		if q.Limit > 0 {
			// A page of what is left to list reads that many records (and one more).
			oq.Limit = min(q.Limit-listed, historyPage)
		}
		page, next, err := store.ListOwned(ctx, h.st, oq, func(id string) (Request, bool, error) {
			if skip > 0 && indexOnly {
				skip--
				return Request{}, false, nil
			}
			rec, err := store.GetJSON[storedRequest](ctx, h.st, store.RequestLog, id)
			if errors.Is(err, store.ErrNotFound) {
				return Request{}, false, nil // swept meanwhile
			}
			if err != nil {
				return Request{}, false, err
			}
			rec.Request.Owner = rec.Owner
			if rec.Owner != q.Owner || !q.keeps(&rec.Request) {
				return Request{}, false, nil
			}
			if skip > 0 {
				skip--
				return Request{}, false, nil
			}
			return rec.Request, true, nil
		})
		if err != nil {
			return fmt.Errorf("usagelog: reading the request history: %w", err)
		}
		for _, r := range page {
			listed++
			if !fn(r) || listed == q.Limit {
				return nil
			}
		}
		if next == "" {
			return nil
		}
		oq.Cursor = next
	}
}

// Count is how many stored requests q selects (RequestSource), q.Skip aside, after
// waiting for the requests this process queued. Without RequestTag and Match it counts the
// owner index entries of q's window and reads no record.
func (h *History) Count(ctx context.Context, q RequestQuery) (int, error) {
	q.Skip, q.Limit = 0, 0
	if err := h.checkLookupIndex(ctx, &q); err != nil {
		return 0, err
	}
	if !q.indexOnly() {
		n := 0
		err := h.Each(ctx, q, func(Request) bool { n++; return true })
		return n, err
	}
	if err := h.Flush(ctx); err != nil {
		return 0, err
	}
	oq, ok := h.ownedQuery(q)
	if !ok {
		return 0, nil
	}
	n, err := store.CountOwned(ctx, h.st, oq)
	if err != nil {
		return n, fmt.Errorf("usagelog: counting the request history: %w", err)
	}
	return n, nil
}

// ownedQuery is the owner index query of q: its scope's (and status's) index, within its
// time window and the retention, below q.Before; false when the window is empty. Failed
// requests are listed through their status index; successful ones through the owner's
// (or scope's) listing except the failed ones' entries, read side by side (keys only), so
// that a page of them reads that page and their count reads no request.
func (h *History) ownedQuery(q RequestQuery) (store.OwnedQuery, bool) {
	oq := store.OwnedQuery{Kind: historyKind, Owner: q.Owner, Limit: historyPage}
	switch {
	case q.scan && q.Tag != "":
		oq.Owner = scopeOwner(q.Owner, q.Tag)
	case q.scan:
	case q.Status == StatusSuccess && q.Tag != "":
		// The scope's listing without its failed requests.
		oq.Owner = scopeOwner(q.Owner, q.Tag)
		oq.Except = &store.OwnedIndex{Kind: historyScopeStatusKind, Owner: lookupOwner(q.Owner, q.Tag, StatusFailure)}
	case q.Status == StatusSuccess:
		oq.Except = &store.OwnedIndex{Kind: historyStatusKind, Owner: lookupOwner(q.Owner, StatusFailure)}
	case q.Status != "" && q.Tag != "":
		oq.Kind, oq.Owner = historyScopeStatusKind, lookupOwner(q.Owner, q.Tag, q.Status)
	case q.Status != "":
		oq.Kind, oq.Owner = historyStatusKind, lookupOwner(q.Owner, q.Status)
	case q.Tag != "":
		oq.Owner = scopeOwner(q.Owner, q.Tag)
	}
	from := q.From
	if first := h.firstKept(h.opts.Now()); !first.IsZero() && first.After(from) {
		from = first
	}
	// Index times are IDs' microseconds: the bounds are taken to the microsecond, as the
	// requests' receipt times are.
	oq.CreatedAfter, oq.CreatedBefore = from.Truncate(time.Microsecond), q.Until.Truncate(time.Microsecond)
	if q.Before > 0 {
		if b := time.UnixMicro(q.Before); oq.CreatedBefore.IsZero() || b.Before(oq.CreatedBefore) {
			oq.CreatedBefore = b
		}
	}
	return oq, oq.CreatedAfter.IsZero() || oq.CreatedBefore.IsZero() || oq.CreatedAfter.Before(oq.CreatedBefore)
}

// Sweep deletes the requests received longer than HistoryOptions.Retention before now,
// with their index entries (every entry any build writes), and returns how many it
// deleted (first it runs the lookup index migrations when they are due: see indexLookups
// and failuresOnlyMigration). Each already leaves them out; the sweep frees their room. The records are in receipt order: it reads the oldest
// historyBatch at a time and stops at the first one kept, so a sweep that deletes nothing
// reads one record. Each transaction deletes at most historyBatch requests, reading each
// again first: replicas of one PostgreSQL store may sweep at once. It stops when ctx ends.
func (h *History) Sweep(ctx context.Context, now time.Time) (int, error) {
	if err := h.indexLookups(ctx, now); err != nil {
		return 0, err
	}
	if err := h.failuresOnlyMigration(ctx, now); err != nil {
		return 0, err
	}
	first := h.firstKept(now)
	if first.IsZero() {
		return 0, nil
	}
	bound := fmt.Sprintf("%016x", uint64(max(first.UnixMicro(), 0)))
	deleted := 0
	for limit := 1; ; limit = historyBatch {
		if err := ctx.Err(); err != nil {
			return deleted, err
		}
		page, err := h.st.List(ctx, store.RequestLog, store.ListOptions{Limit: limit})
		if err != nil {
			return deleted, fmt.Errorf("usagelog: sweep the request history: %w", err)
		}
		var old []string
		for _, e := range page {
			if t, _, _ := strings.Cut(e.Key, "."); t >= bound {
				break
			}
			old = append(old, e.Key)
		}
		if len(old) > 0 {
			n := 0
			err := h.st.Update(ctx, func(tx store.Tx) error {
				n = 0
				for _, k := range old {
					v, err := tx.Get(ctx, store.RequestLog, k)
					if errors.Is(err, store.ErrNotFound) {
						continue // another replica's sweep
					}
					if err != nil {
						return err
					}
					var rec storedRequest
					if json.Unmarshal(v, &rec) == nil { // an undecodable record goes alone
						rec.Key = k
						for _, ref := range rec.refs(true) {
							if err := store.DeleteOwned(ctx, tx, ref); err != nil {
								return err
							}
						}
					}
					if err := tx.Delete(ctx, store.RequestLog, k); err != nil {
						return err
					}
					n++
				}
				return nil
			})
			if err != nil {
				return deleted, fmt.Errorf("usagelog: sweep the request history: %w", err)
			}
			deleted += n
		}
		if len(old) < len(page) || len(page) < limit {
			return deleted, nil
		}
	}
}

// lookup lists, as Each, the requests q.IDs name within oq's window: for each id the
// record whose ID it is (in decimal) and those its lookup index entries (historyIDKind)
// point to, so it reads the requests named and nothing else of the window. q's other
// filters are applied to those records.
func (h *History) lookup(ctx context.Context, q RequestQuery, oq store.OwnedQuery, fn func(Request) bool) error {
	type found struct {
		req     Request
		created time.Time
	}
	var all []found
	seen := map[string]bool{}
	read := func(key string, created time.Time) error {
		if seen[key] {
			return nil
		}
		seen[key] = true
		rec, err := store.GetJSON[storedRequest](ctx, h.st, store.RequestLog, key)
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		rec.Request.Owner = rec.Owner
		if rec.Owner != q.Owner || !q.keeps(&rec.Request) {
			return nil
		}
		all = append(all, found{rec.Request, created})
		return nil
	}
	inWindow := func(t time.Time) bool {
		return (oq.CreatedAfter.IsZero() || !t.Before(oq.CreatedAfter)) && (oq.CreatedBefore.IsZero() || t.Before(oq.CreatedBefore))
	}
	// The index window decides the time, as Each's listing does.
	q.From, q.Until = time.Time{}, time.Time{}
	for _, id := range q.IDs {
		if n, err := strconv.ParseInt(id, 10, 64); err == nil && n > 0 {
			if t := time.UnixMicro(n); inWindow(t) {
				if err := read(historyKey(n), t); err != nil {
					return fmt.Errorf("usagelog: reading the request history: %w", err)
				}
			}
		}
		iq := oq
		iq.Kind, iq.Owner, iq.Cursor, iq.Limit = historyIDKind, lookupOwner(q.Owner, id), "", historyPage
		// Not oq's Except (a successful request's listing without the failed ones): it
		// would read the owner's failure entries from the window's start down to the id's,
		// for what q.keeps decides on the few records read.
		iq.Except = nil
		for {
			keys, next, err := store.ListOwned(ctx, h.st, iq, func(key string) (string, bool, error) { return key, true, nil })
			if err != nil {
				return fmt.Errorf("usagelog: reading the request history: %w", err)
			}
			for _, key := range keys {
				t := time.Time{}
				if us, err := strconv.ParseInt(key, 16, 64); err == nil {
					t = time.UnixMicro(us)
				}
				if err := read(key, t); err != nil {
					return fmt.Errorf("usagelog: reading the request history: %w", err)
				}
			}
			if next == "" {
				break
			}
			iq.Cursor = next
		}
	}
	for i := range all {
		if all[i].created.IsZero() { // a record of the first key format: at its receipt time
			all[i].created = all[i].req.Start
		}
	}
	// Newest first, as the owner index lists them.
	sort.SliceStable(all, func(i, j int) bool {
		if !all[i].created.Equal(all[j].created) {
			return all[i].created.After(all[j].created)
		}
		return all[i].req.ID > all[j].req.ID
	})
	skip, listed := q.Skip, 0
	for _, f := range all {
		if skip > 0 {
			skip--
			continue
		}
		listed++
		if !fn(f.req) || listed == q.Limit {
			return nil
		}
	}
	return nil
}

// indexLookups runs historyLookupMigration when store.MigrationDue says so: its first
// run, then a day later its second, for the requests replicas of an earlier build wrote
// meanwhile. It runs in the sweep, off the request path, as the store's other data
// migrations do; a run cut short (ctx, a crash) is run again from the start.
func (h *History) indexLookups(ctx context.Context, now time.Time) error {
	due, err := store.MigrationDue(ctx, h.st, historyLookupMigration, now)
	if err != nil || !due {
		return err
	}
	return h.indexEarlierRequests(ctx, now)
}

// historyLookupMigration names, in store.Migrations, the scan that indexed the requests
// stored before the lookup index entries (status, request and response ids) existed.
const historyLookupMigration = "request_log_lookup_index"

// checkLookupIndex decides how q's lookups (q.Status, q.IDs) are read: through the lookup
// index once both runs of historyLookupMigration are recorded (checked until they are,
// then once per process); until then q.scan is set and they are read as before the index
// (the window of the owner's or scope's listing, each record checked), so that no
// request an earlier build stored is missed and no request waits for the migration.
func (h *History) checkLookupIndex(ctx context.Context, q *RequestQuery) error {
	if q.Status == "" && len(q.IDs) == 0 || q.scan || h.lookupIndexed.Load() {
		return nil
	}
	done, err := store.MigrationDone(ctx, h.st, historyLookupMigration)
	if err != nil {
		return fmt.Errorf("usagelog: request history lookup index: %w", err)
	}
	if done {
		h.lookupIndexed.Store(true)
		return nil
	}
	q.scan = true
	return nil
}

// indexEarlierRequests writes every stored request's index entries (refs), reading each
// again in the transaction that indexes it (a request swept meanwhile is not indexed
// again), historyBatch requests a transaction, then records historyLookupMigration as run
// at now. Entries already there are written again unchanged; successful requests' status
// entries only until failuresOnly.
func (h *History) indexEarlierRequests(ctx context.Context, now time.Time) error {
	withSuccess := !h.failuresOnly.Load()
	after := ""
	for {
		page, err := h.st.List(ctx, store.RequestLog, store.ListOptions{After: after, Limit: historyBatch})
		if err != nil {
			return fmt.Errorf("usagelog: request history lookup index: %w", err)
		}
		err = h.st.Update(ctx, func(tx store.Tx) error {
			for _, e := range page {
				v, err := tx.Get(ctx, store.RequestLog, e.Key)
				if errors.Is(err, store.ErrNotFound) {
					continue
				}
				if err != nil {
					return err
				}
				var rec storedRequest
				if json.Unmarshal(v, &rec) != nil {
					continue // an undecodable record is listed by none
				}
				rec.Key = e.Key
				for _, ref := range rec.refs(withSuccess) {
					if err := store.PutOwned(ctx, tx, ref); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("usagelog: request history lookup index: %w", err)
		}
		if len(page) < historyBatch {
			break
		}
		after = page[len(page)-1].Key
	}
	if err := store.MigrationRan(ctx, h.st, historyLookupMigration, now); err != nil {
		return fmt.Errorf("usagelog: request history lookup index: %w", err)
	}
	return nil
}

// historyFailuresOnlyMigration names, in store.Migrations, the scan that deletes the
// lookup index entries (status, request and response ids) whose request is gone or does
// not have them: those a replica of a build before the lookup index left when its sweep
// deleted a request with its owner and scope entries alone (a status count would count
// them). Once both its runs are recorded (the second a day after the first, when no
// replica of a build that reads successful requests through their own status entries is
// left), writers index only the failed requests by status: see History.failuresOnly.
const historyFailuresOnlyMigration = "request_log_status_failures_only"

// historyLookupKinds are the owner index kinds of the history's lookup entries.
var historyLookupKinds = []string{historyStatusKind, historyScopeStatusKind, historyIDKind}

// failuresOnlyMigration runs historyFailuresOnlyMigration when store.MigrationDue says so
// (see deleteStaleLookups), then sets failuresOnly when both its runs are recorded.
func (h *History) failuresOnlyMigration(ctx context.Context, now time.Time) error {
	due, err := store.MigrationDue(ctx, h.st, historyFailuresOnlyMigration, now)
	if err != nil {
		return fmt.Errorf("usagelog: request history lookup index: %w", err)
	}
	if due {
		if err := h.deleteStaleLookups(ctx); err != nil {
			return err
		}
		if err := store.MigrationRan(ctx, h.st, historyFailuresOnlyMigration, now); err != nil {
			return fmt.Errorf("usagelog: request history lookup index: %w", err)
		}
	}
	return h.checkFailuresOnly(ctx)
}

// checkFailuresOnly sets failuresOnly when both runs of historyFailuresOnlyMigration are
// recorded in the store.
func (h *History) checkFailuresOnly(ctx context.Context) error {
	if h.failuresOnly.Load() {
		return nil
	}
	done, err := store.MigrationDone(ctx, h.st, historyFailuresOnlyMigration)
	if err != nil {
		return fmt.Errorf("usagelog: request history lookup index: %w", err)
	}
	if done {
		h.failuresOnly.Store(true)
	}
	return nil
}

// deleteStaleLookups reads every lookup index entry (historyLookupKinds) and deletes, in
// transactions of at most historyBatch entries that read their requests again, those
// whose request is gone or is not indexed there (refs(true) lacks the entry). It reads
// each entry and its request once: off the request path, in the sweep.
func (h *History) deleteStaleLookups(ctx context.Context) error {
	for _, kind := range historyLookupKinds {
		after := ""
		for {
			if err := ctx.Err(); err != nil {
				return err
			}
			page, next, err := store.ListOwnedRefs(ctx, h.st, kind, after, historyBatch)
			if err != nil {
				return fmt.Errorf("usagelog: request history lookup index: %w", err)
			}
			err = h.st.Update(ctx, func(tx store.Tx) error {
				recs := map[string][]store.OwnedRef{} // a request's entries by its key; nil: gone
				for _, ref := range page {
					refs, ok := recs[ref.ID]
					if !ok {
						v, err := tx.Get(ctx, store.RequestLog, ref.ID)
						if err != nil && !errors.Is(err, store.ErrNotFound) {
							return err
						}
						var rec storedRequest
						if err == nil && json.Unmarshal(v, &rec) == nil {
							rec.Key = ref.ID
							refs = rec.refs(true)
						}
						recs[ref.ID] = refs
					}
					if !slices.ContainsFunc(refs, func(r store.OwnedRef) bool {
						return r.Kind == ref.Kind && r.Owner == ref.Owner && r.Created.Equal(ref.Created)
					}) {
						if err := store.DeleteOwned(ctx, tx, ref); err != nil {
							return err
						}
					}
				}
				return nil
			})
			if err != nil {
				return fmt.Errorf("usagelog: request history lookup index: %w", err)
			}
			if next == "" {
				break
			}
			after = next
		}
	}
	return nil
}
