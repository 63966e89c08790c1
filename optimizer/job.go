package optimizer

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/switchyard-ai/switchyard/fetch"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store"
)

// Status is an optimization job's state.
type Status string

// The job states of the spec. queued → running → completed | failed | interrupted;
// queued → interrupted on cancel.
const (
	StatusQueued      Status = "queued"
	StatusRunning     Status = "running"
	StatusCompleted   Status = "completed"
	StatusInterrupted Status = "interrupted"
	StatusFailed      Status = "failed"
)

// Terminal reports whether s is a final state.
func (s Status) Terminal() bool {
	return s == StatusCompleted || s == StatusInterrupted || s == StatusFailed
}

// OptimizerAgentOpt is the only optimizer: iterative rewriting of the EDITABLE section's
// system prompt by a proposer model, with paired acceptance on train rows.
const OptimizerAgentOpt = "agentopt"

// Defaults and bounds of a Request (the spec's submit body).
const (
	DefaultNIterations    = 15
	MaxNIterations        = 50
	DefaultOverallTimeout = 3600 * time.Second
	DefaultLLMCallTimeout = 300 * time.Second
	DefaultSandboxTimeout = 600 * time.Second
)

// Request is a job submission. Zero durations and NIterations take the defaults. The
// library accepts any positive duration (tests use short ones); the HTTP layer enforces the
// spec's bounds in seconds.
type Request struct {
	Optimizer      string
	InputURL       string
	TargetModels   []string
	NIterations    int
	OverallTimeout time.Duration
	LLMCallTimeout time.Duration
	SandboxTimeout time.Duration
	// Seed, when set, draws this job's train/held-out split and minibatches (as a DSPy
	// optimizer's seed does); nil takes the service's (WithSeed, default DefaultSeed). The
	// same bundle, seed and model answers give the same job.
	Seed *uint64
}

// Validate reports whether Submit would accept r (with the spec's messages); r is not
// changed.
func (r Request) Validate() error {
	c := r
	c.TargetModels = append([]string(nil), r.TargetModels...)
	return c.normalize()
}

// normalize fills defaults and validates, with the spec's messages.
func (r *Request) normalize() error {
	if r.Optimizer == "" {
		r.Optimizer = OptimizerAgentOpt
	}
	if r.Optimizer != OptimizerAgentOpt {
		return invalid("optimizer", "optimizer must be %q, got %q", OptimizerAgentOpt, r.Optimizer)
	}
	if strings.TrimSpace(r.InputURL) == "" { // blank is missing too
		return invalid("input_url", "agentopt requires input_url")
	}
	if u, err := url.Parse(r.InputURL); err != nil || u.Scheme == "" {
		return invalid("input_url", "input_url must be an absolute URL, got %q", fetch.Redact(r.InputURL))
	}
	if len(r.TargetModels) == 0 {
		return invalid("target_models", "agentopt requires target_models")
	}
	seen := map[string]bool{}
	for i, m := range r.TargetModels {
		if _, _, err := providers.ParseModel(m); err != nil {
			return invalid("target_models", "target_models[%d] must be provider/model, got %q", i, m)
		}
		if seen[m] {
			return invalid("target_models", "target_models[%d] repeats %q", i, m)
		}
		seen[m] = true
	}
	if r.NIterations == 0 {
		r.NIterations = DefaultNIterations
	}
	if r.NIterations < 1 || r.NIterations > MaxNIterations {
		return invalid("n_iterations", "n_iterations must be 1-50")
	}
	for _, d := range []struct {
		field string
		v     *time.Duration
		def   time.Duration
	}{
		{"overall_timeout_seconds", &r.OverallTimeout, DefaultOverallTimeout},
		{"llm_call_timeout_seconds", &r.LLMCallTimeout, DefaultLLMCallTimeout},
		{"sandbox_timeout_seconds", &r.SandboxTimeout, DefaultSandboxTimeout},
	} {
		if *d.v == 0 {
			*d.v = d.def
		}
		if *d.v < 0 {
			return invalid(d.field, "%s must be positive", d.field)
		}
	}
	return nil
}

// Submitted is the answer to a submission (the spec's Optimization job): Status is always
// StatusQueued.
type Submitted struct {
	JobID   string `json:"job_id"`
	Status  Status `json:"status" jsonschema:"enum=queued"`
	Version string `json:"version"`
}

// JobStatus is a job's progress (the spec's Optimization job status). The progress fields
// describe the target model being optimized (CurrentModel) — with several target models,
// each starts again from iteration 0.
type JobStatus struct {
	JobID            string `json:"job_id"`
	Status           Status `json:"status" jsonschema:"enum=queued,enum=running,enum=completed,enum=interrupted,enum=failed"`
	CurrentIteration int    `json:"current_iteration"`
	NIterations      int    `json:"n_iterations"`
	// BestScore and BaselineScore are train-split scores of the model in progress; absent
	// until its baseline has been measured (a real 0 is not "not yet").
	BestScore     *float64 `json:"best_score,omitempty" jsonschema:"description=best mean train score so far of the model in progress; absent until its baseline is measured (never 0 for not measured)"`
	BaselineScore *float64 `json:"baseline_score,omitempty" jsonschema:"description=original agent's mean train score (iteration 0) of the model in progress; absent until measured"`
	ErrorMessage  string   `json:"error_message,omitempty"`
	// BestPrompt is the best system prompt so far of the model in progress (extension), so
	// a running job's progress can be read before its results; absent until its baseline
	// is measured (it is then the original prompt until an iteration is kept).
	BestPrompt   string   `json:"best_prompt,omitempty" jsonschema:"description=best system prompt so far of the model in progress; absent until its baseline is measured"`
	CurrentModel string   `json:"current_model,omitempty"`
	TargetModels []string `json:"target_models"`
	// ModelsDone counts target models whose optimization has finished.
	ModelsDone int        `json:"models_done"`
	CreatedAt  time.Time  `json:"created_at"`
	StartedAt  *time.Time `json:"started_at,omitempty"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
}

// Results is a job's outcome (the spec's Optimization result).
type Results struct {
	JobID        string        `json:"job_id"`
	Status       Status        `json:"status" jsonschema:"enum=queued,enum=running,enum=completed,enum=interrupted,enum=failed"`
	ErrorMessage string        `json:"error_message,omitempty"`
	Results      []ModelResult `json:"results"`
	// CutRuns is what runs of the job cut short spent (extension): a worker that died, a
	// restart or a shutdown made the job start over, dropping their partial results.
	// Absent when every run finished. Not included in Results' figures.
	CutRuns *CutRunsUsage `json:"cut_runs,omitempty"`
}

// CutRunsUsage is what a job's runs cut short spent: the task model's usage as the
// gateway metered their keys (read when a later run reclaimed them) or as last recorded,
// and the proposer's as last recorded.
type CutRunsUsage struct {
	// Runs counts the runs cut short.
	Runs     int     `json:"runs"`
	Tokens   int64   `json:"tokens"`
	CostUSD  float64 `json:"cost_usd"`
	Task     Usage   `json:"task_model"`
	Proposer Usage   `json:"proposer"`
}

// add folds a cut run's model result usage into c.
func (c *CutRunsUsage) add(task, proposer Usage) {
	c.Task.add(task)
	c.Proposer.add(proposer)
	c.Tokens = c.Task.Tokens + c.Proposer.Tokens
	c.CostUSD = c.Task.CostUSD + c.Proposer.CostUSD
}

// ModelResult is the outcome for one target model.
type ModelResult struct {
	Model     string `json:"model"`
	Optimizer string `json:"optimizer"`
	// ProposerPrompt names the proposer's prompt file (ProposerPromptVersion) when the
	// proposer reports one.
	ProposerPrompt string `json:"proposer_prompt,omitempty"`
	OriginalPrompt string `json:"original_prompt"`
	// Metric names what the scores measure (extension): the METRIC eval.py declares (e.g.
	// "exact_match"), else DefaultMetric. Absent in results of jobs run before it.
	Metric string `json:"metric,omitempty" jsonschema:"description=what the scores measure: the METRIC name eval.py declares (e.g. exact_match) or eval.py:score"`
	// OptimizedPrompt is the best prompt found (the original when nothing beat it).
	OptimizedPrompt string `json:"optimized_prompt"`
	// BaselineScore is the original agent's mean score on the train split (iteration 0);
	// absent when the job ended before it was measured.
	BaselineScore *float64 `json:"baseline_score,omitempty" jsonschema:"description=original agent's mean train score (iteration 0); absent when the job ended before it was measured"`
	// TrainScore is the best agent's mean score on the train split; absent with
	// BaselineScore.
	TrainScore *float64 `json:"train_score,omitempty" jsonschema:"description=best agent's mean train score; absent when the job ended before the baseline was measured"`
	// TestScore is the best agent's mean score on the held-out split; null when the job was
	// interrupted before the test split could be scored.
	TestScore *float64 `json:"test_score" jsonschema:"nullable,description=best agent's mean score on the held-out split; null when the job was cancelled or ended before the held-out runs"`
	// OriginalTestScore is the original agent's mean score on the held-out split.
	OriginalTestScore *float64 `json:"original_test_score" jsonschema:"nullable,description=original agent's mean score on the held-out split; null like test_score"`
	IterationsRun     int      `json:"iterations_run"`
	IterationsKept    int      `json:"iterations_kept"`
	// TrainRows and TestRows count the dataset's rows in the train split (DSPy's trainset:
	// the baseline, the minibatches and the acceptance rule) and in the held-out split the
	// test scores are measured on (DSPy's valset); Seed drew that split and the minibatches,
	// so the same dataset and seed give the same split. Absent in results of jobs run before
	// they were recorded.
	TrainRows int `json:"train_rows,omitempty" jsonschema:"description=rows of the train split (the baseline\\, minibatches and acceptance rule use them)"`
	TestRows  int `json:"test_rows,omitempty" jsonschema:"description=rows of the held-out split test_score and original_test_score are measured on"`
	// HeldOut says where the held-out rows come from: HeldOutSplit (30% of dataset.json,
	// drawn by Seed) or HeldOutValset (the bundle's valset.json; dataset.json is then all
	// train rows). Absent in results of jobs run before it.
	HeldOut string  `json:"held_out,omitempty" jsonschema:"enum=split,enum=valset,description=where the held-out rows come from: split (30% of dataset.json drawn by seed) or valset (the bundle's valset.json; dataset.json is then all train rows)"`
	Seed    *uint64 `json:"seed,omitempty" jsonschema:"description=seed of the train/held-out split and of the minibatch draws"`
	// AgentCodeURL serves the best agent.py (public, unguessable URL).
	AgentCodeURL string `json:"agent_code_url,omitempty"`
	// Complete is false when the job ended (timeout, cancel) before this model's loop did.
	Complete bool `json:"complete"`
	// Tokens and CostUSD total the task-model and proposer usage; Usage splits them.
	Tokens  int64       `json:"tokens"`
	CostUSD float64     `json:"cost_usd"`
	Usage   ResultUsage `json:"usage"`
	// History holds iteration 0 (the baseline) and every proposed variant.
	History []Iteration `json:"history"`
}

// ResultUsage splits a model's spending.
type ResultUsage struct {
	Task     Usage `json:"task_model"`
	Proposer Usage `json:"proposer"`
	// TaskSource says where the task-model figures come from: "gateway" (metered by
	// Switchyard's gateway for the job's key) or "agent_reported" (the usage dicts run_batch
	// returned, when the job's key is not metered).
	TaskSource string `json:"task_source"`
}

// Iteration is one step of the loop: iteration 0 is the baseline.
type Iteration struct {
	Iteration int `json:"iteration"`
	// Prompt is the candidate confirmed on the whole train split, else the first candidate.
	Prompt string `json:"prompt"`
	// TrainScore is that candidate's mean train score; absent when no candidate ran on the
	// whole train split (none beat the best agent on the minibatch, or none could run).
	TrainScore *float64 `json:"train_score,omitempty" jsonschema:"description=mean train score of the candidate confirmed on the whole train split; absent when no candidate ran on the whole split"`
	Kept       bool     `json:"kept"`
	// Comparison is the paired test of the confirmed candidate against the best agent at
	// that time, on the whole train split.
	Comparison *Comparison `json:"comparison,omitempty"`
	// MinibatchRows is how many train rows the candidates were first run on; absent when
	// they ran on the whole split.
	MinibatchRows int `json:"minibatch_rows,omitempty"`
	// Candidates are the iteration's proposals, in the proposer's order, with their
	// minibatch outcome.
	Candidates []CandidateOutcome `json:"candidates,omitempty"`
	// RowsRun counts the train rows run in the sandbox in this iteration (each candidate's
	// minibatch plus the confirmation).
	RowsRun int `json:"rows_run"`
	// Rechecked counts the train rows both agents ran again because the candidate was
	// better on the mean but lost rows (the comparison then uses the mean of two runs).
	Rechecked int `json:"rechecked_rows,omitempty"`
	// Note says why a variant was not scored or was rejected (bad proposal, FIXED section
	// changed, the agent failed in the sandbox, ...).
	Note       string  `json:"note,omitempty"`
	DurationMS float64 `json:"duration_ms"`
}

// CandidateOutcome is one proposal of an iteration.
type CandidateOutcome struct {
	Prompt string `json:"prompt"`
	// MinibatchScore is its mean on the minibatch, BestMinibatchScore the best agent's on
	// the same rows; both absent when it did not run.
	MinibatchScore     *float64 `json:"minibatch_score,omitempty" jsonschema:"description=candidate's mean on the minibatch rows; absent when it did not run"`
	BestMinibatchScore *float64 `json:"best_minibatch_score,omitempty" jsonschema:"description=best agent's mean on the same minibatch rows; absent when the candidate did not run"`
	// Confirmed is true for the candidate that went on to the rest of the train split.
	Confirmed bool `json:"confirmed"`
	// Note says why it stopped (not better on the minibatch, a repeat, rejected, failed).
	Note string `json:"note,omitempty"`
}

// job is the stored record (store.OptimizationJobs, keyed by id).
type job struct {
	ID        string `json:"id"`
	Owner     string `json:"owner"`
	Version   string `json:"version"`
	Optimizer string `json:"optimizer"`
	InputURL  string `json:"input_url"`
	// GuardedURLs records that the process that accepted the job refused local URLs (no
	// --allow-local-urls): the job's URLs are then fetched guarded wherever it runs. Records
	// from before it follow the running process's setting.
	GuardedURLs bool `json:"guarded_urls,omitempty"`
	// Bundle describes the bundle Submit downloaded and checked, kept in
	// store.OptimizationBundles until the job ends; the job runs it rather than downloading
	// input_url again. nil in records from before it (they download it again).
	Bundle         *bundleCopy `json:"bundle,omitempty"`
	TargetModels   []string    `json:"target_models"`
	NIterations    int         `json:"n_iterations"`
	OverallTimeout Duration    `json:"overall_timeout"`
	LLMCallTimeout Duration    `json:"llm_call_timeout"`
	SandboxTimeout Duration    `json:"sandbox_timeout"`
	// Seed is the submission's seed (Request.Seed); nil: the running service's.
	Seed             *uint64     `json:"seed,omitempty"`
	Status           Status      `json:"status"`
	ErrorMessage     string      `json:"error_message,omitempty"`
	CurrentModel     string      `json:"current_model,omitempty"`
	CurrentIteration int         `json:"current_iteration"`
	BestScore        *float64    `json:"best_score,omitempty"` // nil until the baseline is measured
	BaselineScore    *float64    `json:"baseline_score,omitempty"`
	Results          []storedRes `json:"results"`
	Attempts         int         `json:"attempts"`
	// HeartbeatAt is refreshed by the worker running the job when the queue is shared
	// (WithQueue), so another process can tell a dead worker from a slow job.
	HeartbeatAt time.Time `json:"heartbeat_at,omitzero"`
	// CancelRequested is set by Cancel of a running job: the worker of another process
	// running it picks it up with its heartbeat, and a run cut short (a dead worker, a
	// restart) before it stopped is ended as cancelled, not re-run.
	CancelRequested bool `json:"cancel_requested,omitempty"`
	// OpenKeys are the gateway keys runs minted and have not revoked yet (KeyReclaimer).
	OpenKeys []openKey `json:"open_keys,omitempty"`
	// CutRuns is what runs cut short spent (see Results.CutRuns).
	CutRuns    *CutRunsUsage `json:"cut_runs,omitempty"`
	CreatedAt  time.Time     `json:"created_at"`
	StartedAt  *time.Time    `json:"started_at,omitempty"`
	FinishedAt *time.Time    `json:"finished_at,omitempty"`
}

// openKey is a gateway key a run minted for a model and has not revoked.
type openKey struct {
	Ref   string `json:"ref"`
	Model string `json:"model"`
	// Recorded is the task-model usage the run last recorded for the model, kept when the
	// run's results are dropped: what is counted if the key can no longer be read.
	Recorded *Usage `json:"recorded,omitempty"`
}

// dropCutRun starts j over after a run cut short: its partial results are dropped and what
// they spent goes to j.CutRuns — all but the task-model usage of models whose key is still
// open, which the key itself will tell (reclaimKeys; the recorded figure is kept with the
// key as the fallback). It returns the tokens of the artifacts the cut run saved: nothing
// refers to them once its results are gone, so the caller deletes them with the record.
func (j *job) dropCutRun() (artifacts []string) {
	if j.CutRuns == nil {
		j.CutRuns = &CutRunsUsage{}
	}
	j.CutRuns.Runs++
	for _, r := range j.Results {
		task := r.Usage.Task
		// The model's newest open key is this run's (older ones have their figure already).
		for i := len(j.OpenKeys) - 1; i >= 0; i-- {
			if k := &j.OpenKeys[i]; k.Model == r.Model && k.Recorded == nil {
				recorded := task
				k.Recorded, task = &recorded, Usage{}
				break
			}
		}
		j.CutRuns.add(task, r.Usage.Proposer)
		if r.ArtifactToken != "" {
			artifacts = append(artifacts, r.ArtifactToken)
		}
	}
	j.Results, j.CurrentModel, j.CurrentIteration = nil, "", 0
	j.BestScore, j.BaselineScore = nil, nil
	return artifacts
}

// deleteArtifacts deletes the artifacts of tokens through tx.
func deleteArtifacts(ctx context.Context, tx store.Writer, tokens []string) error {
	for _, tok := range tokens {
		if err := tx.Delete(ctx, store.Artifacts, artifactKey(tok)); err != nil {
			return err
		}
	}
	return nil
}

// storedRes is a ModelResult with its artifact token, as stored.
type storedRes struct {
	ModelResult
	ArtifactToken string `json:"artifact_token,omitempty"`
	// BestAgent is the best agent.py found so far, kept with the job until it is saved as
	// the artifact (ArtifactToken), so that a job ended after its run was lost (a crash
	// after a cancel, a dead worker) still gets its agent_code_url (keepBestAgents).
	BestAgent string `json:"best_agent,omitempty"`
}

// keepBestAgents saves, in tx, the best agent.py of each of j's results that has one but
// no artifact yet (its run ended without saving it), as the run would have, and points the
// result at it.
func (s *Service) keepBestAgents(ctx context.Context, tx store.Tx, j *job) error {
	for i := range j.Results {
		r := &j.Results[i]
		if r.ArtifactToken != "" || r.BestAgent == "" {
			continue
		}
		tok, err := newID("")
		if err != nil {
			return err
		}
		a := artifact{JobID: j.ID, Owner: j.Owner, Model: r.Model, Name: "agent.py", Content: r.BestAgent, CreatedAt: s.now().UTC()}
		if err := store.PutJSON(ctx, tx, store.Artifacts, artifactKey(tok), a); err != nil {
			return fmt.Errorf("optimizer: save the best agent.py of job %s: %w", j.ID, err)
		}
		r.ArtifactToken, r.BestAgent = tok, ""
	}
	return nil
}

// Duration is a time.Duration stored as a Go duration string ("1h0m0s").
type Duration time.Duration

// MarshalJSON implements json.Marshaler.
func (d Duration) MarshalJSON() ([]byte, error) {
	return []byte(fmt.Sprintf("%q", time.Duration(d).String())), nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if _, err := fmt.Sscanf(string(b), "%q", &s); err != nil {
		return fmt.Errorf("duration: %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

func (j *job) status() JobStatus {
	done := 0
	for _, r := range j.Results {
		if r.Complete {
			done++
		}
	}
	var best string
	if n := len(j.Results); n > 0 && j.Results[n-1].Model == j.CurrentModel && j.Results[n-1].BaselineScore != nil {
		best = j.Results[n-1].OptimizedPrompt
	}
	return JobStatus{BestPrompt: best,
		JobID: j.ID, Status: j.Status, CurrentIteration: j.CurrentIteration, NIterations: j.NIterations,
		BestScore: j.BestScore, BaselineScore: j.BaselineScore, ErrorMessage: j.ErrorMessage,
		CurrentModel: j.CurrentModel, TargetModels: append([]string(nil), j.TargetModels...), ModelsDone: done,
		CreatedAt: j.CreatedAt, StartedAt: j.StartedAt, FinishedAt: j.FinishedAt,
	}
}
