package optimizer

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/sandbox"
	"github.com/switchyard-ai/switchyard/sandbox/process"
)

// processRunner returns the real bubblewrap backend, or skips when this machine cannot run
// it (sandbox.ErrUnavailable: no bwrap, no python3 or no user namespaces).
func processRunner(t *testing.T) sandbox.Runner {
	t.Helper()
	work, err := os.MkdirTemp("", "switchyard-optimizer-e2e-*")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(work) })
	if err := os.Chmod(work, 0o755); err != nil {
		t.Fatal(err)
	}
	r, err := process.New(process.Options{WorkDir: work, CacheDir: work, PackageIndex: "http://127.0.0.1:1/simple",
		Logger: slog.New(slog.DiscardHandler)})
	if errors.Is(err, sandbox.ErrUnavailable) {
		t.Skipf("process sandbox unavailable here (install the Debian package bubblewrap and allow user namespaces to run this test): %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestEndToEndProcessSandbox runs the real agent.py of testdata/bundle in the bubblewrap
// sandbox against the scripted upstream (task model and proposer), with the bundle served
// over local HTTP.
func TestEndToEndProcessSandbox(t *testing.T) {
	runner := processRunner(t)
	e := newEnv(t, runner, nil, WithSandboxConcurrency(2))
	e.start(t)
	sub, err := e.svc.Submit(context.Background(), "alice", request(e.url, 4))
	if err != nil {
		t.Fatal(err)
	}
	st := waitFor(t, e.svc, sub.JobID)
	if st.Status != StatusCompleted {
		t.Fatalf("status %+v", st)
	}
	res, err := e.svc.Results(context.Background(), "alice", sub.JobID)
	if err != nil {
		t.Fatal(err)
	}
	r := res.Results[0]
	// Iterations: 1 discarded (useless line), 2 kept (RULE), 3 discarded, 4 kept (RULE).
	if r.IterationsRun != 4 || r.IterationsKept != 2 {
		t.Fatalf("run %d kept %d; history %+v", r.IterationsRun, r.IterationsKept, r.History)
	}
	if r.TrainScore == nil || r.BaselineScore == nil || !(*r.TrainScore > *r.BaselineScore) || r.TestScore == nil || r.OriginalTestScore == nil || !(*r.TestScore > *r.OriginalTestScore) {
		t.Fatalf("scores baseline %v train %v test %v original test %v", r.BaselineScore, r.TrainScore, r.TestScore, r.OriginalTestScore)
	}
	// The agent's own usage reports came through the sandbox (15 tokens per call).
	_, test := Split(scriptedDataset(), DefaultSeed)
	// Rows run: the baseline (22), 4 minibatches of 8, 2 confirmations of the other 14, and
	// the two held-out runs.
	if r.Usage.TaskSource != "agent_reported" || r.Usage.Task.Tokens != int64(15*(22+4*8+2*14+2*len(test))) {
		t.Errorf("task usage %+v", r.Usage)
	}
	e.up.mu.Lock()
	seen := append([]string(nil), e.up.proposerInputs...)
	keys := e.up.taskKeys
	e.up.mu.Unlock()
	for _, row := range test {
		for _, in := range seen {
			if in == row.Input {
				t.Errorf("the proposer saw test input %q", in)
			}
		}
	}
	if len(keys) != 1 || keys["job-key"] == 0 {
		t.Errorf("task calls by key: %v", keys)
	}
	tok := r.AgentCodeURL[strings.LastIndex(r.AgentCodeURL[:len(r.AgentCodeURL)-len("/agent.py")], "/")+1 : len(r.AgentCodeURL)-len("/agent.py")]
	code, err := e.svc.Artifact(context.Background(), tok)
	if err != nil {
		t.Fatal(err)
	}
	orig, _ := ParseAgent(bundleFiles(t)["agent.py"])
	best, _ := ParseAgent(code)
	if best == nil || !bytes.Equal(best.Fixed(), orig.Fixed()) || best.Prompt() != r.OptimizedPrompt {
		t.Errorf("artifact:\n%s", code)
	}
}

// TestEndToEndProcessSandboxPaths checks the failed and interrupted paths with real agent
// code: an agent that raises fails the job with the sandbox's message, and an agent that
// hangs is cut by the overall timeout.
func TestEndToEndProcessSandboxPaths(t *testing.T) {
	runner := processRunner(t)
	t.Run("raises", func(t *testing.T) {
		e := newEnv(t, runner, nil)
		files := bundleFiles(t)
		files["agent.py"] = bytes.Replace(files["agent.py"], []byte("    base_url = os.environ"), []byte("    raise ValueError('broken agent')\n    base_url = os.environ"), 1)
		e.url = serveBytes(t, zipFiles(t, files))
		e.start(t)
		sub, _ := e.svc.Submit(context.Background(), "alice", request(e.url, 2))
		st := waitFor(t, e.svc, sub.JobID)
		if st.Status != StatusFailed || !strings.Contains(st.ErrorMessage, "broken agent") {
			t.Fatalf("status %+v", st)
		}
	})
	t.Run("hangs", func(t *testing.T) {
		e := newEnv(t, runner, nil)
		files := bundleFiles(t)
		files["agent.py"] = bytes.Replace(files["agent.py"], []byte("    base_url = os.environ"), []byte("    import time\n    if 'Be careful' in SYSTEM_PROMPT:\n        time.sleep(3600)\n    base_url = os.environ"), 1)
		e.url = serveBytes(t, zipFiles(t, files))
		e.start(t)
		req := request(e.url, 3)
		req.OverallTimeout = 15 * time.Second // the baseline and the held-out scoring must fit, on a loaded machine too (8 s failed in CI with go test running packages side by side)
		sub, _ := e.svc.Submit(context.Background(), "alice", req)
		st := waitFor(t, e.svc, sub.JobID)
		if st.Status != StatusInterrupted || !strings.Contains(st.ErrorMessage, "overall_timeout_seconds") {
			t.Fatalf("status %+v", st)
		}
		res, _ := e.svc.Results(context.Background(), "alice", sub.JobID)
		// The hanging variant is cut where the time kept for the held-out split begins, and
		// the held-out split is still scored.
		if r := res.Results[0]; r.Complete || r.AgentCodeURL == "" || len(r.History) != 2 || r.TestScore == nil ||
			!strings.Contains(r.History[1].Note, "kept for the held-out split") {
			t.Errorf("best so far %+v", r)
		}
	})
}

// TestEndToEndScoresCannotBeForged runs the three attacks of issue 19 as optimization jobs
// in the bubblewrap sandbox: an agent that looks for the answers in its sandbox, one that
// prints a forged result frame and exits, and one that replaces eval in sys.modules. None
// calls the model, so each must end with the honest scores: 0 for the baseline, the train
// split and the test split.
func TestEndToEndScoresCannotBeForged(t *testing.T) {
	runner := processRunner(t)
	attacks := map[string]string{
		"read answers": `    found = []
    for path in ("/sandbox/input.json", "/job/dataset.json"):
        try:
            data = json.load(open(path))
        except Exception:
            continue
        if isinstance(data, dict):
            found += data.get("answers") or data.get("expected") or []
        elif isinstance(data, list):
            found += [row["answer"] for row in data]
    if len(found) >= len(inputs):
        return found[:len(inputs)], {}
    return [""] * len(inputs), {}
`,
		"forged frame": `    import sys
    n = len(inputs)
    forged = json.dumps({"predictions": ["x"] * n, "scores": [1.0] * n, "usage": {}, "errors": []}).encode()
    sys.stdout.flush()
    os.write(1, b"\x1eSWITCHYARD\x1fR" + str(len(forged)).encode() + b"\n" + forged)
    os._exit(0)
`,
		// At import time, before the harness loaded eval.py.
		"replace eval": `    return ["x"] * len(inputs), {}
`,
	}
	const replaceEval = `import sys, types
_fake = types.ModuleType("eval")
_fake.score = lambda expected, predicted: 1.0
sys.modules["eval"] = _fake
`
	for name, attack := range attacks {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, runner, nil)
			files := bundleFiles(t)
			files["agent.py"] = bytes.Replace(files["agent.py"], []byte("    base_url = os.environ"), []byte(attack+"    base_url = os.environ"), 1)
			if name == "replace eval" {
				files["agent.py"] = bytes.Replace(files["agent.py"], []byte("import urllib.request\n"), []byte("import urllib.request\n"+replaceEval), 1)
			}
			e.url = serveBytes(t, zipFiles(t, files))
			e.start(t)
			sub, err := e.svc.Submit(context.Background(), "alice", request(e.url, 1))
			if err != nil {
				t.Fatal(err)
			}
			st := waitFor(t, e.svc, sub.JobID)
			if st.Status != StatusCompleted {
				t.Fatalf("status %+v", st)
			}
			res, err := e.svc.Results(context.Background(), "alice", sub.JobID)
			if err != nil {
				t.Fatal(err)
			}
			r := res.Results[0]
			if r.BaselineScore == nil || *r.BaselineScore != 0 || r.TrainScore == nil || *r.TrainScore != 0 || r.TestScore == nil || *r.TestScore != 0 ||
				r.OriginalTestScore == nil || *r.OriginalTestScore != 0 {
				t.Errorf("scores baseline %v train %v test %v original test %v, want all 0",
					r.BaselineScore, r.TrainScore, r.TestScore, r.OriginalTestScore)
			}
			e.up.mu.Lock()
			calls := e.up.taskKeys["job-key"]
			e.up.mu.Unlock()
			if calls != 0 {
				t.Errorf("the attack called the model %d times", calls)
			}
		})
	}
}
