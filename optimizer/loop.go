package optimizer

import (
	"context"
	"errors"
	"fmt"
	"go.opentelemetry.io/otel/attribute"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/switchyard-ai/switchyard/jobqueue"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/sandbox"
	"github.com/switchyard-ai/switchyard/store"
)

// jobFailure is an error whose message is shown to the user as the job's error_message.
type jobFailure struct{ msg string }

func (e *jobFailure) Error() string { return e.msg }

func failf(format string, args ...any) error { return &jobFailure{fmt.Sprintf(format, args...)} }

// runJob runs one queued job to its end; it reports cut when a shutdown cut it (the job is
// left running, for the next Start or, with a queue, the next worker). With resume (the
// shared queue's handler, after a dead worker) a job still "running" with a stale
// heartbeat starts over too.
func (s *Service) runJob(base context.Context, id string, resume bool) (cut bool) {
	s.recMu.Lock()
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		s.recMu.Unlock()
		return false
	}
	j, claimed, err := s.claim(base, id, resume)
	if err != nil || !claimed {
		s.recMu.Unlock()
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			s.log.Log(context.Background(), jobqueue.FailureLevel(err), "optimizer: start job", "job", id, "err", err)
		}
		return false
	}
	ctx, cancel := context.WithCancelCause(base)
	defer cancel(nil)
	s.mu.Lock()
	s.running[id] = cancel
	done := make(chan struct{})
	s.runDone[id] = done
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.running, id)
		delete(s.runDone, id)
		s.mu.Unlock()
		close(done)
	}()
	s.recMu.Unlock()
	s.log.Info("optimizer: job started", "job", id, "attempt", j.Attempts)
	s.reclaimKeys(ctx, &j)
	stopBeat := s.heartbeat(ctx, cancel, id, j.Attempts)

	limit := time.Duration(j.OverallTimeout)
	tctx, tcancel := context.WithTimeoutCause(ctx, limit, &timeoutError{limit: limit})
	defer tcancel()
	sctx, endJob := s.stage(tctx, "optimization_job", attribute.String("switchyard.job_id", id), attribute.Int("switchyard.job_attempt", j.Attempts))
	err = s.execute(sctx, &j)
	endJob(err)
	stopBeat()

	cause := context.Cause(tctx)
	if tctx.Err() == nil {
		cause = nil
	}
	if errors.Is(cause, errLostJob) {
		s.log.Warn("optimizer: job was taken over by another worker; dropping this run", "job", id)
		return false
	}
	cancelled := errors.Is(cause, errCancelled) || errors.Is(cause, jobqueue.ErrCancelled)
	if !cancelled && (errors.Is(cause, errShutdown) || (cause != nil && base.Err() != nil)) {
		// Cut by shutdown: left "running" for the next Start (or worker) to re-queue.
		s.releaseCut(&j)
		s.log.Info("optimizer: job cut by shutdown", "job", id)
		return true
	}
	end := s.now().UTC()
	j.FinishedAt = &end
	var te *timeoutError
	var jf *jobFailure
	switch {
	case errors.As(cause, &te) || errors.As(err, &te):
		j.Status = StatusInterrupted
		j.ErrorMessage = fmt.Sprintf("the job did not finish within overall_timeout_seconds=%d (%s); the best result so far is kept — retry with a larger overall_timeout_seconds",
			int(te.limit.Seconds()), s.progressText(&j))
		if te.longest > 0 {
			j.ErrorMessage = fmt.Sprintf("the job stopped its iterations before overall_timeout_seconds=%d ran out: another one (the longest took %s) would not have left the held-out split its time (%s); the best result so far is kept and scored on the held-out split — retry with a larger overall_timeout_seconds",
				int(te.limit.Seconds()), te.longest.Round(time.Second), s.progressText(&j))
		}
	case cancelled:
		j.Status = StatusInterrupted
		j.ErrorMessage = fmt.Sprintf("cancelled by the caller (%s); the best result so far is kept", s.progressText(&j))
	case err == nil:
		j.Status = StatusCompleted
	case errors.As(err, &jf):
		j.Status, j.ErrorMessage = StatusFailed, jf.msg
	default:
		j.Status = StatusFailed
		j.ErrorMessage = "internal error: " + err.Error()
		s.log.Log(context.Background(), jobqueue.FailureLevel(err), "optimizer: job failed", "job", id, "err", err)
	}
	s.save(&j) // with its bundle's deletion, in one transaction
	s.ended(&j)
	s.log.Info("optimizer: job ended", "job", id, "status", j.Status)
	return false
}

func (s *Service) progressText(j *job) string {
	if j.CurrentModel == "" {
		return "before the baseline finished"
	}
	return fmt.Sprintf("stopped at iteration %d of %d for %s", j.CurrentIteration, j.NIterations, j.CurrentModel)
}

// execute reads the bundle (the copy Submit stored) and optimizes each target model in turn.
func (s *Service) execute(ctx context.Context, j *job) error {
	_, end := s.stage(ctx, "fetch bundle")
	data, err := s.bundleData(ctx, j)
	if err != nil {
		end(err)
		return err
	}
	b, err := ReadBundle(data)
	end(err)
	if err != nil {
		var be *BundleError
		if errors.As(err, &be) {
			return failf("invalid bundle: %s", be.Error())
		}
		return err
	}
	train, test := Split(b.Rows, s.seedOf(j))
	if b.Valset != nil { // the user's own held-out rows: dataset.json is all train
		train, test = b.Rows, b.Valset
	}
	for _, model := range j.TargetModels {
		mctx, end := s.stage(ctx, "optimize "+model, attribute.String("gen_ai.request.model", model))
		err := s.optimizeModel(mctx, j, b, train, test, model)
		end(err)
		if err != nil {
			return err
		}
	}
	return nil
}

// candidate is an agent with its train-split outcome.
type candidate struct {
	agent       *AgentSource
	scores      []float64
	predictions []string
	feedback    []string // nil when eval.py gives none
	mean        float64
}

// optimizeModel runs the loop for one target model, recording progress in j.
func (s *Service) optimizeModel(ctx context.Context, j *job, b *Bundle, train, test []sandbox.Row, model string) (err error) {
	j.Results = append(j.Results, storedRes{ModelResult: ModelResult{
		Model: model, Optimizer: j.Optimizer, ProposerPrompt: s.proposerPromptVersion(),
		OriginalPrompt: b.Agent.Prompt(), OptimizedPrompt: b.Agent.Prompt(), Metric: b.Metric,
		TrainRows: len(train), TestRows: len(test), HeldOut: heldOutOf(b), Seed: new(s.seedOf(j)),
		History: []Iteration{},
	}})
	res := &j.Results[len(j.Results)-1]
	j.CurrentModel, j.CurrentIteration, j.BestScore, j.BaselineScore = model, 0, nil, nil
	s.save(j)

	s.mu.Lock()
	minter := s.minter
	s.mu.Unlock()
	if minter == nil {
		minter = StaticKey("")
	}
	gw := sandbox.Gateway{Model: model}
	var key *JobKey
	if s.gatewayURL != "" {
		// The agent may make callsPerRow calls per row in each run: the baseline, per
		// iteration each candidate's minibatch and one confirmation (at most the split
		// again), and the two test-split runs.
		n := int64(len(train))
		perIteration := n + int64(s.candidates)*int64(min(s.minibatch, (len(train)+1)/2))
		calls := s.callsPerRow * (n + int64(j.NIterations)*perIteration + 2*int64(len(test)))
		key, err = minter.MintKey(ctx, KeyGrant{Owner: j.Owner, JobID: j.ID, Model: model,
			MaxCalls: calls, MaxTokens: calls * s.tokensPerCall, TTL: time.Duration(j.OverallTimeout),
			CallTimeout: time.Duration(j.LLMCallTimeout)})
		if err != nil {
			return fmt.Errorf("mint the job's gateway key: %w", err)
		}
		if key.Ref != "" {
			j.keyOpened(key, model)
			s.save(j) // before the key is used: a run cut short leaves it for the next to reclaim
		}
		defer func() {
			if key.Revoke != nil {
				key.Revoke()
			}
			j.keyClosed(key) // saved with the next progress
		}()
		gw.BaseURL, gw.APIKey = s.gatewayURL, key.Key
	}
	var reported Usage
	updateUsage := func() {
		u := &res.Usage
		if key != nil && key.Usage != nil {
			u.Task, u.TaskSource = key.Usage(), "gateway"
		} else {
			u.Task, u.TaskSource = reported, "agent_reported"
		}
		res.Tokens = u.Task.Tokens + u.Proposer.Tokens
		res.CostUSD = u.Task.CostUSD + u.Proposer.CostUSD
	}
	timeout := time.Duration(j.SandboxTimeout)
	var best *candidate
	// Whatever happens from here, keep the best agent found as an artifact.
	defer func() {
		updateUsage()
		if best == nil {
			return
		}
		tok, aerr := s.saveArtifact(context.WithoutCancel(ctx), j, model, best.agent.Source())
		if aerr != nil {
			s.log.Log(context.Background(), jobqueue.FailureLevel(aerr), "optimizer: saving the best agent.py", "job", j.ID, "err", aerr)
			if err == nil {
				err = aerr
			}
			return
		}
		if tok == "" {
			return
		}
		res.ArtifactToken, res.BestAgent = tok, ""
		s.save(j)
	}()

	// Iteration 0: the baseline on the train split.
	start := time.Now()
	bctx, endBase := s.stage(ctx, "baseline", attribute.Int("switchyard.rows", len(train)))
	base, err := s.bench(bctx, b, b.Agent, train, gw, timeout)
	endBase(err)
	if err != nil {
		return s.benchFailure(ctx, err, "the original agent failed on the train split (baseline, model %s)", model)
	}
	reported.Tokens += base.Usage.Tokens
	reported.CostUSD += base.Usage.Cost
	best = &candidate{agent: b.Agent, scores: base.Scores, predictions: base.Predictions, feedback: base.Feedback, mean: base.Mean()}
	res.BestAgent = string(best.agent.Source()) // saved with the next progress
	res.BaselineScore, res.TrainScore = scorePtr(best.mean), scorePtr(best.mean)
	res.History = append(res.History, Iteration{Iteration: 0, Prompt: b.Agent.Prompt(), TrainScore: scorePtr(best.mean), Kept: true,
		RowsRun: len(train), Note: "baseline", DurationMS: ms(time.Since(start))})
	j.BaselineScore, j.BestScore = scorePtr(best.mean), scorePtr(best.mean)
	updateUsage()
	s.save(j)

	// The iterations stop in time for the held-out split: an interrupted job still reports
	// the test score of its best agent.
	var stopAt time.Time
	if dl, ok := ctx.Deadline(); ok {
		stopAt = dl.Add(-heldOutReserve(time.Since(start), len(train), len(test), time.Duration(j.OverallTimeout)))
	}
	ictx := ctx // the iterations' context: it ends where the held-out split's time begins
	if !stopAt.IsZero() {
		var cancel context.CancelFunc
		ictx, cancel = context.WithDeadline(ctx, stopAt)
		defer cancel()
	}
	reserved := false         // the iterations stopped for the held-out split's time
	var early time.Duration   // set when they stopped before one was cut: the longest one
	var longest time.Duration // the longest iteration so far

	var (
		discarded  []string
		attempts   []Attempt
		pool       paretoPool
		candidates int    // usable proposals
		lastNote   string // why the last iteration had none
	)
	tried := map[string]bool{string(b.Agent.Editable()): true}
	if same, err := b.Agent.WithPrompt(b.Agent.Prompt()); err == nil {
		tried[string(same.Editable())] = true // the original prompt, re-quoted
	}
	remember := func(a Attempt) {
		attempts = append(attempts, a)
		if len(attempts) > MaxAttemptsShown {
			attempts = attempts[len(attempts)-MaxAttemptsShown:]
		}
		if a.Outcome != "kept" {
			discarded = append(discarded, a.Prompt)
			if len(discarded) > MaxDiscardedShown {
				discarded = discarded[len(discarded)-MaxDiscardedShown:]
			}
		}
	}
	for i := 1; i <= j.NIterations; i++ {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !stopAt.IsZero() && time.Until(stopAt) < longest {
			reserved, early = true, longest // another iteration would eat into the held-out split's time
			break
		}
		start := time.Now()
		it := Iteration{Iteration: i}
		mb, whole := s.drawMinibatch(best, s.seedOf(j), uint64(i))
		if !whole {
			it.MinibatchRows = len(mb)
		}
		req := ProposalRequest{
			TargetModel: model, Metric: b.Metric, MetricDescription: b.MetricDescription,
			Iteration: i, NIterations: j.NIterations, Candidates: s.candidates,
			CurrentPrompt: best.agent.Prompt(), BestScore: best.mean, BaselineScore: *res.BaselineScore,
			Failures: failingRows(train, best, mb, s.maxFailures), Attempts: slices.Clone(attempts),
			Alternatives: pool.alternatives(train, best), Discarded: slices.Clone(discarded),
		}
		prop, perr := s.propose(ictx, j, req)
		if prop != nil {
			res.Usage.Proposer.add(prop.Usage)
		}
		var variants []*AgentSource
		var slot []int // each variant's index in it.Candidates
		switch {
		case perr != nil && ctx.Err() != nil:
			return ctx.Err()
		case perr != nil && !providers.KindOf(perr).Retryable() && !errors.Is(perr, ErrProposal):
			return failf("the proposer model failed: %v", perr)
		case perr != nil:
			it.Note = "no proposal: " + perr.Error()
		default:
			for _, p := range proposalCandidates(prop, s.candidates) {
				o := CandidateOutcome{Prompt: p.prompt}
				var v *AgentSource
				var verr error
				if p.editable != nil {
					v, verr = best.agent.WithEditable(p.editable)
				} else {
					v, verr = best.agent.WithPrompt(p.prompt)
				}
				switch {
				case verr != nil:
					o.Note = "rejected: " + verr.Error()
				case tried[string(v.Editable())]:
					// Same EDITABLE section as an agent already scored: not run again.
					o.Prompt, o.Note = v.Prompt(), "not run: the proposal repeats an agent already benchmarked"
					candidates++
				default:
					tried[string(v.Editable())] = true
					o.Prompt = v.Prompt()
					variants = append(variants, v)
					slot = append(slot, len(it.Candidates))
					candidates++
				}
				it.Candidates = append(it.Candidates, o)
			}
			if len(variants) == 0 && len(it.Candidates) > 0 {
				it.Note = it.Candidates[0].Note
			}
		}
		if len(it.Candidates) > 0 {
			it.Prompt = it.Candidates[0].Prompt
		}
		if len(variants) == 0 {
			lastNote = it.Note
		}

		// Each candidate on the minibatch.
		bestMB := mean(subset(best.scores, mb))
		mbRows := rowsOf(train, mb)
		var runs []*scored
		cut := false
		for n, v := range variants {
			o := &it.Candidates[slot[n]] // it.Candidates is complete: the pointer stays valid
			out, berr := s.bench(ictx, b, v, mbRows, gw, timeout)
			switch {
			case berr != nil && ctx.Err() != nil:
				return ctx.Err()
			case berr != nil && ictx.Err() != nil:
				o.Note = "not finished: the rest of overall_timeout_seconds is kept for the held-out split"
				cut = true
			case errors.Is(berr, sandbox.ErrJob):
				o.Note = "the variant failed in the sandbox: " + berr.Error()
				remember(Attempt{Iteration: i, Prompt: v.Prompt(), Outcome: "failed in the sandbox"})
			case berr != nil:
				return berr
			default:
				it.RowsRun += len(mb)
				reported.Tokens += out.Usage.Tokens
				reported.CostUSD += out.Usage.Cost
				r := &scored{agent: v, scores: out.Scores, predictions: out.Predictions, feedback: out.Feedback,
					mean: out.Mean(), outcome: o}
				r.gain = r.mean - bestMB
				o.MinibatchScore, o.BestMinibatchScore = scorePtr(r.mean), scorePtr(bestMB)
				runs = append(runs, r)
			}
			if cut {
				break
			}
		}
		chosen := pick(runs)
		for _, r := range runs {
			if r != chosen {
				cmp := s.rule.Compare(subset(best.scores, mb), r.scores)
				if r.gain <= 1e-9 {
					r.outcome.Note = "not better than the best agent on the minibatch"
				} else {
					r.outcome.Note = "another candidate did better on the minibatch"
				}
				remember(Attempt{Iteration: i, Prompt: r.agent.Prompt(), Outcome: "not better on the minibatch",
					Wins: cmp.Wins, Losses: cmp.Losses, Rows: len(mb)})
			}
		}
		switch {
		case it.Note != "":
		case len(runs) > 0 && chosen == nil:
			it.Note = "no candidate beat the best agent on the minibatch"
		case len(runs) == 0 && len(it.Candidates) > 0:
			it.Note = it.Candidates[0].Note // every candidate failed, was cut or repeated
		}

		// The chosen one on the rest of the train split; its minibatch scores are reused.
		if chosen != nil && !cut {
			chosen.outcome.Confirmed = true
			it.Prompt = chosen.agent.Prompt()
			rest := complement(len(train), mb)
			var out *sandbox.Result
			var berr error
			if len(rest) > 0 {
				out, berr = s.bench(ictx, b, chosen.agent, rowsOf(train, rest), gw, timeout)
			} else {
				out = &sandbox.Result{}
			}
			switch {
			case berr != nil && ctx.Err() != nil:
				return ctx.Err()
			case berr != nil && ictx.Err() != nil:
				it.Note = "not finished: the rest of overall_timeout_seconds is kept for the held-out split"
				cut = true
			case errors.Is(berr, sandbox.ErrJob):
				it.Note = "the variant failed in the sandbox: " + berr.Error()
				remember(Attempt{Iteration: i, Prompt: chosen.agent.Prompt(), Outcome: "failed in the sandbox"})
			case berr != nil:
				return berr
			default:
				it.RowsRun += len(rest)
				reported.Tokens += out.Usage.Tokens
				reported.CostUSD += out.Usage.Cost
				c := &candidate{agent: chosen.agent,
					scores:      merge(len(train), mb, chosen.scores, rest, out.Scores),
					predictions: merge(len(train), mb, chosen.predictions, rest, out.Predictions),
					feedback:    mergeFeedback(len(train), mb, chosen.feedback, rest, out.Feedback),
				}
				c.mean = mean(c.scores)
				cmp := s.rule.Compare(best.scores, c.scores)
				if !cmp.Accepted && cmp.Losses > 0 && cmp.MeanDelta > 0 {
					// Refused for losses while better on the mean: the losses may be the
					// model's noise. Re-run both agents on the rows where they differ; only
					// differences that repeat count.
					n, err := s.recheck(ictx, b, train, best, c, gw, timeout)
					switch {
					case err != nil && ctx.Err() != nil:
						return ctx.Err()
					case err != nil && ictx.Err() != nil:
						cut = true
					case err != nil:
						it.Note = "the re-check of the differing rows failed: " + err.Error()
					default:
						it.RowsRun += 2 * n
						it.Rechecked = n
						c.mean = mean(c.scores)
						best.mean = mean(best.scores)
						cmp = s.rule.Compare(best.scores, c.scores)
					}
				}
				it.TrainScore = scorePtr(c.mean)
				it.Comparison = &cmp
				a := Attempt{Iteration: i, Prompt: c.agent.Prompt(), Outcome: "not kept", Wins: cmp.Wins, Losses: cmp.Losses, Rows: len(train)}
				if cmp.Accepted {
					it.Kept, a.Outcome = true, "kept"
					best = c
					res.IterationsKept++
					res.OptimizedPrompt, res.TrainScore = c.agent.Prompt(), scorePtr(best.mean)
					res.BestAgent = string(c.agent.Source())
					j.BestScore = scorePtr(best.mean)
					pool = pool.refresh(best)
					discarded = nil
				} else {
					pool = pool.add(c, best)
				}
				remember(a)
			}
		}
		it.DurationMS = ms(time.Since(start))
		longest = max(longest, time.Since(start))
		res.History = append(res.History, it)
		// An iteration cut short is in the history (what it tried) but was not completed:
		// current_iteration is the latest iteration completed, iterations_run counts them.
		incomplete := cut || ictx.Err() != nil
		if !incomplete {
			res.IterationsRun = i
			j.CurrentIteration = i
		}
		updateUsage()
		s.save(j)
		if incomplete {
			reserved = true
			break
		}
	}

	if j.NIterations > 0 && candidates == 0 && !reserved {
		// Nothing was tried: reporting "completed" would pass off the original as the
		// optimizer's answer. (Cut by the time kept for the held-out split, it is an
		// interrupted job, reported as such below.)
		return failf("the proposer never produced a usable candidate in %d iterations (the last: %s)", j.NIterations, lastNote)
	}

	// The held-out split, seen for the first time: the original and the best agent.
	tctx, endTest := s.stage(ctx, "test split", attribute.Int("switchyard.rows", len(test)))
	defer func() { endTest(err) }()
	orig, err := s.bench(tctx, b, b.Agent, test, gw, timeout)
	if err != nil {
		return s.benchFailure(ctx, err, "the original agent failed on the test split (model %s)", model)
	}
	reported.Tokens += orig.Usage.Tokens
	reported.CostUSD += orig.Usage.Cost
	origMean := orig.Mean()
	bestMean := origMean
	if best.agent != b.Agent {
		out, err := s.bench(tctx, b, best.agent, test, gw, timeout)
		if err != nil {
			return s.benchFailure(ctx, err, "the optimized agent failed on the test split (model %s)", model)
		}
		reported.Tokens += out.Usage.Tokens
		reported.CostUSD += out.Usage.Cost
		bestMean = out.Mean()
	}
	res.OriginalTestScore, res.TestScore = &origMean, &bestMean
	if reserved {
		// Scored on the held-out split, but not every iteration ran: the job is interrupted.
		return &timeoutError{limit: time.Duration(j.OverallTimeout), longest: early}
	}
	res.Complete = true
	return nil
}

// heldOutReserve is how much of the overall timeout the iterations leave for the held-out
// split: its two runs (the original and the best agent), each estimated from the baseline's
// duration scaled to the split's rows, with a margin; at least a tenth of the timeout.
func heldOutReserve(baseline time.Duration, trainRows, testRows int, limit time.Duration) time.Duration {
	scale := max(1, float64(testRows)/float64(max(trainRows, 1)))
	return max(time.Duration(3*scale*float64(baseline)), limit/10)
}

// benchFailure turns a sandbox error into the job's outcome: the user's code failing is a
// job failure with the sandbox's message; a cancelled context passes through; anything else
// is internal.
func (s *Service) benchFailure(ctx context.Context, err error, format string, args ...any) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if errors.Is(err, sandbox.ErrJob) {
		var je *sandbox.JobError
		msg := err.Error()
		if errors.As(err, &je) {
			msg = je.Message
		}
		return failf(format+": %s", append(args, msg)...)
	}
	if errors.Is(err, sandbox.ErrUnavailable) {
		return failf("the sandbox is not available on this server: %v", err)
	}
	if errors.Is(err, sandbox.ErrInvalid) {
		return failf("the bundle cannot be run: %v", err)
	}
	return err
}

// propose asks the proposer for one iteration, with the per-call timeout and one retry of a
// transient failure.
func (s *Service) propose(ctx context.Context, j *job, req ProposalRequest) (p *Proposal, err error) {
	ctx, end := s.stage(ctx, "propose", attribute.Int("switchyard.iteration", req.Iteration), attribute.Int("switchyard.candidates", req.Candidates))
	defer func() { end(err) }()
	var used Usage
	for attempt := 1; ; attempt++ {
		pctx, cancel := context.WithTimeout(ctx, time.Duration(j.LLMCallTimeout))
		p, err := s.proposer.Propose(pctx, req)
		timedOut := err != nil && pctx.Err() != nil && ctx.Err() == nil
		cancel()
		if p != nil {
			used.add(p.Usage)
			p.Usage = used
		}
		if timedOut {
			return p, fmt.Errorf("%w: the proposer call exceeded llm_call_timeout_seconds (%s)", ErrProposal, time.Duration(j.LLMCallTimeout))
		}
		// One more try after a short wait for a transient upstream failure (rate limit,
		// overload, dropped connection); a second failure costs the iteration.
		var pe *providers.Error
		if err == nil || attempt == ProposerAttempts || !errors.As(err, &pe) || !pe.Retryable() {
			if err != nil && p == nil && used != (Usage{}) {
				p = &Proposal{Usage: used}
			}
			return p, err
		}
		wait := min(max(pe.RetryAfter, time.Second), 30*time.Second)
		select {
		case <-ctx.Done():
			return p, err
		case <-time.After(wait):
		}
	}
}

// bench runs agent on rows in the sandbox: the rows are split into up to `concurrency`
// contiguous chunks that run in parallel, each taking a slot of the service-wide budget
// and each limited to timeout. The outcome has one prediction and score per row, in order.
func (s *Service) bench(ctx context.Context, b *Bundle, agent *AgentSource, rows []sandbox.Row, gw sandbox.Gateway, timeout time.Duration) (res *sandbox.Result, err error) {
	ctx, end := s.stage(ctx, "sandbox run", attribute.Int("switchyard.rows", len(rows)), attribute.String("switchyard.sandbox", s.runner.Name()))
	defer func() { end(err) }()
	files := make(map[string][]byte, len(b.Files))
	for k, v := range b.Files {
		files[k] = v
	}
	files["agent.py"] = agent.Source()
	n := min(s.concurrency, len(rows))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type part struct {
		res *sandbox.Result
		err error
	}
	parts := make([]part, n)
	done := make(chan int, n)
	for c := 0; c < n; c++ {
		lo, hi := c*len(rows)/n, (c+1)*len(rows)/n
		go func(c int, chunk []sandbox.Row) {
			defer func() { done <- c }()
			select {
			case s.sem <- struct{}{}:
			case <-ctx.Done():
				parts[c].err = ctx.Err()
				return
			}
			defer func() { <-s.sem }()
			limits := s.limits
			limits.Timeout = timeout
			r, err := s.runner.Run(ctx, sandbox.Job{Files: files, Rows: chunk, Limits: limits, Gateway: gw})
			if err == nil && (len(r.Scores) != len(chunk) || len(r.Predictions) != len(chunk)) {
				err = fmt.Errorf("sandbox returned %d scores and %d predictions for %d rows", len(r.Scores), len(r.Predictions), len(chunk))
			}
			parts[c] = part{r, err}
		}(c, rows[lo:hi])
	}
	var first error
	for range n {
		c := <-done
		if err := parts[c].err; err != nil {
			// Prefer the chunk's own failure over the cancellations it causes in others.
			if first == nil || (errors.Is(first, context.Canceled) && !errors.Is(err, context.Canceled)) {
				first = err
			}
			cancel()
		}
	}
	if first != nil {
		return nil, first
	}
	out := &sandbox.Result{}
	withFeedback := slices.ContainsFunc(parts, func(p part) bool { return p.res.Feedback != nil })
	for _, p := range parts {
		if withFeedback {
			fb := p.res.Feedback
			if fb == nil {
				fb = make([]string, len(p.res.Scores))
			}
			out.Feedback = append(out.Feedback, fb...)
		}
		out.Predictions = append(out.Predictions, p.res.Predictions...)
		out.Scores = append(out.Scores, p.res.Scores...)
		out.Usage.Tokens += p.res.Usage.Tokens
		out.Usage.Cost += p.res.Usage.Cost
		out.Duration = max(out.Duration, p.res.Duration)
	}
	return out, nil
}

// saveArtifact stores the best agent.py under a fresh 128-bit token, if the job's record is
// still this run's: a job deleted, ended or taken over by another process meanwhile (its
// worker read as dead) gets no artifact nothing would ever delete (token "").
func (s *Service) saveArtifact(ctx context.Context, j *job, model string, src []byte) (string, error) {
	tok, err := newID("")
	if err != nil {
		return "", err
	}
	a := artifact{JobID: j.ID, Owner: j.Owner, Model: model, Name: "agent.py", Content: string(src), CreatedAt: s.now().UTC()}
	saved := false
	err = s.store.Update(ctx, func(tx store.Tx) error {
		_, ours, err := thisRun(ctx, tx, j)
		if saved = ours; err != nil || !ours {
			return err
		}
		return store.PutJSON(ctx, tx, store.Artifacts, artifactKey(tok), a)
	})
	if err != nil {
		return "", fmt.Errorf("optimizer: save artifact: %w", err)
	}
	if !saved {
		s.log.Warn("optimizer: the job was ended or deleted elsewhere; its best agent.py is not kept", "job", j.ID)
		return "", nil
	}
	return tok, nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// scorePtr is a measured score, for the fields that are absent until measured.
func scorePtr(v float64) *float64 { return &v }

// proposed is one candidate of a proposal: a prompt, or a whole EDITABLE section.
type proposed struct {
	prompt   string
	editable []byte
}

// proposalCandidates lists a proposal's candidates, at most limit: an EDITABLE section, or
// Prompt then Prompts.
func proposalCandidates(p *Proposal, limit int) []proposed {
	if p.Editable != nil {
		return []proposed{{editable: p.Editable}}
	}
	var out []proposed
	for _, t := range append([]string{p.Prompt}, p.Prompts...) {
		if strings.TrimSpace(t) == "" || len(out) >= limit {
			continue
		}
		out = append(out, proposed{prompt: t})
	}
	return out
}

// mergeFeedback is merge for feedback, which either run may lack.
func mergeFeedback(n int, idx []int, mb []string, rest []int, other []string) []string {
	if mb == nil && other == nil {
		return nil
	}
	if mb == nil {
		mb = make([]string, len(idx))
	}
	if other == nil {
		other = make([]string, len(rest))
	}
	return merge(n, idx, mb, rest, other)
}

// proposerPromptVersion is the proposer's prompt file version, when it reports one.
func (s *Service) proposerPromptVersion() string {
	if v, ok := s.proposer.(interface{ PromptVersion() string }); ok {
		return v.PromptVersion()
	}
	return ""
}

// recheck runs best and c again on the train rows where their scores differ. A difference
// that repeats in the second run (same sign) stays, on the mean of the two runs; one that
// does not is noise and becomes a tie. It returns how many rows each agent ran again.
func (s *Service) recheck(ctx context.Context, b *Bundle, train []sandbox.Row, best, c *candidate, gw sandbox.Gateway, timeout time.Duration) (int, error) {
	var idx []int
	for i := range train {
		if math.Abs(best.scores[i]-c.scores[i]) > 1e-9 {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		return 0, nil
	}
	rows := rowsOf(train, idx)
	again := make([]*sandbox.Result, 2)
	for k, agent := range []*AgentSource{best.agent, c.agent} {
		out, err := s.bench(ctx, b, agent, rows, gw, timeout)
		if err != nil {
			return 0, err
		}
		again[k] = out
	}
	best.scores, c.scores = slices.Clone(best.scores), slices.Clone(c.scores)
	for k, i := range idx {
		b1, c1, b2, c2 := best.scores[i], c.scores[i], again[0].Scores[k], again[1].Scores[k]
		if (c1-b1)*(c2-b2) > 0 {
			// The difference repeated: it is the agents', on the mean of the two runs.
			best.scores[i], c.scores[i] = (b1+b2)/2, (c1+c2)/2
		} else {
			// It did not: noise, a tie at the mean of the four runs.
			best.scores[i] = (b1 + b2 + c1 + c2) / 4
			c.scores[i] = best.scores[i]
		}
	}
	return len(idx), nil
}
