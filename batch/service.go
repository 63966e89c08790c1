// Package batch is OpenAI's Batch API, and the Files API it reads and writes, run by the
// gateway itself: every line of a batch is answered as its endpoint answers a request of
// the key that created the batch (its budgets, model restrictions, tags, usage log and
// cost), through an [Executor] the server provides, not by a provider's batch API.
//
// Files ([Files]) keep their content in the store in pieces of [ChunkSize]; a batch input
// (purpose "batch") is checked line by line at upload. A batch ([Service]) is a record in
// the store and a job on a [jobqueue.Queue]: River on PostgreSQL, where any replica
// accepts a batch and exactly one worker runs it, or an in-process jobqueue.Local. Each
// answered line is stored as it completes (store.BatchResults), so a run that stops — a
// shutdown, a crash, a dead worker on another machine — is resumed by the next one without
// sending the lines already answered again. At the end the results are written, in input
// order, to an output file (lines answered with a 2xx status) and an error file (the
// others), both of purpose "batch_output".
package batch

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/switchyard-ai/switchyard/jobqueue"
	"github.com/switchyard-ai/switchyard/store"
)

// QueueKind is the kind of batches in a jobqueue.Queue.
const QueueKind = "batch"

// Options configure New. The zero value is ready to use (Executor must be set before
// Start, here or with SetExecutor).
type Options struct {
	// Queue is the job queue shared by every process (River on PostgreSQL); nil runs the
	// batches on an in-process jobqueue.Local that the service starts and stops.
	Queue jobqueue.Queue
	// Workers is how many batches this process runs at once. Without a Queue, values below
	// 1 mean 1; with one, 0 runs none here (an HTTP-only replica: the other processes'
	// workers run the batches it accepts).
	Workers int
	// Concurrency is how many lines of one batch run at once (default DefaultConcurrency).
	Concurrency int
	// MaxUnfinishedPerOwner bounds an owner's batches that have not ended (a Create beyond
	// is refused with a *LimitError): one key cannot queue so many that the others' wait
	// out their completion window. 0 means DefaultMaxUnfinishedPerOwner; negative, no bound.
	MaxUnfinishedPerOwner int
	// Executor answers the lines.
	Executor Executor
	// Clock is the time source (default time.Now); tests move it to expire batches.
	Clock func() time.Time
	// Window is how long "24h" lasts (default 24 hours): a batch not finished within it
	// after its creation expires with what it has done.
	Window time.Duration
	// SweepInterval is how often expired files are deleted (at Start and then this often;
	// default one hour; negative: never).
	SweepInterval time.Duration
	// ExpireInterval is how often the service looks for batches past their completion
	// window that no run has ended (queued behind busy workers, or handed back by a
	// stopped process) and ends them as expired, releasing their input files (at Start and
	// then this often; default DefaultExpireInterval; negative: never). A read (Get, List)
	// of such a batch ends it at once whatever this is.
	ExpireInterval time.Duration
	// MaxRetryWait bounds the wait before a line answered with a retryable 429 or server
	// error is sent again (default one minute).
	MaxRetryWait time.Duration
	// MaxTimeoutRetries bounds how often a line answered with a retryable server error
	// after one of its upstream calls timed out (Answer.TimedOut) is sent again: 0 means
	// DefaultMaxTimeoutRetries, negative never. Within the bound of the other server errors
	// (6), never above it.
	MaxTimeoutRetries int
	// Logger receives the service's lines (default slog.Default()).
	Logger *slog.Logger
}

// DefaultMaxTimeoutRetries is Options.MaxTimeoutRetries' default: a line whose upstream call
// timed out is sent twice at most. Each send already had the gateway's own retries and
// fallbacks and waited out their timeouts, and a call the gateway stopped waiting for may
// still have been answered and billed by the provider, so it is not sent as often as a
// line that failed at once (a restarting database, an overload: 6 times).
const DefaultMaxTimeoutRetries = 1

// Service runs batches. Create it with New, call Start to run them and Close to stop.
// It is safe for concurrent use.
type Service struct {
	st          *store.Store
	files       *Files
	q           jobqueue.Queue
	local       *jobqueue.Local // q when it is the service's own
	workers     int
	concurrency int
	perOwner    int // MaxUnfinishedPerOwner, defaulted
	now         func() time.Time
	window      time.Duration
	sweepEvery  time.Duration
	expireEvery time.Duration
	maxWait     time.Duration
	maxTimeout  int // MaxTimeoutRetries, defaulted (0: never)
	log         *slog.Logger

	mu      sync.Mutex
	exec    Executor
	started bool
	closed  bool
	stopBg  context.CancelFunc
	running map[string]*run // batch id → its run in this process
	// held is the batches a goroutine of this process claims, runs or expires: one at a
	// time per batch in a process (across processes the claim's heartbeat decides).
	held map[string]*holder
	wg   sync.WaitGroup
	runs sync.WaitGroup // the handle calls under way (Close lets their lines finish)
}

// New returns a service over st and files (which must use the same store).
func New(st *store.Store, files *Files, o Options) (*Service, error) {
	if st == nil || files == nil {
		return nil, errors.New("batch: New needs a store and its Files")
	}
	s := &Service{st: st, files: files, q: o.Queue, workers: o.Workers, concurrency: o.Concurrency, exec: o.Executor,
		now: o.Clock, window: o.Window, sweepEvery: o.SweepInterval, maxWait: o.MaxRetryWait, log: o.Logger,
		expireEvery: o.ExpireInterval, running: map[string]*run{}, held: map[string]*holder{}}
	if s.q == nil {
		s.local = jobqueue.NewLocal(0)
		s.q = s.local
		if s.workers < 1 {
			s.workers = 1
		}
	} else if s.workers < 0 {
		s.workers = 0
	}
	if s.concurrency < 1 {
		s.concurrency = DefaultConcurrency
	}
	switch {
	case o.MaxUnfinishedPerOwner == 0:
		s.perOwner = DefaultMaxUnfinishedPerOwner
	case o.MaxUnfinishedPerOwner > 0:
		s.perOwner = o.MaxUnfinishedPerOwner
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.window <= 0 {
		s.window = 24 * time.Hour
	}
	if s.sweepEvery == 0 {
		s.sweepEvery = time.Hour
	}
	if s.expireEvery == 0 {
		s.expireEvery = DefaultExpireInterval
	}
	if s.maxWait <= 0 {
		s.maxWait = time.Minute
	}
	switch {
	case o.MaxTimeoutRetries == 0:
		s.maxTimeout = DefaultMaxTimeoutRetries
	case o.MaxTimeoutRetries > 0:
		s.maxTimeout = min(o.MaxTimeoutRetries, maxLineServerRetries)
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	return s, nil
}

// Files returns the service's files.
func (s *Service) Files() *Files { return s.files }

// SetExecutor sets the Executor (before Start): the server sets itself.
func (s *Service) SetExecutor(e Executor) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.exec = e
}

// Start registers the batches' handler with the queue, enqueues the unfinished batches of
// the store (a restart resumes them; the queue ignores the ones it holds), starts the
// in-process queue when the service has its own, and the files' sweep. ctx bounds the
// background work; Close stops it.
func (s *Service) Start(ctx context.Context) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	if s.started {
		s.mu.Unlock()
		return errors.New("batch: already started")
	}
	if s.exec == nil {
		s.mu.Unlock()
		return ErrNoExecutor
	}
	s.started = true
	bg, cancel := context.WithCancel(ctx)
	s.stopBg = cancel
	s.mu.Unlock()
	if err := s.q.Register(QueueKind, jobqueue.Kind{Workers: s.workers, Run: s.handle, Dead: s.dead}); err != nil {
		return fmt.Errorf("batch: %w", err)
	}
	if s.local != nil {
		// Not bg: a signal ends bg at once, and the lines in flight must outlive it until
		// Close has let them finish (Close stops the queue).
		if err := s.local.Start(context.WithoutCancel(bg)); err != nil {
			return fmt.Errorf("batch: %w", err)
		}
	}
	if err := jobqueue.EnqueueUnfinished[record](ctx, s.st, store.Batches, s.q, QueueKind); err != nil {
		return fmt.Errorf("batch: %w", err)
	}
	if s.sweepEvery > 0 {
		s.wg.Add(1)
		go s.sweepLoop(bg)
	}
	if s.expireEvery > 0 {
		s.wg.Add(1)
		go s.expireLoop(bg)
	}
	return nil
}

// Close stops the batches this process runs — no more lines are sent, those in flight may
// finish within half of ctx's time (when it has a deadline) and are then cut; each batch is handed back, to be
// resumed by the next run, here after a restart or by another worker — and waits for them
// until ctx ends.
func (s *Service) Close(ctx context.Context) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	runs := make([]*run, 0, len(s.running))
	for _, r := range s.running {
		runs = append(runs, r)
	}
	stop := s.stopBg
	s.mu.Unlock()
	// No more lines are sent. Those in flight — their upstream calls are being paid for —
	// may finish and be kept within half of ctx's time when it has a deadline; then what
	// is left is cut, to be sent again by the next run.
	for _, r := range runs {
		r.stop(endShutdown)
	}
	if dl, ok := ctx.Deadline(); ok {
		ran := make(chan struct{})
		go func() { s.runs.Wait(); close(ran) }()
		drain, cancel := context.WithDeadline(ctx, time.Now().Add(time.Until(dl)/2))
		select {
		case <-ran:
		case <-drain.Done():
		}
		cancel()
	}
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	for _, r := range runs {
		r.shutdown(errShutdown)
	}
	if stop != nil {
		stop()
	}
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = fmt.Errorf("batch: close: %w", ctx.Err())
	}
	if s.local != nil {
		if serr := s.local.Stop(ctx); serr != nil && err == nil {
			err = serr
		}
	}
	return err
}

// errShutdown is the cause a run stops with when the service closes.
var errShutdown = errors.New("batch: service closing")

// sweepLoop deletes expired files at start and every sweepEvery until ctx ends.
func (s *Service) sweepLoop(ctx context.Context) {
	defer s.wg.Done()
	t := time.NewTicker(s.sweepEvery)
	defer t.Stop()
	for {
		n, err := s.files.Sweep(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			s.log.Warn("batch: sweep expired files", "err", err)
		case n > 0:
			s.log.Info("batch: deleted expired files", "files", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// newBatchID returns a new batch id: "batch_" and 24 hex digits.
func newBatchID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "batch_" + hex.EncodeToString(b[:])
}

// Create checks req and queues a batch of owner's file req.InputFileID, run as the key
// that credential stands for (the server's, stored with the batch and never shown). A bad
// request is a *ValidationError naming the field; an input file that is not owner's a
// *ValidationError naming input_file_id.
func (s *Service) Create(ctx context.Context, owner, credential string, req CreateRequest) (Batch, error) {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return Batch{}, ErrClosed
	}
	if err := checkCreate(&req); err != nil {
		return Batch{}, err
	}
	now := s.now().UTC()
	rec := record{ID: newBatchID(), Owner: owner, Credential: credential, Endpoint: req.Endpoint,
		InputFileID: req.InputFileID, CompletionWindow: CompletionWindow, Metadata: req.Metadata,
		Status: StatusValidating, CreatedAt: now, ExpiresAt: now.Add(s.window)}
	if req.OutputExpiresAfter != nil {
		rec.OutputExpiry = req.OutputExpiresAfter.Seconds
	}
	enqueued := false
	err := s.st.Update(ctx, func(tx store.Tx) error {
		enqueued = false
		f, err := s.files.get(ctx, tx, owner, req.InputFileID)
		if err != nil {
			var nf *NotFoundError
			if errors.As(err, &nf) {
				return invalid("input_file_id", "input_file_id names no file of this key: %q (upload it with POST /v1/files, purpose \"batch\")", req.InputFileID)
			}
			return err
		}
		if f.Purpose != PurposeBatch || f.Input == nil {
			return invalid("input_file_id", "input_file_id %s has purpose %q: a batch reads a file of purpose \"batch\"", f.ID, f.Purpose)
		}
		for _, u := range slices.Sorted(maps.Keys(f.Input.URLs)) {
			if u != req.Endpoint {
				line := f.Input.URLs[u]
				return &ValidationError{Param: "input_file_id", Line: line,
					Message: fmt.Sprintf("the request's url is %q, but the batch's endpoint is %q: every line's url must be the batch's endpoint", u, req.Endpoint)}
			}
		}
		rec.Total = f.Input.Requests
		// Counted in the creating transaction: concurrent creates cannot pass it together.
		if n, err := jobqueue.CountUnfinished[record](ctx, tx, store.Batches, batchKind, owner, s.perOwner); err != nil {
			return err
		} else if s.perOwner > 0 && n >= s.perOwner {
			return &LimitError{Limit: s.perOwner, Active: n}
		}
		if err := store.PutJSON(ctx, tx, store.Batches, rec.ID, rec); err != nil {
			return err
		}
		if err := store.PutOwned(ctx, tx, rec.ref()); err != nil {
			return err
		}
		if err := holdTx(ctx, tx, &f, rec.ID); err != nil {
			return err
		}
		// On PostgreSQL the queue entry commits with the record.
		if te, ok := s.q.(jobqueue.TxEnqueuer); ok {
			enqueued, err = te.EnqueueTx(ctx, tx, QueueKind, rec.ID)
			return err
		}
		return nil
	})
	if err != nil {
		var ve *ValidationError
		if errors.As(err, &ve) {
			return Batch{}, ve
		}
		return Batch{}, fmt.Errorf("batch: create: %w", err)
	}
	if !enqueued {
		if err := s.q.Enqueue(ctx, QueueKind, rec.ID); err != nil {
			// Stored but not queued: Start enqueues it again at the next start.
			s.log.Error("batch: queue the batch (it runs after the next start)", "batch", rec.ID, "err", err)
		}
	}
	s.log.Info("batch: created", "batch", rec.ID, "endpoint", rec.Endpoint, "requests", rec.Total)
	return rec.object(), nil
}

// checkCreate validates a create request on its face.
func checkCreate(req *CreateRequest) error {
	if req.InputFileID == "" {
		return invalid("input_file_id", "input_file_id is required: the id of a file uploaded with purpose \"batch\"")
	}
	if !slices.Contains(Endpoints, req.Endpoint) {
		if req.Endpoint == "" {
			return invalid("endpoint", "endpoint is required: one of %s", endpointList)
		}
		return invalid("endpoint", "endpoint must be one of %s (the endpoints this server runs batches of), got %q", endpointList, req.Endpoint)
	}
	if req.CompletionWindow != CompletionWindow {
		return invalid("completion_window", "completion_window must be \"24h\" (the only window), got %q", req.CompletionWindow)
	}
	if len(req.Metadata) > MaxMetadataPairs {
		return invalid("metadata", "metadata holds at most %d pairs, got %d", MaxMetadataPairs, len(req.Metadata))
	}
	for _, k := range slices.Sorted(maps.Keys(req.Metadata)) {
		if utf8.RuneCountInString(k) > MaxMetadataKey {
			return invalid("metadata", "metadata key %q is over %d characters", clip(k, 80), MaxMetadataKey)
		}
		if utf8.RuneCountInString(req.Metadata[k]) > MaxMetadataValue {
			return invalid("metadata", "metadata[%q] is over %d characters", k, MaxMetadataValue)
		}
	}
	return req.OutputExpiresAfter.check("output_expires_after")
}

// Get returns owner's batch id. The counts of a batch running in this process are its
// run's latest; elsewhere the record's, refreshed every second or so by the run.
func (s *Service) Get(ctx context.Context, owner, id string) (Batch, error) {
	rec, err := s.get(ctx, s.st, owner, id)
	if err != nil {
		return Batch{}, err
	}
	if s.overdue(&rec) {
		rec = s.expireRead(ctx, rec)
	}
	s.overlay(&rec)
	return rec.object(), nil
}

// overlay puts the counts of rec's run in this process, if any, on rec.
func (s *Service) overlay(rec *record) {
	s.mu.Lock()
	r := s.running[rec.ID]
	s.mu.Unlock()
	if r != nil && !rec.Status.terminal() {
		r.mu.Lock()
		rec.Completed, rec.Failed, rec.Usage, rec.CostUSD = r.completed, r.failed, r.usage, r.cost
		r.mu.Unlock()
	}
}

// get reads owner's batch id through r.
func (s *Service) get(ctx context.Context, r store.Reader, owner, id string) (record, error) {
	if strings.TrimSpace(id) == "" {
		return record{}, invalid("batch_id", "batch_id is required")
	}
	rec, err := store.GetJSON[record](ctx, r, store.Batches, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && !store.Owns(owner, rec.Owner)) {
		return record{}, &NotFoundError{What: "batch", ID: id}
	}
	if err != nil {
		return record{}, fmt.Errorf("batch: read batch %s: %w", id, err)
	}
	return rec, nil
}

// List returns a page of owner's batches, newest first: after is the id of the last batch
// of the previous page ("": the first page), limit 1 to MaxBatchListLimit (0:
// DefaultBatchListLimit).
func (s *Service) List(ctx context.Context, owner, after string, limit int) (BatchList, error) {
	if limit == 0 {
		limit = DefaultBatchListLimit
	}
	if limit < 1 || limit > MaxBatchListLimit {
		return BatchList{}, invalid("limit", "limit must be 1 to %d, got %d", MaxBatchListLimit, limit)
	}
	cursor := ""
	if after != "" {
		rec, err := s.get(ctx, s.st, owner, after)
		if err != nil {
			return BatchList{}, invalid("after", "after names no batch of this key: %q", after)
		}
		cursor = store.CursorAfter(rec.ref())
	}
	page, next, err := store.ListOwned(ctx, s.st, store.OwnedQuery{Kind: batchKind, Owner: owner, Cursor: cursor, Limit: limit},
		func(id string) (Batch, bool, error) {
			rec, err := store.GetJSON[record](ctx, s.st, store.Batches, id)
			if errors.Is(err, store.ErrNotFound) {
				return Batch{}, false, nil
			}
			if err != nil {
				return Batch{}, false, err
			}
			if rec.Owner == owner && s.overdue(&rec) {
				rec = s.expireRead(ctx, rec)
			}
			s.overlay(&rec)
			return rec.object(), rec.Owner == owner, nil
		})
	if err != nil {
		return BatchList{}, fmt.Errorf("batch: list batches: %w", err)
	}
	out := BatchList{Object: "list", Data: page, HasMore: next != ""}
	if out.Data == nil {
		out.Data = []Batch{}
	}
	if len(page) > 0 {
		out.FirstID, out.LastID = page[0].ID, page[len(page)-1].ID
	}
	return out, nil
}

// Cancel cancels owner's batch id. A batch no worker has started ends cancelled at once; a
// running one becomes cancelling: its run sends no more lines, lets the lines in flight
// finish (within about a second when it runs in another process), writes what it has to
// its output and error files and ends cancelled. Cancelling a cancelling batch answers it
// as it is; one that has ended, or is past its completion window (it ends expired), is a
// *ConflictError.
func (s *Service) Cancel(ctx context.Context, owner, id string) (Batch, error) {
	// A batch past its window has expired, whether or not it was read since: it is ended
	// first, and then cannot be cancelled (as OpenAI answers).
	if rec, err := s.get(ctx, s.st, owner, id); err == nil && s.overdue(&rec) {
		s.expireRead(ctx, rec)
	}
	var rec record
	err := s.st.Update(ctx, func(tx store.Tx) error {
		var err error
		if rec, err = s.get(ctx, tx, owner, id); err != nil {
			return err
		}
		if (rec.Status == StatusValidating || rec.Status == StatusInProgress) && s.overdue(&rec) {
			// Its window has passed (a live run, here or in another process, ends it
			// expired within a heartbeat): it is no longer cancellable.
			return &ConflictError{Message: fmt.Sprintf("batch %s is past its completion window (expired at %s) and ends expired: only a validating or in_progress batch within its window can be cancelled", rec.ID, rec.ExpiresAt.UTC().Format(time.RFC3339))}
		}
		now := s.now().UTC()
		switch rec.Status {
		case StatusValidating:
			rec.Status, rec.CancellingAt, rec.CancelledAt = StatusCancelled, now, now
			if err := releaseTx(ctx, tx, rec.InputFileID, rec.ID); err != nil {
				return err
			}
		case StatusInProgress:
			rec.Status, rec.CancellingAt = StatusCancelling, now
		case StatusCancelling:
			return nil
		default:
			return &ConflictError{Message: fmt.Sprintf("batch %s is %s: only a validating or in_progress batch can be cancelled", rec.ID, rec.Status)}
		}
		return store.PutJSON(ctx, tx, store.Batches, rec.ID, rec)
	})
	if err != nil {
		var nf *NotFoundError
		var ce *ConflictError
		var ve *ValidationError
		if errors.As(err, &nf) || errors.As(err, &ce) || errors.As(err, &ve) {
			return Batch{}, err
		}
		return Batch{}, fmt.Errorf("batch: cancel %s: %w", id, err)
	}
	switch rec.Status {
	case StatusCancelled:
		if err := s.q.Cancel(ctx, QueueKind, rec.ID); err != nil { // drop the waiting job
			s.log.Warn("batch: drop a cancelled batch from the queue", "batch", rec.ID, "err", err)
		}
		s.log.Info("batch: cancelled before it started", "batch", rec.ID)
	case StatusCancelling:
		s.mu.Lock()
		r := s.running[rec.ID]
		s.mu.Unlock()
		if r != nil {
			r.stop(endCancelled)
		}
		s.log.Info("batch: cancelling", "batch", rec.ID)
	}
	s.overlay(&rec)
	return rec.object(), nil
}

// dead reports whether batch id is claimed by a dead run (its heartbeat is stale and no
// run of this process has it), and how many times it was started: the queue's sweep hands
// such a batch to another worker.
func (s *Service) dead(ctx context.Context, id string) (bool, int, error) {
	rec, err := store.GetJSON[record](ctx, s.st, store.Batches, id)
	if errors.Is(err, store.ErrNotFound) {
		return false, 0, nil
	}
	if err != nil {
		return false, 0, err
	}
	s.mu.Lock()
	local := s.held[id] != nil
	s.mu.Unlock()
	return rec.Running() && !local && jobqueue.IsStale(s.q, &rec), rec.Starts, nil
}
