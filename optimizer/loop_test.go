package optimizer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"math"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/fetch"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/sandbox"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

type env struct {
	st       *store.Store
	up       *scriptedUpstream
	runner   sandbox.Runner
	svc      *Service
	url      string
	proposer Proposer
}

// meteredKey is a test KeyMinter that hands out a fixed key and counts revocations.
type meteredKey struct {
	key     string
	minted  atomic.Int32
	revoked atomic.Int32
}

func (m *meteredKey) MintKey(_ context.Context, g KeyGrant) (*JobKey, error) {
	m.minted.Add(1)
	return &JobKey{Key: m.key, Revoke: func() { m.revoked.Add(1) }}, nil
}

func newEnv(t *testing.T, runner sandbox.Runner, minter KeyMinter, opts ...Option) *env {
	t.Helper()
	e := &env{st: memstore.New(), up: newScriptedUpstream(t, "job-key"), runner: runner}
	reg := providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "scripted", BaseURL: e.up.URL + "/v1", APIKey: "proposer-key"}))
	p, err := NewLLMProposer(reg, "scripted/proposer", nil)
	if err != nil {
		t.Fatal(err)
	}
	e.proposer = p
	if minter == nil {
		minter = StaticKey("job-key")
	}
	base := []Option{
		WithFetcher(&fetch.Fetcher{AllowLocal: true}),
		WithGateway(e.up.URL+"/v1", minter),
		WithPublicURL("https://sy.example"),
		WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
	}
	svc, err := New(e.st, runner, e.proposer, append(base, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	e.svc = svc
	e.url = serveBytes(t, zipFiles(t, bundleFiles(t)))
	return e
}

func (e *env) start(t *testing.T) {
	t.Helper()
	if err := e.svc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := e.svc.Close(ctx); err != nil {
			t.Errorf("Close: %v (a job did not stop when cancelled)", err)
		}
	})
}

func request(url string, n int) Request {
	return Request{Optimizer: "agentopt", InputURL: url, TargetModels: []string{"scripted/task"}, NIterations: n,
		OverallTimeout: time.Minute, LLMCallTimeout: 10 * time.Second, SandboxTimeout: 20 * time.Second}
}

// waitFor polls until the job reaches a terminal state (the deadline only guards a hang).
func waitFor(t *testing.T, svc *Service, id string) *JobStatus {
	t.Helper()
	deadline := time.Now().Add(45 * time.Second)
	for time.Now().Before(deadline) {
		st, err := svc.Status(context.Background(), "alice", id)
		if err != nil {
			t.Fatal(err)
		}
		if st.Status.Terminal() {
			return st
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("job %s did not finish", id)
	return nil
}

// waitRunning polls until the job has completed at least iteration `it`.
func waitIteration(t *testing.T, svc *Service, id string, it int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		st, _ := svc.Status(context.Background(), "alice", id)
		if st != nil && st.Status == StatusRunning && st.BaselineScore != nil && *st.BaselineScore > 0 && st.CurrentIteration >= it {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Fatalf("job %s never reached iteration %d", id, it)
}

func TestLoopImprovesKeepsAndHoldsOutTest(t *testing.T) {
	minter := &meteredKey{key: "job-key"}
	runner := &fakeRunner{}
	e := newEnv(t, runner, minter)
	e.start(t)
	sub, err := e.svc.Submit(context.Background(), "alice", request(e.url, 6))
	if err != nil {
		t.Fatal(err)
	}
	if sub.Status != StatusQueued || sub.Version == "" || !strings.HasPrefix(sub.JobID, "opt_") {
		t.Fatalf("submit = %+v", sub)
	}
	st := waitFor(t, e.svc, sub.JobID)
	if st.Status != StatusCompleted {
		t.Fatalf("status = %+v", st)
	}
	res, err := e.svc.Results(context.Background(), "alice", sub.JobID)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Results) != 1 {
		t.Fatalf("results = %+v", res)
	}
	r := res.Results[0]
	// The scripted proposer alternates a useless line (discarded) and a missing RULE (kept):
	// 6 iterations keep 3, and the baseline (1 of 4 categories right) rises to all right.
	if r.IterationsRun != 6 || r.IterationsKept != 3 {
		t.Fatalf("run %d kept %d, want 6 and 3; history %+v", r.IterationsRun, r.IterationsKept, r.History)
	}
	if r.BaselineScore == nil || r.TrainScore == nil || !(*r.BaselineScore > 0.2 && *r.BaselineScore < 0.3) || *r.TrainScore != 1 || r.TestScore == nil || *r.TestScore != 1 {
		t.Fatalf("scores: baseline %v train %v test %v", r.BaselineScore, r.TrainScore, r.TestScore)
	}
	if r.OriginalTestScore == nil || *r.OriginalTestScore >= *r.TestScore {
		t.Fatalf("original test score %v", r.OriginalTestScore)
	}
	if st.BaselineScore == nil || *st.BaselineScore != *r.BaselineScore || st.BestScore == nil || *st.BestScore != 1 || st.CurrentIteration != 6 || st.NIterations != 6 {
		t.Fatalf("status fields %+v", st)
	}
	if len(r.History) != 7 || !r.History[0].Kept || r.History[0].Iteration != 0 {
		t.Fatalf("history %+v", r.History)
	}
	train, test := Split(scriptedDataset(), DefaultSeed)
	kept := 0
	for i, h := range r.History[1:] {
		if h.Kept {
			kept++
		}
		// The useless line ties on the minibatch and stops there; a RULE wins its rows, is
		// confirmed on the rest of the split and kept.
		wantKept := i%2 == 1
		if h.Kept != wantKept || (h.Comparison != nil) != wantKept || (h.TrainScore != nil) != wantKept ||
			h.MinibatchRows != 8 || len(h.Candidates) != 1 || h.Candidates[0].Confirmed != wantKept || h.Candidates[0].MinibatchScore == nil {
			t.Errorf("iteration %d kept=%v (want %v) %+v", h.Iteration, h.Kept, wantKept, h)
		}
		if want := map[bool]int{true: len(train), false: 8}[wantKept]; h.RowsRun != want {
			t.Errorf("iteration %d ran %d rows, want %d", h.Iteration, h.RowsRun, want)
		}
	}
	if kept != r.IterationsKept {
		t.Errorf("kept in history %d != iterations_kept %d", kept, r.IterationsKept)
	}
	for _, c := range []string{"reverse", "count", "double"} {
		if !strings.Contains(r.OptimizedPrompt, "RULE "+c) {
			t.Errorf("optimized prompt lacks RULE %s: %q", c, r.OptimizedPrompt)
		}
	}
	if strings.Contains(r.OptimizedPrompt, "Be careful") {
		t.Errorf("a discarded change leaked into the best prompt: %q", r.OptimizedPrompt)
	}
	// The artifact is the original agent.py with only the EDITABLE section changed.
	if !strings.HasPrefix(r.AgentCodeURL, "https://sy.example/api/v1/artifacts/") || !strings.HasSuffix(r.AgentCodeURL, "/agent.py") {
		t.Fatalf("agent_code_url %q", r.AgentCodeURL)
	}
	tok := strings.TrimSuffix(strings.TrimPrefix(r.AgentCodeURL, "https://sy.example/api/v1/artifacts/"), "/agent.py")
	if len(tok) != 32 {
		t.Fatalf("token %q is not 128 bits of hex", tok)
	}
	code, err := e.svc.Artifact(context.Background(), tok)
	if err != nil {
		t.Fatal(err)
	}
	orig, _ := ParseAgent(bundleFiles(t)["agent.py"])
	best, err := ParseAgent(code)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(best.Fixed(), orig.Fixed()) {
		t.Error("FIXED section changed in the best agent.py")
	}
	if best.Prompt() != r.OptimizedPrompt {
		t.Errorf("artifact prompt %q != optimized %q", best.Prompt(), r.OptimizedPrompt)
	}
	// The held-out split: the proposer never saw a test input, and the sandbox ran test
	// rows only in the last two runs' chunks (original and best, after all iterations).
	isTest := map[string]bool{}
	for _, row := range test {
		isTest[row.Input] = true
	}
	e.up.mu.Lock()
	seen := append([]string(nil), e.up.proposerInputs...)
	bodies := append([]string(nil), e.up.proposerBodies...)
	calls := e.up.proposerCalls
	e.up.mu.Unlock()
	if calls != 6 || len(seen) == 0 {
		t.Fatalf("proposer calls %d, inputs seen %d", calls, len(seen))
	}
	for _, in := range seen {
		if isTest[in] {
			t.Errorf("the proposer saw test input %q", in)
		}
	}
	for _, b := range bodies {
		for in := range isTest {
			if strings.Contains(b, in) {
				t.Errorf("proposer message contains test input %q", in)
			}
		}
	}
	runs := runner.allRuns()
	chunks := DefaultSandboxConcurrency
	trainRuns := (1 + 6 + 3) * chunks // baseline, 6 minibatches, 3 confirmations
	if len(runs) != trainRuns+2*chunks {
		t.Fatalf("%d sandbox runs, want %d", len(runs), trainRuns+2*chunks)
	}
	for i, run := range runs {
		for _, in := range run {
			if isTest[in] != (i >= trainRuns) {
				t.Fatalf("run %d has input %q (test=%v) out of phase", i, in, isTest[in])
			}
		}
	}
	var trainSeen int
	for _, run := range runs[:chunks] {
		trainSeen += len(run)
	}
	if trainSeen != len(train) {
		t.Errorf("baseline ran %d rows, train split has %d", trainSeen, len(train))
	}
	// Keys: one per target model, revoked at the end; usage counted from the agent's reports
	// (the key is not metered) plus the proposer.
	if minter.minted.Load() != 1 || minter.revoked.Load() != 1 {
		t.Errorf("keys minted %d revoked %d", minter.minted.Load(), minter.revoked.Load())
	}
	if r.Usage.TaskSource != "agent_reported" || r.Usage.Task.Tokens != int64(15*(4*len(train)+3*8+2*len(test))) || r.Usage.Proposer.Tokens != 6*15 || r.Tokens != r.Usage.Task.Tokens+r.Usage.Proposer.Tokens {
		t.Errorf("usage %+v tokens %d", r.Usage, r.Tokens)
	}
	h, err := e.svc.History(context.Background(), "alice", sub.JobID)
	if err != nil || len(h["scripted/task"]) != 7 {
		t.Errorf("History = %v, %v", h, err)
	}
	// Owners are isolated.
	if _, err := e.svc.Results(context.Background(), "bob", sub.JobID); !errors.Is(err, ErrNotFound) {
		t.Errorf("another owner's results: %v", err)
	}
}

func TestMeteredKeyUsage(t *testing.T) {
	var used atomic.Int64
	minter := minterFunc(func(g KeyGrant) (*JobKey, error) {
		return &JobKey{Key: "job-key", Usage: func() Usage { return Usage{Tokens: used.Add(1), CostUSD: 0.5} }}, nil
	})
	e := newEnv(t, &fakeRunner{}, minter)
	e.start(t)
	sub, _ := e.svc.Submit(context.Background(), "alice", request(e.url, 1))
	waitFor(t, e.svc, sub.JobID)
	res, _ := e.svc.Results(context.Background(), "alice", sub.JobID)
	u := res.Results[0].Usage
	if u.TaskSource != "gateway" || u.Task.CostUSD != 0.5 || u.Task.Tokens == 0 {
		t.Errorf("usage %+v", u)
	}
}

type minterFunc func(KeyGrant) (*JobKey, error)

func (f minterFunc) MintKey(_ context.Context, g KeyGrant) (*JobKey, error) { return f(g) }

func TestTwoTargetModels(t *testing.T) {
	ended := make(chan JobStat, 4)
	e := newEnv(t, &fakeRunner{}, nil, WithJobEnded(func(j JobStat) { ended <- j }))
	e.start(t)
	req := request(e.url, 2)
	req.TargetModels = []string{"scripted/task-a", "scripted/task-b"}
	sub, err := e.svc.Submit(context.Background(), "alice", req)
	if err != nil {
		t.Fatal(err)
	}
	if st := waitFor(t, e.svc, sub.JobID); st.Status != StatusCompleted || st.ModelsDone != 2 {
		t.Fatalf("status %+v", st)
	}
	res, _ := e.svc.Results(context.Background(), "alice", sub.JobID)
	if len(res.Results) != 2 || res.Results[0].Model != "scripted/task-a" || res.Results[1].Model != "scripted/task-b" {
		t.Fatalf("results %+v", res.Results)
	}
	// Telemetry's view: the finished job with its run time and end.
	stats, err := e.svc.JobStats(context.Background())
	if err != nil || len(stats) != 1 || stats[0].ID != sub.JobID || stats[0].State != "completed" || stats[0].Seconds <= 0 || stats[0].Finished.IsZero() {
		t.Fatalf("job stats %+v %v", stats, err)
	}
	select {
	case j := <-ended:
		if j.ID != stats[0].ID || j.State != stats[0].State || math.Abs(j.Seconds-stats[0].Seconds) > 0.01 || !j.Finished.Equal(stats[0].Finished) {
			t.Fatalf("job ended reported %+v, stored %+v", j, stats[0])
		}
	case <-time.After(10 * time.Second):
		t.Fatal("WithJobEnded's function was not called")
	}
	if res.Results[0].AgentCodeURL == res.Results[1].AgentCodeURL {
		t.Error("two models share one artifact URL")
	}
}

// TestIterationsStopBeforeTheTimeout: when another iteration as long as the longest so far
// would not leave the held-out split its time, the iterations stop before the timeout, and
// the message says so rather than that the timeout ran out.
func TestIterationsStopBeforeTheTimeout(t *testing.T) {
	runner := &fakeRunner{delay: func(j sandbox.Job) time.Duration {
		if bytes.Contains(j.Files["agent.py"], []byte("RULE")) {
			return 300 * time.Millisecond
		}
		return 0
	}}
	e := newEnv(t, runner, nil)
	e.start(t)
	req := request(e.url, 50)
	req.OverallTimeout = 3 * time.Second
	sub, _ := e.svc.Submit(context.Background(), "alice", req)
	st := waitFor(t, e.svc, sub.JobID)
	if st.Status != StatusInterrupted || !strings.Contains(st.ErrorMessage, "stopped its iterations before overall_timeout_seconds=3 ran out") ||
		!strings.Contains(st.ErrorMessage, "retry with a larger overall_timeout_seconds") {
		t.Fatalf("status %+v", st)
	}
	res, err := e.svc.Results(context.Background(), "alice", sub.JobID)
	if err != nil {
		t.Fatal(err)
	}
	if r := res.Results[0]; r.Complete || r.TestScore == nil || r.IterationsRun >= 50 {
		t.Fatalf("result %+v", r)
	}
}

func TestOverallTimeoutInterruptsAndKeepsBest(t *testing.T) {
	// Runs of a prompt holding "RULE count" never finish: iteration 4 (the second RULE) hangs
	// until the time kept for the held-out split; the job is interrupted but still reports
	// the held-out scores of its best agent.
	runner := &fakeRunner{block: func(j sandbox.Job) bool {
		return bytes.Contains(j.Files["agent.py"], []byte("RULE count"))
	}}
	e := newEnv(t, runner, nil)
	e.start(t)
	req := request(e.url, 10)
	// The held-out split is left a tenth of the timeout (the baseline takes milliseconds):
	// 600 ms for its two in-process runs, time enough on a loaded machine (200 ms was not).
	req.OverallTimeout = 6 * time.Second
	sub, _ := e.svc.Submit(context.Background(), "alice", req)
	st := waitFor(t, e.svc, sub.JobID)
	if st.Status != StatusInterrupted || !strings.Contains(st.ErrorMessage, "retry with a larger overall_timeout_seconds") {
		t.Fatalf("status %+v", st)
	}
	res, err := e.svc.Results(context.Background(), "alice", sub.JobID)
	if err != nil {
		t.Fatal(err)
	}
	r := res.Results[0]
	if r.Complete || r.TestScore == nil || r.OriginalTestScore == nil || r.IterationsKept < 1 || r.TrainScore == nil || r.BaselineScore == nil || *r.TrainScore <= *r.BaselineScore || r.AgentCodeURL == "" {
		t.Fatalf("best-so-far result %+v", r)
	}
	if res.Status != StatusInterrupted || res.ErrorMessage == "" {
		t.Errorf("results status %q message %q", res.Status, res.ErrorMessage)
	}
	// The iteration cut short is in the history but not counted as completed: the spec's
	// current_iteration is "latest iteration completed", iterations_run "executed".
	last := r.History[len(r.History)-1]
	if !strings.Contains(last.Note+candidateNotes(last), "not finished") || r.IterationsRun != last.Iteration-1 || st.CurrentIteration != last.Iteration-1 {
		t.Errorf("cut iteration %d (%q): iterations_run %d, current_iteration %d, want %d", last.Iteration, last.Note+candidateNotes(last), r.IterationsRun, st.CurrentIteration, last.Iteration-1)
	}
}

func candidateNotes(it Iteration) string {
	var b strings.Builder
	for _, c := range it.Candidates {
		b.WriteString(" " + c.Note)
	}
	return b.String()
}

func TestCancelRunningAndQueued(t *testing.T) {
	runner := &fakeRunner{block: func(j sandbox.Job) bool {
		return bytes.Contains(j.Files["agent.py"], []byte("Be careful"))
	}}
	e := newEnv(t, runner, nil) // one worker: the second job waits in the queue
	e.start(t)
	first, _ := e.svc.Submit(context.Background(), "alice", request(e.url, 5))
	second, _ := e.svc.Submit(context.Background(), "alice", request(e.url, 5))
	if st, err := e.svc.Cancel(context.Background(), "alice", second.JobID); err != nil || st.Status != StatusInterrupted {
		t.Fatalf("cancel queued: %+v %v", st, err)
	}
	waitIteration(t, e.svc, first.JobID, 0)
	if _, err := e.svc.Cancel(context.Background(), "bob", first.JobID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("bob cancelled alice's job: %v", err)
	}
	if _, err := e.svc.Cancel(context.Background(), "alice", first.JobID); err != nil {
		t.Fatal(err)
	}
	st := waitFor(t, e.svc, first.JobID)
	if st.Status != StatusInterrupted || !strings.Contains(st.ErrorMessage, "cancelled") {
		t.Fatalf("status %+v", st)
	}
	if _, err := e.svc.Cancel(context.Background(), "alice", first.JobID); !errors.Is(err, ErrFinished) {
		t.Errorf("cancel of a finished job: %v", err)
	}
	if st := waitFor(t, e.svc, second.JobID); st.Status != StatusInterrupted {
		t.Errorf("queued job after cancel: %+v", st)
	}
	res, _ := e.svc.Results(context.Background(), "alice", first.JobID)
	if len(res.Results) != 1 || res.Results[0].BaselineScore == nil || *res.Results[0].BaselineScore == 0 || res.Results[0].AgentCodeURL == "" {
		t.Errorf("results after cancel %+v", res.Results)
	}
}

func TestFailures(t *testing.T) {
	t.Run("baseline raises", func(t *testing.T) {
		runner := &fakeRunner{fail: func(sandbox.Job) error {
			return &sandbox.JobError{Reason: sandbox.ReasonException, Message: "run_batch raised ValueError: boom"}
		}}
		e := newEnv(t, runner, nil)
		e.start(t)
		sub, _ := e.svc.Submit(context.Background(), "alice", request(e.url, 3))
		st := waitFor(t, e.svc, sub.JobID)
		if st.Status != StatusFailed || !strings.Contains(st.ErrorMessage, "run_batch raised ValueError: boom") || !strings.Contains(st.ErrorMessage, "baseline") {
			t.Fatalf("status %+v", st)
		}
	})
	t.Run("sandbox unavailable", func(t *testing.T) {
		e := newEnv(t, UnavailableRunner{Err: errors.New("bubblewrap not found")}, nil)
		e.start(t)
		sub, _ := e.svc.Submit(context.Background(), "alice", request(e.url, 3))
		st := waitFor(t, e.svc, sub.JobID)
		if st.Status != StatusFailed || !strings.Contains(st.ErrorMessage, "sandbox is not available") || !strings.Contains(st.ErrorMessage, "bubblewrap not found") {
			t.Fatalf("status %+v", st)
		}
	})
	t.Run("variant raises is discarded", func(t *testing.T) {
		runner := &fakeRunner{fail: func(j sandbox.Job) error {
			if bytes.Contains(j.Files["agent.py"], []byte("Be careful")) {
				return &sandbox.JobError{Reason: sandbox.ReasonTimeout, Message: "timed out"}
			}
			return nil
		}}
		e := newEnv(t, runner, nil)
		e.start(t)
		sub, _ := e.svc.Submit(context.Background(), "alice", request(e.url, 2))
		if st := waitFor(t, e.svc, sub.JobID); st.Status != StatusCompleted {
			t.Fatalf("status %+v", st)
		}
		h, _ := e.svc.History(context.Background(), "alice", sub.JobID)
		it := h["scripted/task"][1]
		if it.Kept || !strings.Contains(it.Note, "failed in the sandbox") {
			t.Errorf("iteration 1 = %+v", it)
		}
		if !h["scripted/task"][2].Kept {
			t.Errorf("iteration 2 = %+v", h["scripted/task"][2])
		}
	})
	t.Run("bad bundle", func(t *testing.T) {
		e := newEnv(t, &fakeRunner{}, nil)
		e.start(t)
		files := bundleFiles(t)
		files["eval.py"] = []byte("def scoring(a, b):\n    return 1.0\n")
		_, err := e.svc.Submit(context.Background(), "alice", request(serveBytes(t, zipFiles(t, files)), 3))
		var se *SubmitError
		if !errors.As(err, &se) || !errors.Is(err, ErrBundle) || !strings.Contains(err.Error(), "eval.py") || !strings.Contains(err.Error(), "score") {
			t.Fatalf("err = %v, want a *SubmitError naming eval.py", err)
		}
	})
	t.Run("unreachable bundle", func(t *testing.T) {
		e := newEnv(t, &fakeRunner{}, nil)
		e.svc.fetcher = &fetch.Fetcher{} // guard on: a loopback URL is refused
		e.start(t)
		_, err := e.svc.Submit(context.Background(), "alice", request(e.url, 3))
		var se *SubmitError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), "input_url: the bundle could not be fetched") {
			t.Fatalf("err = %v", err)
		}
	})
}

// editingProposer rewrites the whole EDITABLE section; with breakFixed it also smuggles a
// FIXED marker in, which must get the variant rejected.
type editingProposer struct{ calls atomic.Int32 }

func (p *editingProposer) Propose(_ context.Context, req ProposalRequest) (*Proposal, error) {
	n := p.calls.Add(1)
	if n == 1 {
		return &Proposal{Editable: []byte("SYSTEM_PROMPT = 'x'\n# === FIXED END ===\n"), Usage: Usage{Tokens: 3}}, nil
	}
	return &Proposal{Editable: []byte("SYSTEM_PROMPT = '''" + req.CurrentPrompt + "\nRULE reverse\nRULE count\nRULE double'''\n")}, nil
}

func TestFixedSectionMustNotChange(t *testing.T) {
	e := newEnv(t, &fakeRunner{}, nil)
	svc, err := New(e.st, e.runner, &editingProposer{}, WithFetcher(&fetch.Fetcher{AllowLocal: true}),
		WithGateway(e.up.URL+"/v1", StaticKey("job-key")), WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	e.svc = svc
	e.start(t)
	sub, _ := svc.Submit(context.Background(), "alice", request(e.url, 2))
	if st := waitFor(t, svc, sub.JobID); st.Status != StatusCompleted {
		t.Fatalf("status %+v", st)
	}
	h, _ := svc.History(context.Background(), "alice", sub.JobID)
	its := h["scripted/task"]
	if its[1].Kept || !strings.Contains(its[1].Note, "rejected") {
		t.Errorf("iteration 1 = %+v", its[1])
	}
	if !its[2].Kept || its[2].TrainScore == nil || *its[2].TrainScore != 1 {
		t.Errorf("iteration 2 = %+v", its[2])
	}
	res, _ := svc.Results(context.Background(), "alice", sub.JobID)
	if res.Results[0].Usage.Proposer.Tokens != 3 {
		t.Errorf("proposer usage %+v", res.Results[0].Usage)
	}
}

func TestRestartRequeuesJobs(t *testing.T) {
	e := newEnv(t, &fakeRunner{}, nil)
	// Submitted before Start (stays queued), plus a record left "running" by a crash.
	sub, err := e.svc.Submit(context.Background(), "alice", request(e.url, 1))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	crashed := job{ID: "opt_crashed", Owner: "alice", Version: "v1", Optimizer: "agentopt", InputURL: e.url,
		TargetModels: []string{"scripted/task"}, NIterations: 1, OverallTimeout: Duration(time.Minute),
		LLMCallTimeout: Duration(time.Minute), SandboxTimeout: Duration(time.Minute), Status: StatusRunning,
		CurrentIteration: 3, Attempts: 1, CreatedAt: now, StartedAt: &now,
		Results: []storedRes{{ModelResult: ModelResult{Model: "scripted/task"}}}}
	gaveUp := crashed
	gaveUp.ID, gaveUp.Attempts = "opt_gaveup", MaxAttempts
	for _, j := range []job{crashed, gaveUp} {
		if err := store.PutJSON(context.Background(), e.st, store.OptimizationJobs, j.ID, j); err != nil {
			t.Fatal(err)
		}
	}
	e.start(t)
	for _, id := range []string{sub.JobID, "opt_crashed"} {
		if st := waitFor(t, e.svc, id); st.Status != StatusCompleted {
			t.Errorf("%s: %+v", id, st)
		}
	}
	res, _ := e.svc.Results(context.Background(), "alice", "opt_crashed")
	if len(res.Results) != 1 || !res.Results[0].Complete {
		t.Errorf("re-run results %+v", res.Results)
	}
	st, _ := e.svc.Status(context.Background(), "alice", "opt_gaveup")
	if st.Status != StatusFailed || !strings.Contains(st.ErrorMessage, "server stopped") {
		t.Errorf("gave-up job %+v", st)
	}
}

func TestResultsOfUnfinishedJob(t *testing.T) {
	e := newEnv(t, &fakeRunner{}, nil)
	sub, _ := e.svc.Submit(context.Background(), "alice", request(e.url, 1))
	_, err := e.svc.Results(context.Background(), "alice", sub.JobID)
	var nf *NotFinishedError
	if !errors.As(err, &nf) || nf.Status != StatusQueued || !errors.Is(err, ErrNotFinished) {
		t.Fatalf("err = %v", err)
	}
}

func TestProposerFailures(t *testing.T) {
	t.Run("transient failure is retried", func(t *testing.T) {
		e := newEnv(t, &fakeRunner{}, nil)
		e.up.failProposer, e.up.proposerStatus = 1, http.StatusServiceUnavailable
		e.start(t)
		sub, _ := e.svc.Submit(context.Background(), "alice", request(e.url, 2))
		if st := waitFor(t, e.svc, sub.JobID); st.Status != StatusCompleted {
			t.Fatalf("status %+v", st)
		}
		h, _ := e.svc.History(context.Background(), "alice", sub.JobID)
		for _, it := range h["scripted/task"][1:] {
			if it.Prompt == "" || strings.HasPrefix(it.Note, "no proposal") {
				t.Errorf("iteration %+v", it)
			}
		}
		if !h["scripted/task"][2].Kept {
			t.Errorf("iteration 2 not kept: %+v", h["scripted/task"][2])
		}
	})
	t.Run("no usable proposal in any iteration fails the job", func(t *testing.T) {
		e := newEnv(t, &fakeRunner{}, nil)
		e.up.failProposer, e.up.proposerStatus = 1000, http.StatusServiceUnavailable
		e.start(t)
		sub, _ := e.svc.Submit(context.Background(), "alice", request(e.url, 2))
		st := waitFor(t, e.svc, sub.JobID)
		if st.Status != StatusFailed || !strings.Contains(st.ErrorMessage, "never produced a usable candidate in 2 iterations") ||
			!strings.Contains(st.ErrorMessage, "no proposal") {
			t.Fatalf("status %+v", st)
		}
	})
	t.Run("auth failure fails the job", func(t *testing.T) {
		e := newEnv(t, &fakeRunner{}, nil)
		e.up.failProposer, e.up.proposerStatus = 100, http.StatusUnauthorized
		e.start(t)
		sub, _ := e.svc.Submit(context.Background(), "alice", request(e.url, 2))
		st := waitFor(t, e.svc, sub.JobID)
		if st.Status != StatusFailed || !strings.Contains(st.ErrorMessage, "proposer model failed") {
			t.Fatalf("status %+v", st)
		}
		// The baseline is still there.
		res, _ := e.svc.Results(context.Background(), "alice", sub.JobID)
		if len(res.Results) != 1 || len(res.Results[0].History) != 1 || res.Results[0].AgentCodeURL == "" {
			t.Errorf("results %+v", res.Results)
		}
	})
}

// echoProposer proposes the current prompt unchanged.
type echoProposer struct{}

func (echoProposer) Propose(_ context.Context, req ProposalRequest) (*Proposal, error) {
	return &Proposal{Prompt: req.CurrentPrompt}, nil
}

func TestRepeatedProposalIsNotRun(t *testing.T) {
	runner := &fakeRunner{}
	e := newEnv(t, runner, nil)
	svc, err := New(e.st, runner, echoProposer{}, WithFetcher(&fetch.Fetcher{AllowLocal: true}),
		WithGateway(e.up.URL+"/v1", StaticKey("job-key")), WithLogger(slog.New(slog.DiscardHandler)), WithSandboxConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	e.svc = svc
	e.start(t)
	sub, _ := svc.Submit(context.Background(), "alice", request(e.url, 3))
	if st := waitFor(t, svc, sub.JobID); st.Status != StatusCompleted {
		t.Fatalf("status %+v", st)
	}
	h, _ := svc.History(context.Background(), "alice", sub.JobID)
	for _, it := range h["scripted/task"][1:] {
		if it.Kept || !strings.Contains(it.Note, "repeats") {
			t.Errorf("iteration %+v", it)
		}
	}
	// Baseline and the original on the test split only (the best is the original).
	if n := len(runner.allRuns()); n != 2 {
		t.Errorf("%d sandbox runs, want 2", n)
	}
}

// TestSubmitRefusesUnroutableModel: with a model check, a target model the gateway cannot
// route is a validation error at submit, naming its index; nothing is queued.
func TestSubmitRefusesUnroutableModel(t *testing.T) {
	e := newEnv(t, UnavailableRunner{Err: errors.New("no sandbox")}, nil,
		WithModelCheck(func(m string) error {
			if !strings.HasPrefix(m, "scripted/") {
				return errors.New("provider \"foo\" is not configured")
			}
			return nil
		}))
	req := Request{Optimizer: "agentopt", InputURL: e.url, TargetModels: []string{"scripted/target", "foo/bar"}, NIterations: 1}
	_, err := e.svc.Submit(context.Background(), "owner", req)
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Field != "target_models" || !strings.Contains(ve.Message, "target_models[1]") || !strings.Contains(ve.Message, "foo/bar") || !strings.Contains(ve.Message, "not configured") {
		t.Fatalf("err = %v", err)
	}
	req.TargetModels = []string{"scripted/target"}
	if _, err := e.svc.Submit(context.Background(), "owner", req); err != nil {
		t.Fatalf("a routable model: %v", err)
	}
}

// TestScoresAbsentUntilMeasured: before the baseline runs, status has no best_score or
// baseline_score (a real 0 would read the same as "not yet").
func TestScoresAbsentUntilMeasured(t *testing.T) {
	e := newEnv(t, &fakeRunner{}, nil) // not started: the job stays queued
	sub, err := e.svc.Submit(context.Background(), "alice", request(e.url, 1))
	if err != nil {
		t.Fatal(err)
	}
	st, err := e.svc.Status(context.Background(), "alice", sub.JobID)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(st)
	if strings.Contains(string(b), "best_score") || strings.Contains(string(b), "baseline_score") {
		t.Fatalf("queued job's status: %s", b)
	}
}

// TestGuardedSubmitStaysGuarded: a job accepted by a process without --allow-local-urls
// fetches its bundle with the SSRF guard in whichever process runs it; such a process also
// refuses file:// and other schemes at submit.
func TestGuardedSubmitStaysGuarded(t *testing.T) {
	// The strict process checks the bundle at submit through a transport the guard trusts
	// (a test's stand-in for a public URL); the guard itself is on.
	strict := newEnv(t, &fakeRunner{}, nil, WithFetcher(&fetch.Fetcher{Client: &http.Client{Transport: trustedTransport{}}}))
	for in, want := range map[string]string{
		"file:///tmp/b.zip":       "file:// URLs are not allowed",
		"ftp://example.com/b.zip": "must start with http:// or https://",
	} {
		req := request(in, 1)
		var ve *ValidationError
		if _, err := strict.svc.Submit(context.Background(), "alice", req); !errors.As(err, &ve) || !strings.Contains(ve.Message, want) {
			t.Errorf("%s: err %v, want %q", in, err, want)
		}
	}
	sub, err := strict.svc.Submit(context.Background(), "alice", request(strict.url, 1)) // accepted, never run here
	if err != nil {
		t.Fatal(err)
	}
	rec, err := store.GetJSON[job](context.Background(), strict.st, store.OptimizationJobs, sub.JobID)
	if err != nil || !rec.GuardedURLs {
		t.Fatalf("record %+v %v", rec, err)
	}
	e := newEnv(t, &fakeRunner{}, nil) // allows local URLs
	rec.ID = "opt_guarded"
	if err := store.PutJSON(context.Background(), e.st, store.OptimizationJobs, rec.ID, rec); err != nil {
		t.Fatal(err)
	}
	e.start(t)
	if st := waitFor(t, e.svc, rec.ID); st.Status != StatusFailed || !strings.Contains(st.ErrorMessage, "not allowed") {
		t.Fatalf("guarded job: %+v", st)
	}
}

// TestSecondStart: a second Start is ErrStarted, which callers can tell apart.
func TestSecondStart(t *testing.T) {
	e := newEnv(t, &fakeRunner{}, nil)
	e.start(t)
	if err := e.svc.Start(context.Background()); !errors.Is(err, ErrStarted) {
		t.Errorf("second Start: %v", err)
	}
}

// trustedTransport is http.DefaultTransport behind a type the fetch guard does not inspect.
type trustedTransport struct{}

func (trustedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return http.DefaultTransport.RoundTrip(r)
}
