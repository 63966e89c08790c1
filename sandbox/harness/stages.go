package harness

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/switchyard-ai/switchyard/sandbox"
)

// StageSpec says what one stage of a run is: the backend prepares a workspace with
// Setup{Stage, Predicted, Nonce}, runs the harness in a fresh sandbox within Timeout, and
// finishes its collector with Expect.
type StageSpec struct {
	// Stage is StageAgent or StageScore.
	Stage Stage
	// Predicted are the agent stage's predictions (score stage).
	Predicted []string
	// Nonce is the secret the score stage's result must carry (score stage).
	Nonce string
	// Timeout is the wall-clock time left for this stage.
	Timeout time.Duration
	// Expect is what the stage's result frame must carry (for [Collector.Finish]).
	Expect Expect
}

// StageRunner runs one stage in a fresh sandbox of the backend.
type StageRunner func(ctx context.Context, spec StageSpec) (*sandbox.Result, error)

// RunStages runs a validated job as two sandboxed processes of the same backend: the agent
// stage (agent.py's run_batch over the inputs; the answers are not in its sandbox), then, if
// it succeeded, the score stage (eval.py's score over the answers and the agent stage's
// predictions, in a new sandbox without agent.py and without network). The scores come from
// the score stage only, so agent code can neither read the answers nor set its scores: not by
// printing a result frame, not by replacing eval in sys.modules, not by returning crafted
// predictions that eval.py prints (the score stage's frame must carry a random nonce only
// that sandbox was given). Both stages share the job's wall-clock deadline; the Result
// joins the predictions and usage of the first with the scores of the second, and the
// output tails of both.
func RunStages(ctx context.Context, job sandbox.Job, run StageRunner) (*sandbox.Result, error) {
	limits := job.Limits.WithDefaults()
	rows := len(job.Rows)
	start := time.Now()
	agent, err := run(ctx, StageSpec{Stage: StageAgent, Timeout: limits.Timeout, Expect: Expect{Rows: rows, Stage: StageAgent}})
	if err != nil {
		return agent, err
	}
	res := &sandbox.Result{Stdout: agent.Stdout, Stderr: agent.Stderr}
	left := limits.Timeout - time.Since(start)
	if left <= 0 {
		return res, &sandbox.JobError{Reason: sandbox.ReasonTimeout,
			Message: fmt.Sprintf("the run did not finish within the wall-clock limit of %s (run_batch took it all; score did not run)", limits.Timeout)}
	}
	nonce, err := newNonce()
	if err != nil {
		return nil, err
	}
	score, err := run(ctx, StageSpec{Stage: StageScore, Predicted: agent.Predictions, Nonce: nonce, Timeout: left,
		Expect: Expect{Rows: rows, Stage: StageScore, Nonce: nonce}})
	if score != nil {
		res.Stdout += score.Stdout
		res.Stderr += score.Stderr
	}
	if err != nil {
		if score == nil {
			return nil, err
		}
		return res, err
	}
	res.Predictions, res.Usage, res.Scores, res.Feedback = agent.Predictions, agent.Usage, score.Scores, score.Feedback
	return res, nil
}

// newNonce returns 128 random bits in hex.
func newNonce() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("%w: nonce: %v", sandbox.ErrUnavailable, err)
	}
	return hex.EncodeToString(b), nil
}
