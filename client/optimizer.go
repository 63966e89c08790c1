package client

import (
	"context"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// DefaultOptimizePollInterval is how often AgentOptimizer.Wait polls when given 0.
const DefaultOptimizePollInterval = 30 * time.Second

// Optimization job states.
const (
	OptimizeQueued      = "queued"
	OptimizeRunning     = "running"
	OptimizeCompleted   = "completed"
	OptimizeFailed      = "failed"
	OptimizeInterrupted = "interrupted"
)

// OptimizeRequest is the body of POST /api/v1/optimize. Zero numbers take the server's
// defaults (15 iterations, 3600 s overall, 300 s per LLM call, 600 s per sandbox run).
type OptimizeRequest struct {
	// Optimizer is "agentopt" (the default when empty).
	Optimizer string `json:"optimizer"`
	// InputURL is the public URL of the ZIP bundle (agent.py, eval.py, dataset.json and,
	// optionally, valset.json: the held-out rows, DSPy's valset).
	InputURL string `json:"input_url"`
	// TargetModels are the "provider/model" strings to optimize for.
	TargetModels []string `json:"target_models"`
	// TargetModel is added to TargetModels when set (the spec's single-model form).
	TargetModel           string `json:"-"`
	NIterations           int    `json:"n_iterations,omitempty"`
	OverallTimeoutSeconds int    `json:"overall_timeout_seconds,omitempty"`
	LLMCallTimeoutSeconds int    `json:"llm_call_timeout_seconds,omitempty"`
	SandboxTimeoutSeconds int    `json:"sandbox_timeout_seconds,omitempty"`
	// Seed, when set, draws the job's train/held-out split and minibatches (a Switchyard
	// extension, as DSPy optimizers take one; with a valset.json in the bundle, only the
	// minibatches); nil takes the server's (42). Results report it.
	Seed *uint64 `json:"seed,omitempty"`
}

// OptimizationJob is the answer to a submission.
type OptimizationJob struct {
	JobID   string `json:"job_id"`
	Status  string `json:"status"`
	Version string `json:"version"`
}

// OptimizationStatus is the live state of an optimization job.
type OptimizationStatus struct {
	JobID string `json:"job_id,omitempty"`
	// Status is queued, running, completed, failed or interrupted.
	Status string `json:"status"`
	// CurrentIteration is the latest iteration completed; 0 is the baseline.
	CurrentIteration int `json:"current_iteration"`
	NIterations      int `json:"n_iterations"`
	// BestScore and BaselineScore are 0–1 train-split scores; nil before the baseline ran.
	BestScore     *float64 `json:"best_score,omitempty"`
	BaselineScore *float64 `json:"baseline_score,omitempty"`
	// ErrorMessage is set for failed and interrupted jobs.
	ErrorMessage string `json:"error_message,omitempty"`
	// BestPrompt is the best system prompt so far of the model in progress; "" until its
	// baseline is measured (and from servers before it was reported).
	BestPrompt string `json:"best_prompt,omitempty"`
	// CurrentModel is the target model being optimized; with several target models each
	// starts again from iteration 0. ModelsDone counts those finished.
	CurrentModel string   `json:"current_model,omitempty"`
	TargetModels []string `json:"target_models,omitempty"`
	ModelsDone   int      `json:"models_done"`
	CreatedAt    string   `json:"created_at,omitempty"`
	StartedAt    string   `json:"started_at,omitempty"`
	FinishedAt   string   `json:"finished_at,omitempty"`
}

// Done reports whether the job reached completed, failed or interrupted.
func (s *OptimizationStatus) Done() bool {
	return s.Status == OptimizeCompleted || s.Status == OptimizeFailed || s.Status == OptimizeInterrupted
}

// IterationRecord is one iteration of the loop: the prompt tried, its train score and
// whether it was kept. Iteration 0 is the baseline.
type IterationRecord struct {
	Iteration int    `json:"iteration"`
	Prompt    string `json:"prompt,omitempty"`
	// TrainScore is the confirmed candidate's mean train score; nil when no candidate ran on
	// the whole train split (none beat the best agent on the minibatch, or none could run).
	TrainScore *float64 `json:"train_score,omitempty"`
	Kept       bool     `json:"kept"`
	// MinibatchRows is how many train rows the candidates were first run on (0: the whole
	// split); Candidates are the iteration's proposals; RowsRun counts the train rows run.
	MinibatchRows int                `json:"minibatch_rows,omitempty"`
	Candidates    []CandidateOutcome `json:"candidates,omitempty"`
	RowsRun       int                `json:"rows_run,omitempty"`
	// Comparison is the paired test of the confirmed candidate against the best agent at
	// that time on the whole train split (nil when no candidate was confirmed);
	// RecheckedRows counts the rows both ran again for it.
	Comparison    *OptimizationComparison `json:"comparison,omitempty"`
	RecheckedRows int                     `json:"rechecked_rows,omitempty"`
	// Note says why a variant was not scored or was rejected.
	Note       string  `json:"note,omitempty"`
	DurationMS float64 `json:"duration_ms,omitempty"`
}

// OptimizationComparison is a paired test of a candidate against the best agent: rows it
// won, lost and tied, the mean score difference, the test's p-value and whether it was
// accepted.
type OptimizationComparison struct {
	Wins      int     `json:"wins"`
	Losses    int     `json:"losses"`
	Ties      int     `json:"ties"`
	MeanDelta float64 `json:"mean_delta"`
	PValue    float64 `json:"p_value"`
	Accepted  bool    `json:"accepted"`
}

// OptimizationSpend is tokens and their USD cost.
type OptimizationSpend struct {
	Tokens  int64   `json:"tokens"`
	CostUSD float64 `json:"cost_usd"`
}

// OptimizationUsage splits a model's spending between the task model and the proposer;
// TaskSource is "gateway" (metered by the gateway for the job's key) or "agent_reported"
// (the usage run_batch returned).
type OptimizationUsage struct {
	Task       OptimizationSpend `json:"task_model"`
	Proposer   OptimizationSpend `json:"proposer"`
	TaskSource string            `json:"task_source"`
}

// OptimizationCutRuns is what runs of a job cut short (a dead worker, a restart) spent,
// not included in the results' figures.
type OptimizationCutRuns struct {
	Runs     int               `json:"runs"`
	Tokens   int64             `json:"tokens"`
	CostUSD  float64           `json:"cost_usd"`
	Task     OptimizationSpend `json:"task_model"`
	Proposer OptimizationSpend `json:"proposer"`
}

// CandidateOutcome is one proposal of an iteration and how it did on the minibatch.
type CandidateOutcome struct {
	Prompt string `json:"prompt"`
	// MinibatchScore and BestMinibatchScore are the candidate's and the best agent's means
	// on the minibatch; nil when it did not run.
	MinibatchScore     *float64 `json:"minibatch_score,omitempty"`
	BestMinibatchScore *float64 `json:"best_minibatch_score,omitempty"`
	// Confirmed marks the candidate that went on to the rest of the train split.
	Confirmed bool   `json:"confirmed"`
	Note      string `json:"note,omitempty"`
}

// OptimizationResult is the outcome for one target model.
type OptimizationResult struct {
	Model     string `json:"model"`
	Optimizer string `json:"optimizer"`
	// ProposerPrompt names the proposer's prompt file when the proposer reports one.
	ProposerPrompt  string `json:"proposer_prompt,omitempty"`
	OriginalPrompt  string `json:"original_prompt"`
	OptimizedPrompt string `json:"optimized_prompt"`
	// Metric names what the scores measure: the METRIC eval.py declares (e.g.
	// "exact_match"), else "eval.py:score"; "" from servers before it was reported.
	Metric string `json:"metric,omitempty"`
	// BaselineScore is the original agent's train-split score (iteration 0); nil when the
	// job ended before it was measured.
	BaselineScore *float64 `json:"baseline_score,omitempty"`
	// TrainScore is the best agent's train-split score; nil with BaselineScore.
	TrainScore *float64 `json:"train_score,omitempty"`
	// TestScore is the best agent's held-out score; nil when the job ended before it was
	// scored. OriginalTestScore is the submitted agent's.
	TestScore         *float64 `json:"test_score"`
	OriginalTestScore *float64 `json:"original_test_score,omitempty"`
	IterationsRun     int      `json:"iterations_run"`
	IterationsKept    int      `json:"iterations_kept"`
	// TrainRows and TestRows count the rows of the train split and of the held-out split
	// the test scores are measured on; Seed drew the split (0 and nil for jobs run before
	// servers reported them).
	TrainRows int `json:"train_rows,omitempty"`
	TestRows  int `json:"test_rows,omitempty"`
	// HeldOut says where the held-out rows come from: "split" (30% of dataset.json, drawn
	// by Seed) or "valset" (the bundle's valset.json, DSPy's valset; dataset.json is then
	// all train rows). "" from servers before it.
	HeldOut      string  `json:"held_out,omitempty"`
	Seed         *uint64 `json:"seed,omitempty"`
	AgentCodeURL string  `json:"agent_code_url"`
	// Complete is false when the job ended before this model's loop did.
	Complete bool `json:"complete"`
	// Tokens and CostUSD total the task-model and proposer usage.
	Tokens  int64   `json:"tokens"`
	CostUSD float64 `json:"cost_usd"`
	// Usage splits Tokens and CostUSD between the task model and the proposer.
	Usage OptimizationUsage `json:"usage"`
	// History lists every iteration, 0 being the baseline.
	History []IterationRecord `json:"history,omitempty"`
}

// OptimizationResults is the answer of the results operation.
type OptimizationResults struct {
	JobID        string               `json:"job_id"`
	Status       string               `json:"status"`
	ErrorMessage string               `json:"error_message,omitempty"`
	Results      []OptimizationResult `json:"results"`
	// CutRuns is what runs cut short spent (nil when every run finished).
	CutRuns *OptimizationCutRuns `json:"cut_runs,omitempty"`
}

// AgentOptimizer submits agent prompt optimization jobs and follows them. It remembers
// the latest job id (from Submit), so Status, Wait, Results and Cancel need no explicit
// id. It is safe for concurrent use.
type AgentOptimizer struct {
	c     *Client
	mu    sync.Mutex
	jobID string
}

// AgentOptimizer returns an optimizer bound to the client.
func (c *Client) AgentOptimizer() *AgentOptimizer { return &AgentOptimizer{c: c} }

// JobID returns the remembered job id ("" before Submit or UseJob).
func (o *AgentOptimizer) JobID() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.jobID
}

// UseJob makes id the remembered job.
func (o *AgentOptimizer) UseJob(id string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.jobID = id
}

func (o *AgentOptimizer) id(op string) (string, error) {
	id := o.JobID()
	if id == "" {
		return "", fmt.Errorf("client: AgentOptimizer.%s: %w (call Submit or UseJob first)", op, ErrMissingID)
	}
	return id, nil
}

// Submit starts an optimization job and remembers its id. When the server refuses it (an
// *Error: 422, 429, 503, ...) the remembered job id stays as it was: no new job exists,
// so Status, Wait and Results keep following the earlier one.
func (o *AgentOptimizer) Submit(ctx context.Context, req *OptimizeRequest) (*OptimizationJob, error) {
	r := *req
	if r.Optimizer == "" {
		r.Optimizer = "agentopt"
	}
	r.TargetModels = append([]string{}, r.TargetModels...)
	if r.TargetModel != "" {
		r.TargetModels = append(r.TargetModels, r.TargetModel)
	}
	var job OptimizationJob
	if err := o.c.do(ctx, http.MethodPost, "/api/v1/optimize", nil, &r, &job); err != nil {
		return nil, err
	}
	o.UseJob(job.JobID)
	return &job, nil
}

// MaxAgentCodeBytes bounds what AgentCode reads (a bundle's whole content is at most
// 50 MiB; agent.py is part of it).
const MaxAgentCodeBytes = 50 << 20

// AgentCode downloads the best agent.py of result r (from Results): the submitted agent
// with the winning prompt in its EDITABLE section, ready to run. The URL is the
// credential, so it is fetched without the client's API key (which never leaves for a
// --public-url host). A result without agent_code_url (the job ended before its baseline)
// is an error matching ErrMissingID, and no request is sent.
func (o *AgentOptimizer) AgentCode(ctx context.Context, r *OptimizationResult) ([]byte, error) {
	if r == nil || r.AgentCodeURL == "" {
		return nil, fmt.Errorf("client: AgentCode: the result has no agent_code_url (the job ended before its baseline was measured): %w", ErrMissingID)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.AgentCodeURL, nil)
	if err != nil {
		return nil, fmt.Errorf("client: AgentCode: %w", err)
	}
	if o.c.ua != "" {
		req.Header.Set("User-Agent", o.c.ua)
	}
	resp, err := o.c.send(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	code, err := io.ReadAll(io.LimitReader(resp.Body, MaxAgentCodeBytes+1))
	if err != nil {
		return nil, fmt.Errorf("client: AgentCode: reading %s: %w", r.AgentCodeURL, err)
	}
	if len(code) > MaxAgentCodeBytes {
		return nil, fmt.Errorf("client: AgentCode: %s is larger than %d bytes", r.AgentCodeURL, MaxAgentCodeBytes)
	}
	return code, nil
}

// Status returns the live state of the remembered job.
func (o *AgentOptimizer) Status(ctx context.Context) (*OptimizationStatus, error) {
	id, err := o.id("Status")
	if err != nil {
		return nil, err
	}
	var st OptimizationStatus
	if err := o.c.do(ctx, http.MethodGet, "/api/v1/optimize/status", url.Values{"job_id": {id}}, nil, &st); err != nil {
		return nil, err
	}
	if st.JobID == "" {
		st.JobID = id
	}
	return &st, nil
}

// Watch polls the remembered job every pollEvery (DefaultOptimizePollInterval when 0),
// yielding each status, and stops after completed, failed or interrupted, on the first
// error, or when ctx ends. A status other than those and queued or running (one this
// client does not know) is yielded, then an error matching ErrUnknownState ends the watch.
func (o *AgentOptimizer) Watch(ctx context.Context, pollEvery time.Duration) iter.Seq2[*OptimizationStatus, error] {
	return poll(ctx, pollEvery, DefaultOptimizePollInterval, o.Status, (*OptimizationStatus).Done, func(s *OptimizationStatus) error {
		if s.Status == OptimizeQueued || s.Status == OptimizeRunning {
			return nil
		}
		return fmt.Errorf("client: optimization job %s is %q: %w", s.JobID, s.Status, ErrUnknownState)
	})
}

// Wait polls the remembered job every pollEvery (DefaultOptimizePollInterval when 0) until
// it is completed, failed or interrupted, and returns its last status. A failed or
// interrupted job is not an error of Wait: check Status and ErrorMessage. A state this
// client does not know ends the wait at once: the status is returned with an error
// matching ErrUnknownState.
func (o *AgentOptimizer) Wait(ctx context.Context, pollEvery time.Duration) (*OptimizationStatus, error) {
	return waitLast(o.Watch(ctx, pollEvery))
}

// Results returns the outcome of the remembered job. A job not finished yet answers an
// *Error with status 409 (errors.Is(err, ErrConflict)).
func (o *AgentOptimizer) Results(ctx context.Context) (*OptimizationResults, error) {
	id, err := o.id("Results")
	if err != nil {
		return nil, err
	}
	var res OptimizationResults
	if err := o.c.do(ctx, http.MethodGet, "/api/v1/optimize/results", url.Values{"job_id": {id}}, nil, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// Cancel stops the remembered job; it ends interrupted. It returns the job's status once
// the server saw its run stop (interrupted, with the cancel's ErrorMessage); a run slower
// to stop than the server waits (10 s), or running on another worker, is still "running":
// Wait for it.
func (o *AgentOptimizer) Cancel(ctx context.Context) (*OptimizationStatus, error) {
	id, err := o.id("Cancel")
	if err != nil {
		return nil, err
	}
	var st OptimizationStatus
	if err := o.c.do(ctx, http.MethodPost, "/api/v1/optimize/cancel", url.Values{"job_id": {id}}, nil, &st); err != nil {
		return nil, err
	}
	if st.JobID == "" {
		st.JobID = id
	}
	return &st, nil
}
