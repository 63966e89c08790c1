package trainer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go.opentelemetry.io/otel/attribute"
	"runtime/debug"
	"sort"
	"time"

	"github.com/switchyard-ai/switchyard/inference"
	"github.com/switchyard-ai/switchyard/jobqueue"
	"github.com/switchyard-ai/switchyard/store"
)

func decodeJSON(b []byte, v any) error { return json.Unmarshal(b, v) }

// run executes one job: load it, mark it running, train, and record the outcome. Errors
// about the data fail the job; a shutdown puts it back to queued and reports requeued.
// With resume (the shared queue's handler, after a dead worker), a job still "running"
// with a stale heartbeat is run again too.
func (s *Service) run(ctx context.Context, id string, resume bool) (requeued bool) {
	s.jobMu.Lock()
	var j jobRecord
	claimed := false
	err := s.store.Update(ctx, func(tx store.Tx) error {
		claimed = false
		cur, err := store.GetJSON[jobRecord](ctx, tx, store.TrainingJobs, id)
		if err != nil {
			return err
		}
		j = cur
		// Not queued: cancelled while queued, or (unless resuming a dead worker's job)
		// run elsewhere.
		if j.State != StateQueued && !(resume && j.State == StateRunning && s.stale(&j)) {
			return nil
		}
		j.State = StateRunning
		j.StartedAt = s.now()
		j.CompletedAt = time.Time{}
		j.Attempts++
		j.CancelRequested = false
		if s.q != nil {
			j.HeartbeatAt = time.Now()
		}
		claimed = true
		return store.PutJSON(ctx, tx, store.TrainingJobs, j.ID, j)
	})
	if err != nil {
		s.jobMu.Unlock()
		if !errors.Is(err, store.ErrNotFound) { // not found: deleted while queued
			s.log.Log(context.Background(), jobqueue.FailureLevel(err), "trainer: mark job running", "job", id, "err", err)
		}
		return false
	}
	if !claimed {
		s.jobMu.Unlock()
		return false
	}
	jctx, jcancel := context.WithCancelCause(ctx)
	s.running[id] = jcancel
	done := make(chan struct{})
	s.runDone[id] = done
	s.jobMu.Unlock()
	defer func() {
		s.jobMu.Lock()
		delete(s.running, id)
		delete(s.runDone, id)
		close(done)
		s.jobMu.Unlock()
		jcancel(nil)
	}()
	stopBeat := s.heartbeat(jctx, jcancel, id, j.Attempts)
	s.log.Info("trainer: job started", "job", id, "attempt", j.Attempts)
	start := time.Now()
	tctx, endJob := s.stage(jctx, "training_job", attribute.String("switchyard.job_id", id), attribute.Int("switchyard.job_attempt", j.Attempts))
	res, err := s.trainSafely(tctx, &j)
	endJob(err)
	stopBeat()
	cause := context.Cause(jctx)
	if err != nil && errors.Is(cause, errLostJob) {
		s.log.Warn("trainer: job was taken over by another worker; dropping this run", "job", id)
		return false
	}
	cancelled := err != nil && (errors.Is(cause, errCancelled) || errors.Is(cause, jobqueue.ErrCancelled))
	kind := ErrorKindCancelled
	if cancelled {
		err = errors.New(cancelledWhileRunning)
	} else if err != nil {
		kind = errorKind(err)
	}
	// Outcomes are written even if ctx was cancelled meanwhile.
	wctx := context.WithoutCancel(ctx)
	if err != nil && !cancelled && (ctx.Err() != nil || errors.Is(cause, errShutdown)) {
		j.State = StateQueued
		j.StartedAt = time.Time{}
		// A shutdown is not the job's doing: the run does not count against MaxAttempts,
		// which is there to give up on jobs whose worker keeps dying.
		attempt := j.Attempts
		j.Attempts = max(j.Attempts-1, 0)
		wrote, perr := s.endRun(wctx, &j, attempt, nil)
		if perr != nil {
			s.log.Log(context.Background(), jobqueue.FailureLevel(perr), "trainer: re-queue interrupted job", "job", id, "err", perr)
		}
		if !wrote && perr == nil {
			return false // ended or taken over elsewhere meanwhile: nothing to run again
		}
		s.log.Info("trainer: job interrupted by shutdown, re-queued", "job", id)
		return true
	}
	j.CompletedAt = s.now()
	if j.TrainingConfig != nil {
		j.TrainingConfig.Timing.TotalTimeSeconds = time.Since(start).Seconds()
	}
	if err != nil {
		j.State = StateFailed
		j.ErrorMessage, j.ErrorKind = err.Error(), kind
		wrote, perr := s.endRun(wctx, &j, j.Attempts, nil)
		if perr != nil {
			s.log.Log(context.Background(), jobqueue.FailureLevel(perr), "trainer: record failed job", "job", id, "err", perr)
		}
		if wrote {
			s.ended(&j)
		}
		s.log.Info("trainer: job failed", "job", id, "err", err)
		return false
	}
	m := res.record
	m.CreatedAt = j.CompletedAt
	m.LastUsedAt = j.CompletedAt
	j.State = StateCompleted
	j.ModelID = m.ID
	wrote, err := s.endRun(wctx, &j, j.Attempts, func(tx store.Tx) error {
		if err := tx.Put(wctx, store.RouterWeights, m.ID, res.weights); err != nil {
			return err
		}
		if err := store.PutJSON(wctx, tx, store.RouterModels, m.ID, m); err != nil {
			return err
		}
		return store.PutOwned(wctx, tx, m.ref())
	})
	if err != nil {
		s.log.Log(context.Background(), jobqueue.FailureLevel(err), "trainer: save trained model", "job", id, "err", err)
		j.State, j.ModelID = StateFailed, ""
		j.ErrorMessage = "internal error: could not save the trained router: " + err.Error()
		j.ErrorKind = ErrorKindInternal
		if wrote, _ := s.endRun(wctx, &j, j.Attempts, nil); wrote {
			s.ended(&j)
		}
		return false
	}
	if !wrote {
		s.log.Warn("trainer: job was ended by another process meanwhile; its router is not kept", "job", id)
		return false
	}
	s.ended(&j)
	s.log.Info("trainer: job completed", "job", id, "model", m.ID,
		"top1", m.Metrics.Top1HitRate, "baseline_top1", m.Metrics.BaselineTop1HitRate)
	return false
}

// endRun writes run attempt's outcome j, with extra's writes in the same transaction,
// unless the record moved on meanwhile: deleted, ended by another process that read this
// worker as dead (a cancel or a delete), or taken over by another attempt. Without that
// check a slow worker's last write would end a job a second time or bring a deleted one
// back. wrote reports whether it wrote.
func (s *Service) endRun(ctx context.Context, j *jobRecord, attempt int, extra func(tx store.Tx) error) (wrote bool, err error) {
	err = s.store.Update(ctx, func(tx store.Tx) error {
		wrote = false
		cur, err := store.GetJSON[jobRecord](ctx, tx, store.TrainingJobs, j.ID)
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if cur.State != StateRunning || cur.Attempts != attempt {
			return nil
		}
		if extra != nil {
			if err := extra(tx); err != nil {
				return err
			}
		}
		if j.State == StateCompleted || j.State == StateFailed {
			// The upload served its one run; a retry uploads again.
			if err := dropUploadTx(ctx, tx, j); err != nil {
				return err
			}
		}
		wrote = true
		return store.PutJSON(ctx, tx, store.TrainingJobs, j.ID, j)
	})
	return wrote, err
}

// trainSafely runs train and turns a panic into an internal error, so one bad job cannot
// take the process (and every other job) down.
func (s *Service) trainSafely(ctx context.Context, j *jobRecord) (res *trainResult, err error) {
	defer func() {
		if v := recover(); v != nil {
			s.log.Error("trainer: panic in job", "job", j.ID, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			res, err = nil, errors.New("internal error while training; see the server log")
		}
	}()
	return s.train(ctx, j)
}

type trainResult struct {
	record  modelRecord
	weights []byte
}

// train reads the data, scores a router on a held-out split and fits the final one.
// j.TrainingConfig is filled in as far as the job got.
func (s *Service) train(ctx context.Context, j *jobRecord) (*trainResult, error) {
	cfg := &TrainingConfig{Seed: s.seed, HoldoutFraction: HoldoutFraction}
	j.TrainingConfig = cfg

	var recs []Record
	read, files := 0, len(j.DataURLs)
	if j.Upload != nil {
		files++
		_, end := s.stage(ctx, "read and parse uploaded dataset")
		r, err := s.readUpload(ctx, j)
		end(err)
		if err != nil {
			return nil, err
		}
		recs = r
	}
	for i, u := range j.DataURLs {
		_, end := s.stage(ctx, "fetch and parse dataset", attribute.Int("switchyard.file", i))
		f := s.fetcher
		if j.GuardedURLs {
			f = f.Guarded() // accepted by a process without --allow-local-urls
		}
		resp, err := f.Fetch(ctx, u)
		if err != nil {
			end(err)
			return nil, err // *fetch.Error names the URL
		}
		if read += len(resp.Body); read > MaxDatasetBytes {
			end(nil)
			return nil, &DatasetError{URL: u, Message: fmt.Sprintf(
				"too much data: the files read so far hold %d MiB; at most %d MiB are allowed per training job", read>>20, MaxDatasetBytes>>20)}
		}
		r, err := ParseDataset(u, resp.ContentType, resp.Body)
		end(err)
		if err != nil {
			return nil, err
		}
		recs = append(recs, r...)
		if len(recs) > MaxRows {
			return nil, &DatasetError{URL: u, Message: fmt.Sprintf(
				"too many rows: the files read so far hold %d rows; at most %d rows are allowed per training job", len(recs), MaxRows)}
		}
	}
	cfg.Rows = len(recs)

	var usable []Record
	for _, r := range recs {
		if len(r.CorrectModels) == 0 {
			cfg.SkippedRows++
			continue
		}
		usable = append(usable, r)
	}
	classSet := usableClasses(recs) // as SubmitUpload counts them
	if len(usable) < MinRows {
		return nil, &DatasetError{Message: fmt.Sprintf(
			"only %d usable rows across %d file(s) (%d rows read, %d without any correct model); at least %d are needed",
			len(usable), files, len(recs), cfg.SkippedRows, MinRows)}
	}
	if len(classSet) > MaxClasses {
		return nil, &DatasetError{Message: fmt.Sprintf(
			"the data names %d distinct models; at most %d are allowed per router (training memory grows with rows × models)", len(classSet), MaxClasses)}
	}
	if len(classSet) < MinClasses {
		var only string
		for m := range classSet {
			only = m
		}
		return nil, &DatasetError{Message: fmt.Sprintf(
			"correct_models name only one distinct model (%s); at least %d are needed to route between", only, MinClasses)}
	}
	for m := range classSet {
		cfg.Classes = append(cfg.Classes, m)
	}
	sort.Strings(cfg.Classes)

	// Score on a held-out split. Rows without a correct model stay in: the per-model
	// quality heads learn from them that no model answers such prompts.
	trainIdx, testIdx := stratifiedSplit(recs, HoldoutFraction, s.seed)
	cfg.TrainRows, cfg.HoldoutRows = len(trainIdx), len(testIdx)
	fctx, end := s.stage(ctx, "fit held-out split", attribute.Int("switchyard.rows", len(trainIdx)))
	evalModel, rep, err := s.fit(fctx, pick(recs, trainIdx), nil)
	end(err)
	if err != nil {
		return nil, err
	}
	addTiming(cfg, rep)
	ectx, end := s.stage(ctx, "evaluate", attribute.Int("switchyard.rows", len(testIdx)))
	metrics, tradeoff, err := evaluate(ectx, evalModel, rep, pick(recs, trainIdx), pick(recs, testIdx), s.pricesFor(j, cfg.Classes), s.maxLoss)
	end(err)
	_ = evalModel.Close()
	if err != nil {
		return nil, fmt.Errorf("score the held-out split: %w", err)
	}
	metrics.Tasks, metrics.TaskPriorWeight = rep.Tasks, rep.TaskPriorWeight
	metrics.TaskExperts, metrics.TaskExpertWeight = rep.TaskExperts, rep.TaskExpertWeight
	if rep.TaskExpertWeight == 0 {
		metrics.TaskExperts = 0
	}

	// The final router learns from every row, with the regularisation chosen on the
	// evaluation fit's validation split (no second search).
	cfg.L2 = rep.L2
	fctx, end = s.stage(ctx, "fit all rows", attribute.Int("switchyard.rows", len(recs)))
	model, rep, err := s.fit(fctx, recs, rep)
	end(err)
	if err != nil {
		return nil, err
	}
	defer model.Close()
	addTiming(cfg, rep)
	cfg.EmbeddingModel = model.EmbedderName()
	if rep.L2 > 0 { // 0 when the final router has no softmax head: the evaluation fit's stays
		cfg.L2 = rep.L2
	}
	weights, err := model.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("internal error: encode the router: %w", err)
	}
	return &trainResult{
		record: modelRecord{
			ID:             "rm_" + newID(),
			Owner:          j.Owner,
			Version:        s.version,
			State:          ModelActive,
			EmbeddingModel: model.EmbedderName(),
			Classes:        model.Classes(),
			TrainingJobID:  j.ID,
			Metrics:        metrics,
			Tradeoff:       tradeoff,
		},
		weights: weights,
	}, nil
}

func addTiming(cfg *TrainingConfig, rep *inference.FitReport) {
	if rep == nil {
		return
	}
	cfg.Timing.EmbeddingTimeSeconds += rep.EmbeddingTime.Seconds()
	cfg.Timing.TrainingTimeSeconds += rep.TrainingTime.Seconds()
}

// fit trains a router on recs. With prev, the report of an earlier fit on part of the
// same data, the final fit reuses its regularisation and ranking instead of searching
// again.
func (s *Service) fit(ctx context.Context, recs []Record, prev *inference.FitReport) (*inference.Model, *inference.FitReport, error) {
	examples := make([]inference.Example, len(recs))
	for i, r := range recs {
		examples[i] = inference.Example{Text: r.Problem, Labels: r.CorrectModels, Scores: r.Scores, Task: r.Task}
	}
	opts := inference.FitOptions{
		Embedder:     s.embedder,
		ONNXModelDir: s.onnxDir,
		Cache:        s.cache,
		Seed:         s.seed,
		Logger:       s.log,
	}
	if prev != nil {
		if prev.L2 > 0 {
			opts.L2 = []float64{prev.L2}
		}
		if prev.QualityL2 > 0 {
			opts.QualityL2 = []float64{prev.QualityL2}
		}
		opts.Ranking, opts.BlendWeight = prev.Ranking, prev.BlendWeight
		if prev.Ranking == inference.RankQuality {
			// The softmax head would only rank, and the quality heads were chosen to: the
			// final router does without it (a fit of every row saved).
			opts.Estimator = inference.EstimatorQuality
		}
		opts.TaskPriorWeights = []float64{prev.TaskPriorWeight}
		opts.TaskExpertWeights = []float64{prev.TaskExpertWeight}
		if prev.TaskExpertL2 > 0 {
			opts.TaskExpertL2 = []float64{prev.TaskExpertL2}
		}
		opts.Calibration = prev.Calibration
		if opts.Calibration == nil {
			opts.SkipCalibration = true
		}
		if prev.TaskL2 > 0 {
			opts.TaskL2 = []float64{prev.TaskL2}
		}
	}
	if s.fitOpts != nil {
		s.fitOpts(&opts)
	}
	m, rep, err := inference.Fit(ctx, examples, opts)
	if err != nil {
		if errors.Is(err, inference.ErrInvalid) {
			return nil, nil, &DatasetError{Message: "cannot train on this data: " + err.Error()}
		}
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		return nil, nil, fmt.Errorf("internal error: training failed: %w", err)
	}
	return m, rep, nil
}

// pricesFor returns the prices of classes: the job's own, else the service's lookup.
func (s *Service) pricesFor(j *jobRecord, classes []string) map[string]float64 {
	out := map[string]float64{}
	for _, c := range classes {
		if p, ok := j.Prices[c]; ok {
			out[c] = p
		} else if s.prices != nil {
			if p, ok := s.prices(c); ok {
				out[c] = p
			}
		}
	}
	return out
}

func pick(recs []Record, idx []int) []Record {
	out := make([]Record, len(idx))
	for i, k := range idx {
		out[i] = recs[k]
	}
	return out
}
