// Package trainer runs custom router training jobs and serves their predictions.
//
// A [Service] takes training requests (dataset URLs, or a file uploaded with the request:
// [Service.SubmitUpload]), runs them on a worker pool fed by a
// bounded queue, and keeps jobs (store.TrainingJobs), router metadata (store.RouterModels)
// and fitted weights (store.RouterWeights, the bytes of an inference.Model) in a
// *store.Store. Every job and model belongs to an owner (the API key id the server passes);
// another owner's ids answer ErrNotFound.
//
// A job fetches each file (JSON array, JSONL or CSV; an upload may also be Not Diamond's
// joint CSV, [FormatNotDiamond]) or reads its upload from the store, validates the rows, fits a router on
// a stratified 80% split to score it on the other 20% (top-1/top-3 hit rate, accuracy, and
// the always-the-most-frequent-model baseline), then fits the final router on all rows.
//
// Restarts: Start re-queues jobs it finds queued or running in the store (a running job was
// interrupted by the previous process); a job interrupted MaxAttempts times is failed with
// a message instead, so no job stays running forever.
//
// Several processes: with [WithQueue] (a jobqueue.Queue on the shared PostgreSQL store)
// any process accepts jobs and exactly one worker, in whichever process, runs each; a job
// whose worker dies runs again elsewhere, or fails after MaxAttempts, by the same rules.
//
// Lifecycle: a model unused for a year (a calendar year from its last use, 365 or 366
// days; WithLifecycle may set another period) is archived by [Service.Cleanup] and
// from then on answers ErrArchived (which matches ErrNotFound: a 404 whose message says
// the model was archived). A later Cleanup, RemoveAfter (7 days) after archiving, deletes
// the model's weights and record.
package trainer

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"go.opentelemetry.io/otel/trace"
	"log/slog"
	"math"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/switchyard-ai/switchyard/fetch"
	"github.com/switchyard-ai/switchyard/inference"
	"github.com/switchyard-ai/switchyard/jobqueue"
	"github.com/switchyard-ai/switchyard/store"
)

// Limits and defaults.
const (
	// MaxInputs is the most inputs one Predict call takes.
	MaxInputs = 500
	// MaxDataURLs is the most dataset files one job takes.
	MaxDataURLs = 100
	// MinRows is the fewest usable rows a job trains on.
	MinRows = 10
	// MinClasses is the fewest distinct models a job trains on.
	MinClasses = 2
	// MaxClasses is the most distinct models a job trains on (inference.MaxClasses):
	// training memory grows with rows × models, so a data set naming more fails.
	MaxClasses = inference.MaxClasses
	// MaxRows is the most rows a job reads across its files; with MaxClasses it caps a
	// job's training memory (BENCHMARKS.md gives the peak for the largest allowed job).
	MaxRows = 50_000
	// MaxDatasetBytes is the most bytes a job reads across its files (after any transfer
	// decompression): each file is also capped alone by the fetcher, but a job may name
	// MaxDataURLs of them and holds what it parsed until it trains.
	MaxDatasetBytes = 200 << 20
	// MaxAttempts is how many times a job may be started before restarts fail it.
	MaxAttempts = 3
	// DefaultVersion is the version label in responses.
	DefaultVersion = "v1"
	// DefaultArchiveAfter is the shortest inactivity after which Cleanup archives a model by
	// default: it archives one calendar year after the last use, which is 366 days when the
	// year holds a 29 February (the spec's "1 year of inactivity").
	DefaultArchiveAfter = 365 * 24 * time.Hour
	// DefaultRemoveAfter is how long an archived model is kept before Cleanup removes it.
	DefaultRemoveAfter = 7 * 24 * time.Hour
	// HoldoutFraction is the share of rows held out to score a router.
	HoldoutFraction = 0.2
	// DefaultJobsPerOwner is how many training jobs one owner (API key) may have queued or
	// running at once (WithJobsPerOwner); one more fails with a *JobLimitError, so one key
	// cannot fill the queue shared by every key.
	DefaultJobsPerOwner = 4
)

// Service runs training jobs and predictions. Create it with New, call Start to run the
// workers and Close to stop them. It is safe for concurrent use.
type Service struct {
	store    *store.Store
	fetcher  *fetch.Fetcher
	workers  int
	queue    chan string
	now      func() time.Time
	log      *slog.Logger
	version  string
	embedder string
	onnxDir  string
	seed     int64
	cache    inference.EmbeddingCache
	fitOpts  func(*inference.FitOptions)
	prices   func(model string) (float64, bool)
	// maxLoss is the quality a router's default tradeoff tolerance may give up
	// (WithMaxQualityLoss; MaxQualityLoss when 0).
	maxLoss float64

	archiveAfter, removeAfter, cleanupEvery time.Duration

	models *modelCache

	perOwner int

	// q, when set (WithQueue), is the queue shared by every process; nil runs jobs on the
	// in-process pool.
	q jobqueue.Queue

	// jobMu serializes a job's queued → running and cancel transitions, so a cancel never
	// races the worker picking the job up.
	jobMu   sync.Mutex
	running map[string]context.CancelCauseFunc // running job id → cancel (under jobMu)
	// runDone holds a channel per running job, closed once its run has written its outcome
	// (under jobMu); DeleteJob waits on it.
	runDone map[string]chan struct{}

	// jobsIndexed and modelsIndexed backfill the owner index of records stored before it.
	jobsIndexed, modelsIndexed store.OwnedBackfill

	mu      sync.Mutex
	started bool
	closed  bool
	cancel  context.CancelFunc
	runCtx  context.Context // the workers' context (Start's); nil before Start
	wg      sync.WaitGroup
	pending map[string]string // ids in the queue or running → owner; avoids double runs and counts per owner
	// tracer records job stages (WithTracer); nil: none.
	tracer trace.Tracer
	// onEnd hears of each job this process ran to its end (WithJobEnded); nil: no one.
	onEnd func(JobStat)
}

// Option configures a Service.
type Option func(*Service)

// WithFetcher sets the fetcher for dataset URLs (default: a zero fetch.Fetcher — guarded,
// no local URLs).
func WithFetcher(f *fetch.Fetcher) Option { return func(s *Service) { s.fetcher = f } }

// WithWorkers sets how many jobs this process runs at once (default 1; training uses all
// cores anyway). With WithQueue, 0 runs none here: the process accepts and enqueues jobs
// for the other processes' workers. Without it, values below 1 mean 1.
func WithWorkers(n int) Option { return func(s *Service) { s.workers = n } }

// WithQueueSize sets how many jobs may wait; Submit beyond it fails with ErrQueueFull
// (default 64).
func WithQueueSize(n int) Option { return func(s *Service) { s.queue = make(chan string, max(n, 1)) } }

// WithJobsPerOwner sets how many jobs one owner may have queued or running at once
// (default DefaultJobsPerOwner); Submit beyond it fails with a *JobLimitError.
func WithJobsPerOwner(n int) Option { return func(s *Service) { s.perOwner = n } }

// WithClock sets the clock (default time.Now); tests use it to age models.
func WithClock(now func() time.Time) Option { return func(s *Service) { s.now = now } }

// WithLogger sets the logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(s *Service) { s.log = l } }

// WithVersion sets the version label of responses (default DefaultVersion).
func WithVersion(v string) Option { return func(s *Service) { s.version = v } }

// WithEmbedder selects the embedder by inference name ("" or "ngram" for the default
// n-gram TF-IDF, "onnx" with WithONNXModelDir).
func WithEmbedder(name string) Option { return func(s *Service) { s.embedder = name } }

// WithONNXModelDir sets the directory of the ONNX sentence-embedding model.
func WithONNXModelDir(dir string) Option { return func(s *Service) { s.onnxDir = dir } }

// WithSeed fixes the evaluation split and fitting seed (default 42).
func WithSeed(seed int64) Option { return func(s *Service) { s.seed = seed } }

// WithEmbeddingCache sets the embedding cache (default: inference.NewStoreCache on the
// service's store); nil turns caching off.
func WithEmbeddingCache(c inference.EmbeddingCache) Option {
	return func(s *Service) { s.cache = c }
}

// WithFitOptions lets the caller adjust the inference.FitOptions of every fit (for
// example the L2 grid or iteration cap) after the service has filled them in.
func WithFitOptions(fn func(*inference.FitOptions)) Option {
	return func(s *Service) { s.fitOpts = fn }
}

// WithPrices sets how a trained router's models are priced when its tradeoff frontier is
// measured (see ModelDetails.Tradeoff): price returns a model's price, in USD per 1M
// tokens (mean of input and output), and whether it is known. A job's own JobOptions
// .ModelPrices take precedence. Without prices the frontier has no price column and the
// router's default tolerance is routing's global default.
func WithPrices(price func(model string) (float64, bool)) Option {
	return func(s *Service) { s.prices = price }
}

// WithModelCacheSize sets how many decoded router models stay in memory (default 8).
func WithModelCacheSize(n int) Option { return func(s *Service) { s.models = newModelCache(n) } }

// WithLifecycle sets the inactivity before archiving and the delay before an archived
// model is removed (defaults one calendar year, see DefaultArchiveAfter, and
// DefaultRemoveAfter). An archiveAfter of 0 keeps the calendar year.
func WithLifecycle(archiveAfter, removeAfter time.Duration) Option {
	return func(s *Service) { s.archiveAfter, s.removeAfter = archiveAfter, removeAfter }
}

// WithCleanupInterval makes Start run Cleanup at once (a server restarted more often than
// the interval still runs the lifecycle) and then every d (e.g. weekly); 0, the default,
// leaves it to the caller.
func WithCleanupInterval(d time.Duration) Option { return func(s *Service) { s.cleanupEvery = d } }

// WithMaxQualityLoss sets how much validation mean score (0-1; 0.01 is one point) a trained
// router's default tradeoff tolerance may give up against the no-tradeoff pick; the
// default is MaxQualityLoss. A larger loss buys a cheaper default pick (the frontier in the
// router's model details shows what each tolerance costs and saves); a value outside
// (0, 1) keeps the default.
func WithMaxQualityLoss(loss float64) Option {
	return func(s *Service) {
		if loss > 0 && loss < 1 {
			s.maxLoss = loss
		}
	}
}

// New returns a Service over st. Call Start to run jobs.
func New(st *store.Store, opts ...Option) (*Service, error) {
	if st == nil {
		return nil, ErrNoStore
	}
	s := &Service{
		store:        st,
		workers:      1,
		now:          time.Now,
		version:      DefaultVersion,
		seed:         42,
		archiveAfter: 0, // one calendar year (archiveDue)
		removeAfter:  DefaultRemoveAfter,
		pending:      map[string]string{},
		running:      map[string]context.CancelCauseFunc{},
		runDone:      map[string]chan struct{}{},
		perOwner:     DefaultJobsPerOwner,
		cache:        inference.NewStoreCache(st),
	}
	for _, o := range opts {
		o(s)
	}
	if s.fetcher == nil {
		s.fetcher = &fetch.Fetcher{}
	}
	if s.queue == nil {
		s.queue = make(chan string, 64)
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.models == nil {
		s.models = newModelCache(8)
	}
	if s.workers < 1 && (s.q == nil || s.workers < 0) {
		s.workers = 1
	}
	if s.perOwner < 1 {
		s.perOwner = DefaultJobsPerOwner
	}
	return s, nil
}

// Version returns the version label the service puts in responses.
func (s *Service) Version() string { return s.version }

// Start recovers unfinished jobs from the store and starts the workers. ctx bounds the
// workers' whole lifetime, not only the start: when it is cancelled the workers stop, and
// Submit then answers ErrClosed (the accepted jobs stay queued in the store for the next
// Service to Start on it). Close is the usual way to stop.
func (s *Service) Start(ctx context.Context) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	if s.started {
		s.mu.Unlock()
		return ErrStarted
	}
	s.started = true
	ctx, s.cancel = context.WithCancel(ctx)
	s.runCtx = ctx
	s.mu.Unlock()

	if s.q != nil {
		if err := s.startShared(ctx); err != nil {
			s.cancel()
			return err
		}
		if s.cleanupEvery > 0 {
			s.wg.Add(1)
			go s.cleanupLoop(ctx)
		}
		return nil
	}
	recovered, err := s.recover(ctx)
	if err != nil {
		s.cancel()
		return err
	}
	for range s.workers {
		s.wg.Add(1)
		go s.worker(ctx)
	}
	if len(recovered) > 0 {
		// Feed recovered jobs without the queue bound: they were accepted before.
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			for _, id := range recovered {
				select {
				case s.queue <- id:
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	if s.cleanupEvery > 0 {
		s.wg.Add(1)
		go s.cleanupLoop(ctx)
	}
	return nil
}

// Close stops the workers and waits for them. A job interrupted by Close is put back to
// queued, so the next Start runs it again (with WithQueue: the next worker, in any
// process).
func (s *Service) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	cancel := s.cancel
	s.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	s.jobMu.Lock()
	for _, c := range s.running { // the queue's handlers do not run under the service's ctx
		c(errShutdown)
	}
	s.jobMu.Unlock()
	s.wg.Wait()
	s.models.clear()
	return nil
}

// recover lists unfinished jobs: queued ones go back in the queue; running ones (the
// previous process died or stopped mid-job) are re-queued, or failed after MaxAttempts.
func (s *Service) recover(ctx context.Context) ([]string, error) {
	entries, err := s.store.List(ctx, store.TrainingJobs, store.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("trainer: list jobs: %w", err)
	}
	var ids []string
	for _, e := range entries {
		var j jobRecord
		if err := decodeJSON(e.Value, &j); err != nil {
			s.log.Warn("trainer: skipping unreadable job record", "key", e.Key, "err", err)
			continue
		}
		if j.State == StateRunning {
			// Re-queue it (or fail it) in a transaction that reads the record again: a
			// DeleteJob since the list must not be undone by writing the listed copy back.
			var gone bool
			if j, gone, err = s.recoverRunning(ctx, j); err != nil {
				return nil, err
			}
			if gone {
				s.log.Info("trainer: interrupted job deleted before it was re-queued", "job", j.ID)
				continue
			}
		}
		if j.State != StateQueued {
			continue
		}
		s.mu.Lock()
		_, already := s.pending[j.ID] // submitted to this process before Start
		s.pending[j.ID] = j.Owner
		s.mu.Unlock()
		if !already {
			ids = append(ids, j.ID)
		}
	}
	return ids, nil
}

// recoverRunning re-queues listed, a job a previous process left running, or fails it
// after MaxAttempts, in one transaction over the record as it is now. gone reports that
// the record was deleted since it was listed (nothing is written, and it is not to be
// queued); otherwise j is the record as the transaction left it (queued, failed, or as
// another writer left it when it no longer reads running).
func (s *Service) recoverRunning(ctx context.Context, listed jobRecord) (j jobRecord, gone bool, err error) {
	failed := false
	err = s.store.Update(ctx, func(tx store.Tx) error {
		gone, failed = false, false
		cur, err := store.GetJSON[jobRecord](ctx, tx, store.TrainingJobs, listed.ID)
		if errors.Is(err, store.ErrNotFound) {
			gone = true
			return nil
		}
		if err != nil {
			return err
		}
		j = cur
		if j.State != StateRunning {
			return nil
		}
		if j.Attempts >= MaxAttempts {
			j.State = StateFailed
			j.CompletedAt = s.now()
			j.ErrorMessage = fmt.Sprintf("job was interrupted %d times (its server or worker died while running it); submit it again", j.Attempts)
			j.ErrorKind = ErrorKindInterrupted
			failed = true
			if err := dropUploadTx(ctx, tx, &j); err != nil {
				return err
			}
		} else {
			j.State = StateQueued
		}
		return store.PutJSON(ctx, tx, store.TrainingJobs, j.ID, j)
	})
	switch {
	case err != nil && failed:
		return listed, false, fmt.Errorf("trainer: fail interrupted job %s: %w", listed.ID, err)
	case err != nil:
		return listed, false, fmt.Errorf("trainer: re-queue job %s: %w", listed.ID, err)
	case gone:
		return listed, true, nil
	case failed:
		s.log.Warn("trainer: failed job interrupted too often", "job", j.ID, "attempts", j.Attempts)
	case j.State == StateQueued:
		s.log.Info("trainer: re-queued interrupted job", "job", j.ID, "attempts", j.Attempts)
	}
	return j, false, nil
}

func (s *Service) worker(ctx context.Context) {
	defer s.wg.Done()
	for {
		select {
		case <-ctx.Done():
			return
		case id := <-s.queue:
			s.run(ctx, id, false)
			s.mu.Lock()
			delete(s.pending, id)
			s.mu.Unlock()
		}
	}
}

// cleanupLoop runs Cleanup at start-up, so a server restarted more often than the interval
// still runs the lifecycle, and then every cleanupEvery.
func (s *Service) cleanupLoop(ctx context.Context) {
	defer s.wg.Done()
	t := time.NewTicker(s.cleanupEvery)
	defer t.Stop()
	for {
		if rep, err := s.Cleanup(ctx); err != nil {
			s.log.Log(context.Background(), jobqueue.FailureLevel(err), "trainer: cleanup", "err", err)
		} else {
			s.log.Info("trainer: cleanup", "archived", rep.Archived, "removed", rep.Removed, "next_in", s.cleanupEvery.String())
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// JobOptions are a training job's optional settings beyond its dataset URLs.
type JobOptions struct {
	// ModelPrices prices the dataset's models, "provider/model" → USD per 1M tokens (mean
	// of input and output), for the tradeoff frontier; models not listed are priced by
	// WithPrices. Each price must be finite and >= 0.
	ModelPrices map[string]float64
	// InTx, when set, runs inside the store transaction that queues the job, with the new
	// job's id, so that what it writes (tx is a transaction of the service's store) is
	// kept only with the job: its error refuses the submission, nothing is stored, and
	// the error is returned wrapped. It may run more than once (store.Driver.Update), so
	// it must act only through tx. Not Diamond's trainCustomRouter binds a preference to
	// the job with it (routing.TrainingBinding).
	InTx func(ctx context.Context, tx store.Tx, jobID string) error
}

// MaxModelPrices is the most entries JobOptions.ModelPrices may hold.
const MaxModelPrices = 1000

// Submit validates dataURLs and queues a training job for owner. A request invalid on its
// face returns a *ValidationError naming Data_URLs; a full queue returns ErrQueueFull; an
// owner who already has the per-owner number of jobs queued or running gets a
// *JobLimitError (matching ErrTooManyJobs).
func (s *Service) Submit(ctx context.Context, owner string, dataURLs []string) (Job, error) {
	return s.SubmitWithOptions(ctx, owner, dataURLs, JobOptions{})
}

// SubmitWithOptions is Submit with JobOptions; a bad option is a *ValidationError naming
// model_prices, and an error of opts.InTx refuses the job (returned wrapped).
func (s *Service) SubmitWithOptions(ctx context.Context, owner string, dataURLs []string, opts JobOptions) (Job, error) {
	urls, err := s.checkURLs(dataURLs)
	if err != nil {
		return Job{}, err
	}
	if err := checkPrices(opts.ModelPrices); err != nil {
		return Job{}, err
	}
	j := s.newJob(owner, urls, opts)
	return s.enqueue(ctx, j, inTx(ctx, opts, j.ID))
}

// Store is the store the service keeps its jobs in: JobOptions.InTx's transactions are of
// this store.
func (s *Service) Store() *store.Store { return s.store }

// inTx is opts.InTx as enqueue's extra transaction step for job jobID (nil without one).
func inTx(ctx context.Context, opts JobOptions, jobID string) func(store.Tx) error {
	if opts.InTx == nil {
		return nil
	}
	return func(tx store.Tx) error { return opts.InTx(ctx, tx, jobID) }
}

// checkPrices validates JobOptions.ModelPrices.
func checkPrices(prices map[string]float64) error {
	if len(prices) > MaxModelPrices {
		return invalid("model_prices", "must hold at most %d models, got %d", MaxModelPrices, len(prices))
	}
	for m, p := range prices {
		if !ValidModelName(m) {
			return invalid("model_prices", "key %q is not a provider/model name", m)
		}
		if !(p >= 0) || math.IsInf(p, 0) {
			return invalid(fmt.Sprintf("model_prices[%q]", m), "must be a finite price >= 0, got %v", p)
		}
	}
	return nil
}

// newJob is a new queued job of owner on urls.
func (s *Service) newJob(owner string, urls []string, opts JobOptions) jobRecord {
	return jobRecord{
		ID:          "tj_" + newID(),
		Owner:       owner,
		DataURLs:    urls,
		Prices:      opts.ModelPrices,
		GuardedURLs: !s.fetcher.AllowLocal,
		State:       StateQueued,
		CreatedAt:   s.now(),
	}
}

// enqueue stores new job j, with extra's writes in the same transaction (an upload), and
// queues it: on the shared queue (WithQueue), else on this process's pool within the queue
// bound and the owner's limit.
func (s *Service) enqueue(ctx context.Context, j jobRecord, extra func(tx store.Tx) error) (Job, error) {
	if s.q != nil {
		return s.submitShared(ctx, j, extra)
	}
	owner := j.Owner
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || (s.runCtx != nil && s.runCtx.Err() != nil) {
		return Job{}, ErrClosed // closed, or Start's context ended: no worker would run it
	}
	if len(s.queue) >= cap(s.queue) {
		s.compactQueueLocked()
	}
	if len(s.queue) >= cap(s.queue) {
		return Job{}, ErrQueueFull
	}
	if n := s.activeLocked(owner); n >= s.perOwner {
		return Job{}, jobLimit(s.perOwner, n)
	}
	err := s.store.Update(ctx, func(tx store.Tx) error {
		if err := store.PutJSON(ctx, tx, store.TrainingJobs, j.ID, j); err != nil {
			return err
		}
		if extra != nil {
			if err := extra(tx); err != nil {
				return err
			}
		}
		return store.PutOwned(ctx, tx, j.ref())
	})
	if err != nil {
		return Job{}, fmt.Errorf("trainer: save job: %w", err)
	}
	// The lock is held, and only Submit adds to the queue beyond recovery, so the send
	// cannot block for long; select guards against the recovery feeder filling it.
	select {
	case s.queue <- j.ID:
		s.pending[j.ID] = owner
	default:
		dctx := context.WithoutCancel(ctx)
		_ = s.store.Update(dctx, func(tx store.Tx) error { return deleteJobTx(dctx, tx, &j) })
		return Job{}, ErrQueueFull
	}
	s.log.Info("trainer: job queued", "job", j.ID, "files", len(j.DataURLs), "uploaded", j.Upload != nil)
	return Job{TrainingJobID: j.ID, Status: j.State, Version: s.version}, nil
}

// compactQueueLocked drops from the queue the ids of jobs cancelled or deleted while
// queued (no longer pending; jobqueue.Compact); s.mu is held.
func (s *Service) compactQueueLocked() {
	unsent := jobqueue.Compact(s.queue, func(id string) bool { _, live := s.pending[id]; return live })
	for _, id := range unsent { // the recovery feeder, which sends without s.mu, took the room
		if s.runCtx == nil {
			// Not started: Start's recovery queues it from the store.
			delete(s.pending, id)
			continue
		}
		ctx := s.runCtx
		s.wg.Add(1)
		go func() { // as the recovery feeder does
			defer s.wg.Done()
			select {
			case s.queue <- id:
			case <-ctx.Done():
			}
		}()
	}
}

func (s *Service) checkURLs(dataURLs []string) ([]string, error) {
	if len(dataURLs) == 0 {
		return nil, invalid("Data_URLs", "must list at least one dataset URL")
	}
	if len(dataURLs) > MaxDataURLs {
		return nil, invalid("Data_URLs", "must list at most %d URLs, got %d", MaxDataURLs, len(dataURLs))
	}
	out := make([]string, len(dataURLs))
	for i, raw := range dataURLs {
		field := fmt.Sprintf("Data_URLs[%d]", i)
		raw = strings.TrimSpace(raw)
		if raw == "" {
			return nil, invalid(field, "must not be empty")
		}
		u, err := url.Parse(raw)
		if err != nil {
			var ue *url.Error
			if errors.As(err, &ue) {
				err = ue.Err // its message quotes the URL, credentials included
			}
			return nil, invalid(field, "is not a valid URL: %v", err)
		}
		switch strings.ToLower(u.Scheme) {
		case "http", "https":
			if u.Host == "" {
				return nil, invalid(field, "URL %q has no host", fetch.Redact(raw))
			}
		case "file":
			if !s.fetcher.AllowLocal {
				return nil, invalid(field, "file:// URLs are not allowed (the server runs without --allow-local-urls)")
			}
		default:
			if s.fetcher.AllowLocal {
				return nil, invalid(field, "URL %q must start with http://, https:// or file://", fetch.Redact(raw))
			}
			return nil, invalid(field, "URL %q must start with http:// or https://", fetch.Redact(raw))
		}
		out[i] = raw
	}
	return out, nil
}

// Status returns owner's job jobID.
func (s *Service) Status(ctx context.Context, owner, jobID string) (JobStatus, error) {
	if strings.TrimSpace(jobID) == "" {
		return JobStatus{}, invalid("task_id", "is required")
	}
	j, err := s.getJob(ctx, jobID)
	if err != nil {
		return JobStatus{}, err
	}
	if j.Owner != owner {
		return JobStatus{}, notFound("training job", jobID)
	}
	return j.status(s.version), nil
}

// cancelRunningLocked cancels running job j, in this process or (with a queue) another;
// jobMu is held.
func (s *Service) cancelRunningLocked(ctx context.Context, j *jobRecord) error {
	if c := s.running[j.ID]; c != nil {
		c(errCancelled)
	} else if s.q != nil {
		if err := s.cancelElsewhere(ctx, j); err != nil {
			return err
		}
	}
	s.log.Info("trainer: running job cancelled", "job", j.ID)
	return nil
}

// activeLocked counts owner's queued and running jobs; s.mu is held.
func (s *Service) activeLocked(owner string) int {
	n := 0
	for _, o := range s.pending {
		if o == owner {
			n++
		}
	}
	return n
}

// Cancel stops owner's queued or running job. The job ends failed (the spec's training
// states are queued, running, completed and failed, and clients poll until completed or
// failed) with an error_message saying it was cancelled; no router is saved. A queued job
// ends at once; a running one stops at its next cancellation point (the download or the
// fit) shortly after, and its status until then is still running. A job that already
// ended answers ErrFinished; another owner's or an unknown id answers ErrNotFound.
func (s *Service) Cancel(ctx context.Context, owner, jobID string) (JobStatus, error) {
	if strings.TrimSpace(jobID) == "" {
		return JobStatus{}, invalid("task_id", "is required")
	}
	s.jobMu.Lock()
	defer s.jobMu.Unlock()
	j, err := s.getJob(ctx, jobID)
	if err != nil {
		return JobStatus{}, err
	}
	if j.Owner != owner {
		return JobStatus{}, notFound("training job", jobID)
	}
	switch j.State {
	case StateQueued:
		// Only while still queued: a worker (maybe of another process) may claim it meanwhile.
		claimed := false
		err := s.store.Update(ctx, func(tx store.Tx) error {
			cur, err := store.GetJSON[jobRecord](ctx, tx, store.TrainingJobs, j.ID)
			if err != nil {
				return err
			}
			if claimed = cur.State != StateQueued; claimed {
				j = cur
				return nil
			}
			j = cur
			j.State = StateFailed
			j.CompletedAt = s.now()
			j.ErrorMessage, j.ErrorKind = cancelledBeforeStart, ErrorKindCancelled
			if err := dropUploadTx(ctx, tx, &j); err != nil {
				return err
			}
			return store.PutJSON(ctx, tx, store.TrainingJobs, j.ID, j)
		})
		if errors.Is(err, store.ErrNotFound) { // deleted meanwhile
			return JobStatus{}, notFound("training job", jobID)
		}
		if err != nil {
			return JobStatus{}, fmt.Errorf("trainer: cancel job %s: %w", j.ID, err)
		}
		if claimed {
			if j.State != StateRunning {
				return JobStatus{}, fmt.Errorf("%w: training job %s is %s", ErrFinished, j.ID, j.State)
			}
			if err := s.cancelRunningLocked(ctx, &j); err != nil {
				return JobStatus{}, err
			}
			return j.status(s.version), nil
		}
		if s.q != nil {
			if err := s.q.Cancel(ctx, QueueKind, j.ID); err != nil { // drop it from the queue
				s.log.Warn("trainer: drop cancelled job from the queue", "job", j.ID, "err", err)
			}
		}
		// It no longer counts against the owner; the worker skips it when it comes up.
		s.mu.Lock()
		delete(s.pending, j.ID)
		s.mu.Unlock()
		s.log.Info("trainer: queued job cancelled", "job", j.ID)
	case StateRunning:
		if err := s.cancelRunningLocked(ctx, &j); err != nil {
			return JobStatus{}, err
		}
	default:
		return JobStatus{}, fmt.Errorf("%w: training job %s is %s", ErrFinished, j.ID, j.State)
	}
	return j.status(s.version), nil
}

func (s *Service) getJob(ctx context.Context, id string) (jobRecord, error) {
	j, err := store.GetJSON[jobRecord](ctx, s.store, store.TrainingJobs, id)
	if errors.Is(err, store.ErrNotFound) {
		return j, notFound("training job", id)
	}
	if err != nil {
		return j, fmt.Errorf("trainer: read job %s: %w", id, err)
	}
	return j, nil
}

// Model returns owner's router model details. Archived models are still described (with
// status archived); removed ones answer ErrNotFound.
func (s *Service) Model(ctx context.Context, owner, modelID string) (ModelDetails, error) {
	if strings.TrimSpace(modelID) == "" {
		return ModelDetails{}, invalid("model_id", "is required")
	}
	m, err := s.getModel(ctx, owner, modelID)
	if err != nil {
		return ModelDetails{}, err
	}
	return m.details(), nil
}

func (s *Service) getModel(ctx context.Context, owner, id string) (modelRecord, error) {
	m, err := store.GetJSON[modelRecord](ctx, s.store, store.RouterModels, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && m.Owner != owner) {
		return modelRecord{}, notFound("router model", id)
	}
	if err != nil {
		return m, fmt.Errorf("trainer: read model %s: %w", id, err)
	}
	return m, nil
}

func newID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
