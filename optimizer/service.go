// Package optimizer runs agent prompt optimization jobs (the spec's agentopt).
//
// A job fetches a bundle (agent.py, eval.py, dataset.json, optionally valset.json; see
// [ReadBundle]), splits the dataset 70/30 with a fixed seed ([Split]) unless valset.json
// gives the held-out rows, and, for each target model, runs the loop:
//
//  0. baseline: the original agent runs on the train split in the sandbox (iteration 0);
//  1. propose: a [Proposer] reads the best system prompt so far, its score, the failing rows
//     of this iteration's minibatch (with eval.py's feedback when score returns a
//     (score, feedback) pair), the recent attempts with the rows they won and lost and a
//     Pareto pool of prompts that win rows the best loses; it proposes up to
//     [DefaultCandidates] prompts ([WithSearch]). Only the EDITABLE section of agent.py is
//     rewritten and the FIXED section must stay byte for byte identical;
//  2. benchmark: each candidate runs on the minibatch (at most [DefaultMinibatch] rows and
//     half the split, mostly rows the best gets wrong); the one with the highest minibatch
//     mean that beats the best there (ties: the shorter prompt) runs on the rest of the train
//     split, so a kept candidate costs one train-split run. Rows are split into chunks that
//     run in parallel within the service's concurrency budget;
//  3. accept: the confirmed candidate replaces the best only if it wins the paired
//     [AcceptanceRule] on per-row scores of the whole train split;
//  4. after n_iterations, the best and the original agents are scored on the test split,
//     which neither the proposer nor the acceptance rule ever see.
//
// Jobs are kept in store.OptimizationJobs and survive restarts: Start re-queues jobs that
// were queued or running (a running job starts over; one interrupted MaxAttempts times is
// failed with a message). With [WithQueue] the jobs are shared by every process of a
// PostgreSQL deployment: any process accepts them, one worker anywhere runs each, and a
// dead worker's job starts over elsewhere by the same rules. The best agent.py of each target model is kept in
// store.Artifacts under a 128-bit random token, served by [Service.Artifact].
package optimizer

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/switchyard-ai/switchyard/fetch"
	"github.com/switchyard-ai/switchyard/jobqueue"
	"github.com/switchyard-ai/switchyard/sandbox"
	"github.com/switchyard-ai/switchyard/store"
)

// Service defaults.
const (
	// DefaultVersion is the version label of submissions.
	DefaultVersion = "v1"
	// DefaultSandboxConcurrency is how many sandbox runs may be in flight at once across
	// all jobs (the train rows of a benchmark are split into that many chunks).
	DefaultSandboxConcurrency = 4
	// DefaultMaxFailures is how many failing rows the proposer is shown.
	DefaultMaxFailures = 8
	// MaxAttempts is how many times a job may be started before restarts fail it.
	MaxAttempts = 3
	// DefaultJobsPerOwner is how many optimization jobs one owner (API key) may have queued
	// or running at once (WithJobsPerOwner); one more fails with a *JobLimitError, so one
	// key cannot fill the queue shared by every key.
	DefaultJobsPerOwner = 4
	// MaxDiscardedShown is how many recently discarded prompts the proposer is shown.
	MaxDiscardedShown = 3
	// MaxAttemptsShown is how many recent attempts (prompt, rows won and lost, outcome) the
	// proposer is shown.
	MaxAttemptsShown = 8
	// MaxAlternativesShown is how many Pareto-pool prompts (not kept, but right on rows the
	// best gets wrong) the proposer is shown.
	MaxAlternativesShown = 3
	// DefaultMinibatch is the most train rows a candidate is first compared on.
	DefaultMinibatch = 8
	// DefaultCandidates is how many candidate prompts one iteration may try.
	DefaultCandidates = 3
	// MaxBundleChecks is how many bundles Submit fetches and checks at once across all
	// callers (each may hold up to the fetcher's cap in memory), one per owner at a time;
	// more submissions wait.
	MaxBundleChecks = 4
	// ProposerAttempts is how many times a proposal is asked for when the proposer model
	// fails transiently (rate limit, overload, connection); each try has the full
	// llm_call_timeout.
	ProposerAttempts = 2
)

// Causes of a job's context ending.
var (
	errCancelled = errors.New("cancelled by the caller")
	errShutdown  = errors.New("server shutting down")
)

// timeoutError is the cause of a job's context ending at overall_timeout, or, with longest
// set, of its iterations stopping early because another one (the longest so far took
// longest) would not have left the held-out split its time.
type timeoutError struct{ limit, longest time.Duration }

func (e *timeoutError) Error() string { return "overall timeout" }

// Service runs optimization jobs. Create it with New, call Start to run workers and
// Close to stop them. It is safe for concurrent use.
type Service struct {
	store       *store.Store
	runner      sandbox.Runner
	proposer    Proposer
	fetcher     *fetch.Fetcher
	gatewayURL  string
	minter      KeyMinter
	publicURL   string
	routable    func(model string) error
	workers     int
	queueSize   int
	concurrency int
	rule        AcceptanceRule
	seed        uint64
	maxFailures int
	// minibatch is the most train rows candidates are first compared on; candidates is how
	// many proposals one iteration may try (WithSearch).
	minibatch, candidates int
	// callsPerRow and tokensPerCall size each job key's budget (WithAgentBudget).
	callsPerRow, tokensPerCall int64
	limits                     sandbox.Limits
	now                        func() time.Time
	log                        *slog.Logger
	version                    string

	sem chan struct{} // sandbox run slots shared by every job
	// checks bounds the bundles Submit fetches at once (MaxBundleChecks).
	checks chan struct{}
	// checkLines holds, per owner with a submission being checked or waiting, the owner's
	// line: one bundle check of an owner at a time, so that one key's submissions (of
	// bundles that download slowly) cannot take every slot of checks from the other keys.
	// Guarded by mu; an entry goes when nobody holds or waits for it.
	checkLines map[string]*checkLine

	recMu sync.Mutex // serializes read-modify-write of job records

	mu      sync.Mutex
	started bool
	closed  bool
	// startFailed is set when Start failed (reloading the stored jobs): no worker of this
	// process runs, so Submit refuses as after Close.
	startFailed bool
	queue       chan string
	// runCtx is Start's context (nil before Start): once it ends no worker runs a new job.
	runCtx  context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	running map[string]context.CancelCauseFunc
	// runDone holds, per running job, a channel closed once its worker has saved its end.
	runDone map[string]chan struct{}
	// indexed backfills the owner index of jobs stored before it.
	indexed store.OwnedBackfill
	// active maps the ids of queued and running jobs to their owners (per-owner limit).
	active   map[string]string
	perOwner int
	// q, when set (WithQueue), is the queue shared by every process; nil runs jobs on the
	// in-process pool.
	q jobqueue.Queue
	// tracer records job stages (WithTracer); nil: none.
	tracer trace.Tracer
	// onEnd hears of each job this process ran to its end (WithJobEnded); nil: no one.
	onEnd func(JobStat)
}

// Option configures a Service.
type Option func(*Service)

// WithFetcher sets the fetcher of bundle URLs (default: a zero fetch.Fetcher — SSRF guard
// on, local URLs refused, 200 MiB cap; the bundle itself is capped at 50 MiB uncompressed).
func WithFetcher(f *fetch.Fetcher) Option { return func(s *Service) { s.fetcher = f } }

// WithGateway sets the OpenAI-compatible base URL the sandboxed agent calls (Switchyard's
// own /v1, e.g. "http://127.0.0.1:8080/v1") and the minter of per-job keys for it. Without
// it the agent runs with no network. minter may be nil here and set later with
// SetKeyMinter (the server does that); a nil minter at run time means StaticKey("").
func WithGateway(baseURL string, minter KeyMinter) Option {
	return func(s *Service) { s.gatewayURL, s.minter = strings.TrimRight(baseURL, "/"), minter }
}

// WithPublicURL sets the base of agent_code_url (the server's --public-url, e.g.
// "https://switchyard.example.com"); default "http://localhost:8080".
func WithPublicURL(u string) Option {
	return func(s *Service) { s.publicURL = strings.TrimRight(u, "/") }
}

// WithWorkers sets how many jobs this process runs at once (default 1). With WithQueue, 0
// runs none here: the process accepts and enqueues jobs for the other processes' workers.
// Without it, values below 1 mean 1.
func WithWorkers(n int) Option { return func(s *Service) { s.workers = n } }

// WithQueueSize sets how many jobs may wait; Submit beyond it fails with ErrQueueFull
// (default 64).
func WithQueueSize(n int) Option { return func(s *Service) { s.queueSize = n } }

// WithJobsPerOwner sets how many jobs one owner may have queued or running at once
// (default DefaultJobsPerOwner); Submit beyond it fails with a *JobLimitError.
func WithJobsPerOwner(n int) Option { return func(s *Service) { s.perOwner = n } }

// WithSandboxConcurrency sets the concurrency budget: how many sandbox runs may be in
// flight at once across all jobs; each benchmark splits its rows into that many chunks
// (default DefaultSandboxConcurrency).
func WithSandboxConcurrency(n int) Option { return func(s *Service) { s.concurrency = n } }

// WithAcceptance sets the acceptance rule (default DefaultAcceptance).
func WithAcceptance(r AcceptanceRule) Option { return func(s *Service) { s.rule = r } }

// WithSeed sets the seed of the train/test split and of the failing-row samples of jobs
// submitted without one of their own (Request.Seed; default DefaultSeed).
func WithSeed(seed uint64) Option { return func(s *Service) { s.seed = seed } }

// WithSearch sets how each iteration searches: up to candidates proposals (the proposer is
// asked for that many), each first run on a minibatch of at most minibatch train rows, the
// best of them confirmed on the rest of the split (defaults DefaultCandidates and
// DefaultMinibatch). Values below 1 mean 1.
func WithSearch(candidates, minibatch int) Option {
	return func(s *Service) { s.candidates, s.minibatch = candidates, minibatch }
}

// WithMaxFailures sets how many failing train rows the proposer is shown (default 8).
func WithMaxFailures(n int) Option { return func(s *Service) { s.maxFailures = n } }

// WithSandboxLimits sets the sandbox limits other than the timeout (memory, processes,
// ...); the timeout is always the job's sandbox_timeout.
func WithSandboxLimits(l sandbox.Limits) Option { return func(s *Service) { s.limits = l } }

// WithClock sets the clock (default time.Now).
func WithClock(now func() time.Time) Option { return func(s *Service) { s.now = now } }

// WithLogger sets the logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(s *Service) { s.log = l } }

// WithAgentBudget bounds each job key the sandboxed agent gets: at most callsPerRow gateway
// calls per dataset row per sandbox run, and tokensPerCall tokens per allowed call, over the
// model's whole loop (defaults 8 and 16,384). A key past its budget gets 429s.
func WithAgentBudget(callsPerRow, tokensPerCall int64) Option {
	return func(s *Service) { s.callsPerRow, s.tokensPerCall = callsPerRow, tokensPerCall }
}

// WithVersion sets the version label of submissions (default DefaultVersion).
func WithVersion(v string) Option { return func(s *Service) { s.version = v } }

// WithModelCheck makes Submit refuse a target model for which routable returns an error (an
// unknown provider, or one without its API key), with a validation error naming the model
// and that reason at once instead of a job that fails at its baseline. Without it every
// well-formed provider/model is accepted.
func WithModelCheck(routable func(model string) error) Option {
	return func(s *Service) { s.routable = routable }
}

// New returns a Service keeping jobs in st, running agents with runner and asking proposer
// for new prompts. Call Start to run jobs.
func New(st *store.Store, runner sandbox.Runner, proposer Proposer, opts ...Option) (*Service, error) {
	switch {
	case st == nil:
		return nil, errors.New("optimizer: New needs a store")
	case runner == nil:
		return nil, errors.New("optimizer: New needs a sandbox runner")
	case proposer == nil:
		return nil, errors.New("optimizer: New needs a proposer")
	}
	s := &Service{
		store: st, runner: runner, proposer: proposer,
		publicURL: "http://localhost:8080", workers: 1, queueSize: 64,
		concurrency: DefaultSandboxConcurrency, rule: DefaultAcceptance, seed: DefaultSeed,
		maxFailures: DefaultMaxFailures, now: time.Now, version: DefaultVersion,
		minibatch: DefaultMinibatch, candidates: DefaultCandidates,
		callsPerRow: 8, tokensPerCall: 16384,
		running: map[string]context.CancelCauseFunc{}, runDone: map[string]chan struct{}{},
		active: map[string]string{}, perOwner: DefaultJobsPerOwner,
	}
	for _, o := range opts {
		o(s)
	}
	if s.fetcher == nil {
		s.fetcher = &fetch.Fetcher{}
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.q == nil || s.workers < 0 {
		s.workers = max(s.workers, 1)
	}
	s.queueSize = max(s.queueSize, 1)
	s.concurrency = max(s.concurrency, 1)
	s.maxFailures = max(s.maxFailures, 1)
	s.minibatch = max(s.minibatch, 1)
	s.candidates = max(s.candidates, 1)
	if s.perOwner < 1 {
		s.perOwner = DefaultJobsPerOwner
	}
	s.sem = make(chan struct{}, s.concurrency)
	s.checks = make(chan struct{}, MaxBundleChecks)
	s.checkLines = map[string]*checkLine{}
	// Made here, so that a job submitted before Start (or while Start recovers the store's
	// jobs) is queued by its Submit; Start moves what it holds into the running queue.
	s.queue = make(chan string, s.queueSize)
	return s, nil
}

// SetKeyMinter sets the minter of per-job gateway keys when none was given to WithGateway.
// Call it before Start.
func (s *Service) SetKeyMinter(m KeyMinter) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.minter == nil {
		s.minter = m
	}
}

// HasKeyMinter reports whether a key minter is set.
func (s *Service) HasKeyMinter() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.minter != nil
}

// Version returns the version label of submissions.
func (s *Service) Version() string { return s.version }

// Start recovers unfinished jobs from the store and starts the workers. Workers stop when
// ctx is cancelled or Close is called; Submit then answers ErrClosed (without WithQueue:
// with it, other processes' workers still run the jobs). When Start fails no worker runs,
// and Submit answers ErrClosed as well (without WithQueue), as the trainer's does.
func (s *Service) Start(ctx context.Context) (err error) {
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
	s.runCtx = ctx
	s.mu.Unlock()
	defer func() {
		if err != nil {
			s.mu.Lock()
			s.startFailed = true
			s.mu.Unlock()
		}
	}()

	if s.q != nil {
		return s.startShared(ctx)
	}
	recovered, err := s.recover(ctx)
	if err != nil {
		return err
	}
	// The unfinished jobs recover found (and those submitted to this process before now)
	// hold their bundles: the sweep need not read them.
	s.mu.Lock()
	unfinished := make(map[string]bool, len(s.active))
	for id := range s.active {
		unfinished[id] = true
	}
	s.mu.Unlock()
	s.sweepBundles(ctx, unfinished)
	s.mu.Lock()
	defer s.mu.Unlock()
	// Recovered jobs first (the oldest), then those submitted to this process before now;
	// every send is made under s.mu, so none of these blocks.
	early := s.queue
	s.queue = make(chan string, s.queueSize+len(recovered))
	for _, id := range recovered {
		s.queue <- id
	}
	for range len(early) {
		s.queue <- <-early
	}
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.cancel = cancel
	go func() {
		select {
		case <-ctx.Done():
			cancel()
		case <-wctx.Done():
		}
	}()
	for i := 0; i < s.workers; i++ {
		s.wg.Add(1)
		go s.worker(wctx)
	}
	return nil
}

// recover re-queues stored jobs that were queued or running, oldest first.
func (s *Service) recover(ctx context.Context) ([]string, error) {
	entries, err := s.store.List(ctx, store.OptimizationJobs, store.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("optimizer: list jobs: %w", err)
	}
	type item struct {
		id string
		at time.Time
	}
	var ids []item
	for _, e := range entries {
		j, err := decodeJob(e) // the listing holds the records: no second read of each
		if err != nil {
			s.log.Warn("optimizer: skipping unreadable job record", "key", e.Key, "err", err)
			continue
		}
		switch j.Status {
		case StatusQueued:
		case StatusRunning:
			if j.CancelRequested { // cancelled, and the server stopped before the run did
				s.reclaimForEnd(ctx, &j)(&j)
				j.Status = StatusInterrupted
				j.ErrorMessage = fmt.Sprintf("cancelled by the caller (%s); the best result so far is kept", s.progressText(&j))
				t := s.now().UTC()
				j.FinishedAt = &t
				if err := s.putEnded(ctx, &j); err != nil {
					return nil, err
				}
				s.log.Info("optimizer: ended a job cancelled before a restart", "job", j.ID)
				continue
			}
			if j.Attempts >= MaxAttempts {
				s.reclaimForEnd(ctx, &j)(&j)
				j.Status = StatusFailed
				j.ErrorMessage = fmt.Sprintf("the server stopped %d times while this job was running; giving up", j.Attempts)
				t := s.now().UTC()
				j.FinishedAt = &t
				if err := s.putEnded(ctx, &j); err != nil {
					return nil, err
				}
				continue
			}
			// Start over: partial results of the cut run are dropped, with its artifacts.
			cut := j.dropCutRun()
			j.Status, j.StartedAt = StatusQueued, nil
			err := s.store.Update(ctx, func(tx store.Tx) error {
				if err := deleteArtifacts(ctx, tx, cut); err != nil {
					return err
				}
				return store.PutJSON(ctx, tx, store.OptimizationJobs, j.ID, j)
			})
			if err != nil {
				return nil, fmt.Errorf("optimizer: save job %s: %w", j.ID, err)
			}
			s.log.Info("optimizer: re-queued a job cut by a restart", "job", j.ID, "attempts", j.Attempts)
		default:
			continue
		}
		s.mu.Lock()
		_, mine := s.active[j.ID] // submitted to this process before Start: already queued
		s.active[j.ID] = j.Owner
		s.mu.Unlock()
		if !mine {
			ids = append(ids, item{j.ID, j.CreatedAt})
		}
	}
	// Oldest first.
	for i := 1; i < len(ids); i++ {
		for k := i; k > 0 && ids[k].at.Before(ids[k-1].at); k-- {
			ids[k], ids[k-1] = ids[k-1], ids[k]
		}
	}
	out := make([]string, len(ids))
	for i, it := range ids {
		out[i] = it.id
	}
	return out, nil
}

// Close stops the workers, cutting running jobs (they stay "running" in the store and are
// re-queued by the next Start), and waits for them until ctx ends.
func (s *Service) Close(ctx context.Context) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	for _, c := range s.running {
		c(errShutdown)
	}
	if s.cancel != nil {
		s.cancel()
	}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Submit validates req and queues a job for owner. Validation errors are
// *ValidationError values carrying the spec's messages. The bundle is then fetched and
// checked (ReadBundle: the ZIP, agent.py, eval.py and every row of dataset.json) before
// anything is stored: a bundle that cannot be fetched or is unusable answers a *SubmitError
// (matching ErrBundle) naming input_url, the file and the row, and no job is made. The
// bundle downloaded is stored with the job (store.OptimizationBundles, until the job ends)
// and is what the job runs: input_url is not downloaded again, so a presigned URL may
// expire while the job waits, also across a restart. At most MaxBundleChecks bundles are
// fetched at once, and one of an owner at a time (its other submissions wait); an owner already at the per-owner limit is refused before the fetch
// (with WithQueue too, counting the owner's stored jobs). An owner
// who already has the per-owner number of jobs queued or running gets a *JobLimitError; a
// full queue answers ErrQueueFull; a closed service, one whose Start failed, or one whose
// Start context ended, answers ErrClosed.
func (s *Service) Submit(ctx context.Context, owner string, req Request) (*Submitted, error) {
	if err := req.normalize(); err != nil {
		return nil, err
	}
	switch u, _ := url.Parse(req.InputURL); strings.ToLower(u.Scheme) {
	case "http", "https":
	case "file":
		if !s.fetcher.AllowLocal {
			return nil, invalid("input_url", "file:// URLs are not allowed (the server runs without --allow-local-urls)")
		}
	default:
		return nil, invalid("input_url", "input_url must start with http:// or https://, got %q", fetch.Redact(req.InputURL))
	}
	if s.routable != nil {
		for i, m := range req.TargetModels {
			if err := s.routable(m); err != nil {
				return nil, invalid("target_models", "target_models[%d]: the gateway cannot route %q: %v", i, m, err)
			}
		}
	}
	// Refusals that need no bundle come before its download: an owner at the limit does
	// not make the server fetch one per attempt (the limit is checked again when the job is
	// stored).
	if s.q == nil {
		s.mu.Lock()
		stopped, n := s.stoppedLocked(), s.activeLocked(owner)
		s.mu.Unlock()
		switch {
		case stopped:
			return nil, ErrClosed
		case n >= s.perOwner:
			return nil, jobLimit(s.perOwner, n)
		}
	} else {
		// Shared queue: the owner's unfinished jobs are counted in the store, as
		// submitShared's transaction counts them.
		if err := s.openShared(ctx); err != nil {
			return nil, err
		}
		n, err := s.activeStored(ctx, s.store, owner)
		if err != nil {
			return nil, fmt.Errorf("optimizer: count %s's jobs: %w", owner, err)
		}
		if n >= s.perOwner {
			return nil, jobLimit(s.perOwner, n)
		}
	}
	// One of the owner's checks at a time: one key cannot hold every check's slot.
	done, err := s.ownerTurn(ctx, owner)
	if err != nil {
		return nil, err
	}
	defer done()
	// The check's slot is held until the bundle is stored (or refused): the bytes are in
	// memory until then, and MaxBundleChecks bounds how many bundles are.
	select {
	case s.checks <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-s.checks }()
	data, err := s.checkBundle(ctx, req.InputURL)
	if err != nil {
		return nil, err
	}
	id, err := newID("opt_")
	if err != nil {
		return nil, err
	}
	if s.q != nil {
		return s.submitShared(ctx, s.newJob(id, owner, &req, data), data)
	}
	s.mu.Lock()
	if s.stoppedLocked() {
		s.mu.Unlock()
		return nil, ErrClosed
	}
	if len(s.queue) >= s.queueSize {
		s.compactQueueLocked()
	}
	if len(s.queue) >= s.queueSize {
		s.mu.Unlock()
		return nil, ErrQueueFull
	}
	if n := s.activeLocked(owner); n >= s.perOwner {
		s.mu.Unlock()
		return nil, jobLimit(s.perOwner, n)
	}
	s.active[id] = owner // reserved; released below if the job is not queued
	s.mu.Unlock()
	queued := false
	defer func() {
		if !queued {
			s.release(id)
		}
	}()
	j := s.newJob(id, owner, &req, data)
	err = s.store.Update(ctx, func(tx store.Tx) error {
		if err := store.PutJSON(ctx, tx, store.OptimizationJobs, j.ID, j); err != nil {
			return err
		}
		if err := putBundleTx(ctx, tx, j.ID, data); err != nil {
			return err
		}
		return store.PutOwned(ctx, tx, j.ref())
	})
	if err != nil {
		return nil, fmt.Errorf("optimizer: save job %s: %w", j.ID, err)
	}
	// Sent under mu, as every send is, so that compactQueueLocked can put back what it took
	// out without blocking; to the queue of now, which Start may have made meanwhile (Start
	// does not queue from the store the jobs this process's Submit reserved, so this send is
	// the only one).
	s.mu.Lock()
	stopped := s.stoppedLocked() // Close or the end of Start's context came meanwhile
	sent := !stopped && s.trySendLocked(id)
	if !sent && !stopped {
		// Another Submit took the room while this one stored its job: make room from
		// dead ids before refusing.
		s.compactQueueLocked()
		sent = s.trySendLocked(id)
	}
	s.mu.Unlock()
	if !sent {
		dctx := context.WithoutCancel(ctx)
		_ = s.store.Update(dctx, func(tx store.Tx) error {
			if err := tx.Delete(dctx, store.OptimizationJobs, id); err != nil {
				return err
			}
			if err := dropBundleTx(dctx, tx, j); err != nil {
				return err
			}
			return store.DeleteOwned(dctx, tx, j.ref())
		})
		if stopped {
			return nil, ErrClosed
		}
		return nil, ErrQueueFull
	}
	queued = true
	s.log.Info("optimizer: job queued", "job", id, "models", len(req.TargetModels), "n_iterations", req.NIterations)
	return &Submitted{JobID: id, Status: StatusQueued, Version: s.version}, nil
}

// checkLine is one owner's line of bundle checks (Service.checkLines).
type checkLine struct {
	turn chan struct{} // holds a token while one of the owner's checks runs
	refs int           // checks holding or waiting for turn; guarded by Service.mu
}

// ownerTurn waits for owner's turn to check a bundle (one of an owner's checks at a
// time; a wait ends with ctx) and returns the func that ends it.
func (s *Service) ownerTurn(ctx context.Context, owner string) (func(), error) {
	s.mu.Lock()
	line := s.checkLines[owner]
	if line == nil {
		line = &checkLine{turn: make(chan struct{}, 1)}
		s.checkLines[owner] = line
	}
	line.refs++
	s.mu.Unlock()
	leave := func() {
		s.mu.Lock()
		if line.refs--; line.refs == 0 {
			delete(s.checkLines, owner)
		}
		s.mu.Unlock()
	}
	select {
	case line.turn <- struct{}{}:
	case <-ctx.Done():
		leave()
		return nil, ctx.Err()
	}
	return func() { <-line.turn; leave() }, nil
}

// checkBundle fetches the bundle at u (guarded unless this process allows local URLs) and
// checks it with ReadBundle, so that a bad one is refused at submit rather than failing
// the job once queued (Submit holds one of MaxBundleChecks slots meanwhile). It returns the
// bundle's bytes, which the job keeps and runs (within the fetcher's size cap).
func (s *Service) checkBundle(ctx context.Context, u string) ([]byte, error) {
	data, err := s.fetcher.Get(ctx, u)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &SubmitError{Err: &BundleError{File: "bundle", Problem: fmt.Sprintf("could not be fetched: %v", err)}}
	}
	if _, err := ReadBundle(data); err != nil {
		var be *BundleError
		if errors.As(err, &be) {
			return nil, &SubmitError{Err: be}
		}
		return nil, err
	}
	return data, nil
}

// compactQueueLocked drops from the queue the ids of jobs cancelled or deleted while
// queued (no longer active; jobqueue.Compact). s.mu is held; every send to the queue is
// made under it, so everything taken out goes back.
func (s *Service) compactQueueLocked() {
	for _, id := range jobqueue.Compact(s.queue, func(id string) bool { _, live := s.active[id]; return live }) {
		s.queue <- id // not reached: no send can take the room while s.mu is held
	}
}

// stoppedLocked reports whether no worker of this process will run a new job: the service
// is closed, Start failed, or Start's context ended (SIGTERM while the server drains its
// requests); s.mu is held.
func (s *Service) stoppedLocked() bool {
	return s.closed || s.startFailed || (s.runCtx != nil && s.runCtx.Err() != nil)
}

// trySendLocked queues id if the queue has room; s.mu is held.
func (s *Service) trySendLocked(id string) bool {
	select {
	case s.queue <- id:
		return true
	default:
		return false
	}
}

// newJob is the record of a new queued job whose bundle, as checked, is bundle.
func (s *Service) newJob(id, owner string, req *Request, bundle []byte) *job {
	return &job{
		ID: id, Owner: owner, Version: s.version, Optimizer: req.Optimizer, InputURL: req.InputURL, GuardedURLs: !s.fetcher.AllowLocal,
		Bundle:       newBundleCopy(bundle),
		TargetModels: append([]string(nil), req.TargetModels...), NIterations: req.NIterations,
		OverallTimeout: Duration(req.OverallTimeout), LLMCallTimeout: Duration(req.LLMCallTimeout),
		SandboxTimeout: Duration(req.SandboxTimeout), Seed: req.Seed, Status: StatusQueued, CreatedAt: s.now().UTC(),
	}
}

// seedOf is the seed of job j's split and minibatches: its own, else the service's.
func (s *Service) seedOf(j *job) uint64 {
	if j.Seed != nil {
		return *j.Seed
	}
	return s.seed
}

// activeLocked counts owner's queued and running jobs; s.mu is held.
func (s *Service) activeLocked(owner string) int {
	n := 0
	for _, o := range s.active {
		if o == owner {
			n++
		}
	}
	return n
}

// release stops counting job id against its owner.
func (s *Service) release(id string) {
	s.mu.Lock()
	delete(s.active, id)
	s.mu.Unlock()
}

// Status returns a job's progress. Another owner's job answers ErrNotFound.
func (s *Service) Status(ctx context.Context, owner, id string) (*JobStatus, error) {
	j, err := s.get(ctx, owner, id)
	if err != nil {
		return nil, err
	}
	st := j.status()
	return &st, nil
}

// Results returns a finished job's results (completed, failed or interrupted — the last
// with the best found so far). A queued or running job answers a *NotFinishedError.
func (s *Service) Results(ctx context.Context, owner, id string) (*Results, error) {
	j, err := s.get(ctx, owner, id)
	if err != nil {
		return nil, err
	}
	if !j.Status.Terminal() {
		return nil, &NotFinishedError{JobID: j.ID, Status: j.Status}
	}
	out := &Results{JobID: j.ID, Status: j.Status, ErrorMessage: j.ErrorMessage, Results: []ModelResult{}, CutRuns: j.CutRuns}
	for _, r := range j.Results {
		out.Results = append(out.Results, s.view(r))
	}
	return out, nil
}

// History returns the per-iteration history of each target model started so far (also
// while the job runs); iteration 0 is the baseline.
func (s *Service) History(ctx context.Context, owner, id string) (map[string][]Iteration, error) {
	j, err := s.get(ctx, owner, id)
	if err != nil {
		return nil, err
	}
	h := map[string][]Iteration{}
	for _, r := range j.Results {
		h[r.Model] = append([]Iteration(nil), r.History...)
	}
	return h, nil
}

// CancelWait bounds how long Cancel waits for a run of this process it cancelled to stop.
const CancelWait = 10 * time.Second

// Cancel stops a queued or running job; it ends "interrupted" with the best result so far
// kept. A job running in this process is waited for (at most CancelWait, and while ctx
// lasts), so the answer is its final status; one running elsewhere, or slower to stop,
// answers "running" (poll Status). A finished job answers ErrFinished.
func (s *Service) Cancel(ctx context.Context, owner, id string) (*JobStatus, error) {
	st, done, err := s.cancelJob(ctx, owner, id)
	if err != nil || done == nil {
		return st, err
	}
	wait := time.NewTimer(CancelWait)
	defer wait.Stop()
	select {
	case <-done:
	case <-wait.C:
		return st, nil
	case <-ctx.Done():
		return st, nil
	}
	if j, err := s.get(ctx, owner, id); err == nil {
		final := j.status()
		return &final, nil
	}
	return st, nil // deleted meanwhile: what the cancel saw
}

// cancelJob is Cancel without the wait: done is closed once the run of this process it
// cancelled has saved its end (nil when no such run).
func (s *Service) cancelJob(ctx context.Context, owner, id string) (st *JobStatus, done <-chan struct{}, err error) {
	s.recMu.Lock()
	defer s.recMu.Unlock()
	j, err := s.get(ctx, owner, id)
	if err != nil {
		return nil, nil, err
	}
	switch j.Status {
	case StatusQueued:
		claimed, err := s.cancelQueued(ctx, j)
		if err != nil {
			return nil, nil, err
		}
		if claimed { // a worker of another process started it meanwhile
			if j.Status != StatusRunning {
				return nil, nil, &FinishedError{JobID: id, Status: j.Status}
			}
			if err := s.cancelElsewhere(ctx, j); err != nil {
				return nil, nil, err
			}
			break
		}
		s.release(id) // the worker skips it when it comes up
	case StatusRunning:
		s.mu.Lock()
		c := s.running[id]
		done = s.runDone[id]
		s.mu.Unlock()
		if c != nil {
			// Recorded before the run is told: a crash before it stops must not start the
			// job over at the next Start (recover ends a marked job interrupted).
			if err := s.markCancelRequested(ctx, id); err != nil {
				return nil, nil, err
			}
			c(errCancelled)
		} else if s.q != nil {
			if err := s.cancelElsewhere(ctx, j); err != nil {
				return nil, nil, err
			}
		}
	default:
		return nil, nil, &FinishedError{JobID: id, Status: j.Status}
	}
	now := j.status()
	return &now, done, nil
}

// Artifact returns the agent.py stored under token (no owner check: the token is the
// capability). An unknown token answers ErrNotFound.
func (s *Service) Artifact(ctx context.Context, token string) ([]byte, error) {
	if len(token) != 32 || strings.Trim(token, "0123456789abcdef") != "" {
		return nil, fmt.Errorf("%w: artifact", ErrNotFound)
	}
	a, err := store.GetJSON[artifact](ctx, s.store, store.Artifacts, artifactKey(token))
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("%w: artifact", ErrNotFound)
	}
	if err != nil {
		// The store's errors may name the key, and the token in it is the download's
		// credential: the server logs this error.
		return nil, &tokenRedactedError{err: err, token: token}
	}
	return []byte(a.Content), nil
}

// tokenRedactedError is err with the artifact token it may quote left out of its message;
// errors.Is and errors.As see err.
type tokenRedactedError struct {
	err   error
	token string
}

func (e *tokenRedactedError) Error() string {
	return "optimizer: read artifact: " + strings.ReplaceAll(e.err.Error(), e.token, "[redacted]")
}

func (e *tokenRedactedError) Unwrap() error { return e.err }

// artifact is a stored best agent.py.
type artifact struct {
	JobID     string    `json:"job_id"`
	Owner     string    `json:"owner"`
	Model     string    `json:"model"`
	Name      string    `json:"name"`
	Content   string    `json:"content"`
	CreatedAt time.Time `json:"created_at"`
}

func artifactKey(token string) string { return "optimizer/" + token }

// ArtifactPath returns the URL path that serves the artifact with token.
func ArtifactPath(token string) string { return "/api/v1/artifacts/" + token + "/agent.py" }

func (s *Service) view(r storedRes) ModelResult {
	m := r.ModelResult
	m.History = append([]Iteration{}, r.History...) // [] rather than null before the baseline
	if r.ArtifactToken != "" {
		m.AgentCodeURL = s.publicURL + ArtifactPath(r.ArtifactToken)
	}
	return m
}

func (s *Service) get(ctx context.Context, owner, id string) (*job, error) {
	if strings.TrimSpace(id) == "" { // blank is missing, as in DeleteJob
		return nil, invalid("job_id", "job_id is required")
	}
	j, err := store.GetJSON[job](ctx, s.store, store.OptimizationJobs, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && j.Owner != owner) {
		return nil, fmt.Errorf("%w: optimization job %q", ErrNotFound, id)
	}
	if err != nil {
		return nil, fmt.Errorf("optimizer: read job %s: %w", id, err)
	}
	return &j, nil
}

func (s *Service) put(ctx context.Context, j *job) error {
	if err := store.PutJSON(ctx, s.store, store.OptimizationJobs, j.ID, j); err != nil {
		return fmt.Errorf("optimizer: save job %s: %w", j.ID, err)
	}
	return nil
}

// putEnded stores job j, which a restart ended, with the best agent.py its lost run found
// (keepBestAgents), in one transaction.
func (s *Service) putEnded(ctx context.Context, j *job) error {
	var ended job
	err := s.store.Update(ctx, func(tx store.Tx) error {
		// On a copy: a transaction run again (a serialization failure) starts from j, not
		// from the tokens of the attempt that was rolled back.
		ended = *j
		ended.Results = append([]storedRes(nil), j.Results...)
		if err := s.keepBestAgents(ctx, tx, &ended); err != nil {
			return err
		}
		if err := dropBundleTx(ctx, tx, &ended); err != nil {
			return err
		}
		return store.PutJSON(ctx, tx, store.OptimizationJobs, ended.ID, ended)
	})
	if err != nil {
		return fmt.Errorf("optimizer: save job %s: %w", j.ID, err)
	}
	*j = ended
	return nil
}

// save persists a running job's progress (under recMu, so a concurrent Cancel sees a
// consistent record). Once j has ended, its stored bundle is deleted in the same
// transaction: a process that stops right after the job's end leaves no bundle behind.
func (s *Service) save(j *job) {
	s.recMu.Lock()
	defer s.recMu.Unlock()
	if s.q != nil {
		s.saveShared(j)
		return
	}
	ctx := context.Background()
	err := s.store.Update(ctx, func(tx store.Tx) error {
		// Keep the cancel mark Cancel recorded for this run (see markCancelRequested).
		if cur, err := store.GetJSON[job](ctx, tx, store.OptimizationJobs, j.ID); err == nil &&
			cur.Status == StatusRunning && cur.Attempts == j.Attempts {
			j.CancelRequested = j.CancelRequested || cur.CancelRequested
		}
		return putSaved(ctx, tx, j)
	})
	if err != nil {
		s.log.Log(ctx, jobqueue.FailureLevel(err), "optimizer: saving progress", "job", j.ID, "err", err)
	}
}

// decodeJob decodes the job record a listing of store.OptimizationJobs returned.
func decodeJob(e store.Entry) (job, error) {
	var j job
	if err := json.Unmarshal(e.Value, &j); err != nil {
		return job{}, fmt.Errorf("optimizer: decode job %s: %w", e.Key, err)
	}
	return j, nil
}

// putSaved stores job j's record in tx and, once j has ended, deletes its stored bundle
// with it (idempotent, as a driver may run tx's function more than once).
func putSaved(ctx context.Context, tx store.Tx, j *job) error {
	if !j.Unfinished() {
		if err := dropBundleTx(ctx, tx, j); err != nil {
			return err
		}
	}
	return store.PutJSON(ctx, tx, store.OptimizationJobs, j.ID, j)
}

func newID(prefix string) (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("optimizer: random id: %w", err)
	}
	return prefix + hex.EncodeToString(b[:]), nil
}

func (s *Service) worker(ctx context.Context) {
	defer s.wg.Done()
	for {
		select {
		case <-ctx.Done():
			return
		case id := <-s.queue:
			s.runJob(ctx, id, false)
			s.release(id)
		}
	}
}
