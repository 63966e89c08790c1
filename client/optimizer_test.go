package client_test

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/client"
	"github.com/switchyard-ai/switchyard/fetch"
	"github.com/switchyard-ai/switchyard/optimizer"
	"github.com/switchyard-ai/switchyard/sandbox"
	"github.com/switchyard-ai/switchyard/server"
	"github.com/switchyard-ai/switchyard/store"
)

// scriptedRunner is a fake sandbox backend: instead of running agent.py it answers a row
// correctly when the EDITABLE section of agent.py names the row's answer (the queue), so
// the score depends on the prompt the optimizer wrote. A run can be made to block until
// released, to observe a running job.
type scriptedRunner struct {
	gate chan struct{} // nil: never blocks
}

func (r *scriptedRunner) Name() string { return "scripted" }

func (r *scriptedRunner) Run(ctx context.Context, j sandbox.Job) (*sandbox.Result, error) {
	if r.gate != nil {
		select {
		case <-r.gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	src := string(j.Files["agent.py"])
	start, end := strings.Index(src, "EDITABLE START"), strings.Index(src, "EDITABLE END")
	editable := strings.ToLower(src[start:end])
	res := &sandbox.Result{}
	for _, row := range j.Rows {
		if strings.Contains(editable, row.Answer) {
			res.Predictions = append(res.Predictions, row.Answer)
			res.Scores = append(res.Scores, 1)
		} else {
			res.Predictions = append(res.Predictions, "unknown")
			res.Scores = append(res.Scores, 0)
		}
		res.Usage.Tokens += 10
	}
	return res, nil
}

// scriptedProposer is a fake proposer LLM: odd iterations add a useless sentence (which the
// acceptance rule discards), even iterations name the queues of up to two failing rows.
type scriptedProposer struct{}

func (scriptedProposer) Propose(_ context.Context, req optimizer.ProposalRequest) (*optimizer.Proposal, error) {
	if req.Iteration%2 == 1 {
		return &optimizer.Proposal{Prompt: req.CurrentPrompt + "\nBe concise.", Usage: optimizer.Usage{Tokens: 5}}, nil
	}
	var add []string
	for _, f := range req.Failures {
		if len(add) < 2 && !strings.Contains(strings.Join(add, " "), f.Expected) {
			add = append(add, f.Expected)
		}
	}
	return &optimizer.Proposal{Prompt: req.CurrentPrompt + "\nQueues include: " + strings.Join(add, ", ") + ".", Usage: optimizer.Usage{Tokens: 5}}, nil
}

// bundleServer serves examples/agent-bundle as a ZIP at /bundle.zip.
func bundleServer(t *testing.T) string {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range []string{"agent.py", "eval.py", "dataset.json"} {
		b, err := os.ReadFile(filepath.Join("..", "examples", "agent-bundle", name))
		if err != nil {
			t.Fatal(err)
		}
		w, _ := zw.Create(name)
		w.Write(b)
	}
	zw.Close()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/bundle.zip" {
			http.NotFound(w, r)
			return
		}
		w.Write(buf.Bytes())
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

func optimizerOptions(t *testing.T, runner sandbox.Runner) func(st *store.Store, baseURL string) []server.Option {
	return func(st *store.Store, baseURL string) []server.Option {
		svc, err := optimizer.New(st, runner, scriptedProposer{},
			optimizer.WithFetcher(&fetch.Fetcher{AllowLocal: true}), optimizer.WithPublicURL(baseURL),
			optimizer.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
		if err != nil {
			t.Fatal(err)
		}
		if err := svc.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		return []server.Option{server.Optimizer(svc)}
	}
}

func TestAgentOptimizerAgainstServer(t *testing.T) {
	bundles := bundleServer(t)
	c, _ := realServer(t, optimizerOptions(t, &scriptedRunner{}))
	ctx := context.Background()
	o := c.AgentOptimizer()
	if _, err := o.Status(ctx); err == nil {
		t.Fatal("status without a job id")
	}
	seed := uint64(11)
	job, err := o.Submit(ctx, &client.OptimizeRequest{InputURL: bundles + "/bundle.zip", TargetModel: "openai/gpt-4o-mini", NIterations: 4, Seed: &seed})
	if err != nil {
		t.Fatal(err)
	}
	if job.Status != "queued" || job.JobID == "" || o.JobID() != job.JobID {
		t.Fatalf("submit: %+v", job)
	}
	var seen []string
	for st, err := range o.Watch(ctx, 20*time.Millisecond) {
		if err != nil {
			t.Fatal(err)
		}
		seen = append(seen, st.Status)
	}
	st, err := o.Wait(ctx, time.Millisecond) // already finished: one poll
	if err != nil || st.Status != "completed" || seen[len(seen)-1] != "completed" {
		t.Fatalf("wait: %+v %v (seen %v)", st, err, seen)
	}
	if st.NIterations != 4 || st.BestScore == nil || st.BaselineScore == nil || *st.BestScore <= *st.BaselineScore || !strings.Contains(st.BestPrompt, "Queues include") {
		t.Fatalf("status %+v", st)
	}
	res, err := o.Results(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.JobID != job.JobID || len(res.Results) != 1 {
		t.Fatalf("results %+v", res)
	}
	r := res.Results[0]
	if r.Model != "openai/gpt-4o-mini" || r.IterationsRun != 4 || r.IterationsKept != 2 || len(r.History) != 5 ||
		r.TrainScore == nil || r.BaselineScore == nil || *r.TrainScore <= *r.BaselineScore || r.TestScore == nil || !strings.Contains(r.OptimizedPrompt, "Queues include") {
		t.Fatalf("result %+v", r)
	}
	if !strings.HasPrefix(r.AgentCodeURL, c.BaseURL()+"/api/v1/artifacts/") {
		t.Fatalf("agent code URL %q", r.AgentCodeURL)
	}
	if r.Seed == nil || *r.Seed != seed || r.Metric == "" {
		t.Errorf("seed %v metric %q, want the submitted 11 and a metric name", r.Seed, r.Metric)
	}
	// The usage split and each kept iteration's paired test reach the client.
	if r.Usage.TaskSource == "" || r.Usage.Task.Tokens+r.Usage.Proposer.Tokens != r.Tokens {
		t.Errorf("usage %+v, want its source and a split of the %d tokens", r.Usage, r.Tokens)
	}
	for _, it := range r.History[1:] {
		if it.Kept && (it.Comparison == nil || !it.Comparison.Accepted || it.Comparison.Wins == 0) {
			t.Errorf("kept iteration %d: comparison %+v, want the accepted paired test", it.Iteration, it.Comparison)
		}
	}
}

// TestAgentCodeURLServesTheBestAgent downloads agent_code_url without a key.
func TestAgentCodeURLServesTheBestAgent(t *testing.T) {
	bundles := bundleServer(t)
	c, _ := realServer(t, optimizerOptions(t, &scriptedRunner{}))
	ctx := context.Background()
	o := c.AgentOptimizer()
	if _, err := o.Submit(ctx, &client.OptimizeRequest{InputURL: bundles + "/bundle.zip", TargetModel: "openai/gpt-4o-mini", NIterations: 4}); err != nil {
		t.Fatal(err)
	}
	if _, err := o.Wait(ctx, 10*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	res, err := o.Results(ctx)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(res.Results[0].AgentCodeURL)
	if err != nil {
		t.Fatal(err)
	}
	code, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(code), "Queues include") || !strings.Contains(string(code), "def run_batch") {
		t.Fatalf("agent code %s: %d %s", res.Results[0].AgentCodeURL, resp.StatusCode, code)
	}
	// AgentCode downloads the same file; a result without a URL is ErrMissingID.
	got, err := o.AgentCode(ctx, &res.Results[0])
	if err != nil || string(got) != string(code) {
		t.Fatalf("AgentCode: %v\n%s", err, got)
	}
	if _, err := o.AgentCode(ctx, &client.OptimizationResult{}); !errors.Is(err, client.ErrMissingID) {
		t.Errorf("AgentCode without a URL: %v", err)
	}
}

// TestAgentCodeSendsNoKey: the artifact URL is the credential; the API key is not sent
// with it (it may point at another host, --public-url).
func TestAgentCodeSendsNoKey(t *testing.T) {
	var auth []string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth = append(auth, r.Header.Get("Authorization"))
		if r.URL.Path == "/gone/agent.py" {
			w.WriteHeader(404)
			w.Write([]byte(`{"error":"Not Found","message":"no artifact has this token"}`))
			return
		}
		w.Write([]byte("SYSTEM_PROMPT = 'x'\n"))
	}))
	defer ts.Close()
	c, err := client.New(client.WithBaseURL(ts.URL), client.WithAPIKey("secret-key"))
	if err != nil {
		t.Fatal(err)
	}
	o := c.AgentOptimizer()
	code, err := o.AgentCode(context.Background(), &client.OptimizationResult{AgentCodeURL: ts.URL + "/a/agent.py"})
	if err != nil || string(code) != "SYSTEM_PROMPT = 'x'\n" {
		t.Fatalf("AgentCode: %q %v", code, err)
	}
	if _, err := o.AgentCode(context.Background(), &client.OptimizationResult{AgentCodeURL: ts.URL + "/gone/agent.py"}); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("a gone artifact: %v", err)
	}
	for _, a := range auth {
		if a != "" {
			t.Errorf("Authorization %q sent with the artifact URL", a)
		}
	}
}

func TestAgentOptimizerErrorsAndCancel(t *testing.T) {
	bundles := bundleServer(t)
	gate := make(chan struct{})
	var once sync.Once
	release := func() { once.Do(func() { close(gate) }) }
	defer release()
	c, _ := realServer(t, optimizerOptions(t, &scriptedRunner{gate: gate}))
	ctx := context.Background()
	o := c.AgentOptimizer()

	_, err := o.Submit(ctx, &client.OptimizeRequest{TargetModel: "openai/gpt-4o-mini"})
	var ae *client.Error
	if !errors.As(err, &ae) || ae.Status != 422 || ae.Message != "agentopt requires input_url" {
		t.Fatalf("no input_url: %#v", err)
	}
	_, err = o.Submit(ctx, &client.OptimizeRequest{InputURL: bundles + "/bundle.zip", TargetModel: "openai/gpt-4o-mini", NIterations: 51})
	if !errors.As(err, &ae) || ae.Message != "n_iterations must be 1-50" {
		t.Fatalf("n_iterations: %v", err)
	}

	// A job held in its baseline run: results are a 409 until it ends; cancel interrupts it.
	if _, err := o.Submit(ctx, &client.OptimizeRequest{InputURL: bundles + "/bundle.zip", TargetModels: []string{"openai/gpt-4o-mini"}, NIterations: 2}); err != nil {
		t.Fatal(err)
	}
	if _, err := o.Results(ctx); !errors.Is(err, client.ErrConflict) {
		t.Fatalf("results while running: %v", err)
	}
	st, err := o.Cancel(ctx)
	if err != nil {
		t.Fatal(err)
	}
	release()
	st, err = o.Wait(ctx, 10*time.Millisecond)
	if err != nil || st.Status != "interrupted" || st.ErrorMessage == "" {
		t.Fatalf("after cancel: %+v %v", st, err)
	}
	if _, err := o.Results(ctx); err != nil {
		t.Fatalf("results of an interrupted job: %v", err)
	}

	// A bundle that cannot be fetched is a 400 at submit naming input_url; no job is made,
	// so the optimizer still remembers the previous one.
	prev := o.JobID()
	_, err = o.Submit(ctx, &client.OptimizeRequest{InputURL: bundles + "/missing.zip", TargetModel: "openai/gpt-4o-mini"})
	if !errors.As(err, &ae) || ae.Status != 400 || !strings.HasPrefix(ae.Message, "input_url: the bundle could not be fetched") || !strings.Contains(ae.Message, "404") || o.JobID() != prev {
		t.Fatalf("missing bundle: %v (job %s, was %s)", err, o.JobID(), prev)
	}
	o.UseJob("no-such-job")
	if _, err := o.Status(ctx); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("unknown job: %v", err)
	}
}
