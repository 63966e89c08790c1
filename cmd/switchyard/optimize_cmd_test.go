package main

import (
	"archive/zip"
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	neturl "net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/switchyard-ai/switchyard/fetch"
	"github.com/switchyard-ai/switchyard/optimizer"
	"github.com/switchyard-ai/switchyard/sandbox"
	"github.com/switchyard-ai/switchyard/server"
	"github.com/switchyard-ai/switchyard/store"
)

// scriptedRunner is a fake sandbox backend: a row scores 1 when the EDITABLE section of
// agent.py names the row's answer, so scores follow the prompts the optimizer writes. An
// agent.py containing "SLOW AGENT" runs until it is cancelled.
type scriptedRunner struct{}

func (scriptedRunner) Name() string { return "scripted" }

func (scriptedRunner) Run(ctx context.Context, j sandbox.Job) (*sandbox.Result, error) {
	src := string(j.Files["agent.py"])
	if strings.Contains(src, "SLOW AGENT") {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	editable := strings.ToLower(src[strings.Index(src, "EDITABLE START"):strings.Index(src, "EDITABLE END")])
	res := &sandbox.Result{}
	for _, row := range j.Rows {
		ok := strings.Contains(editable, row.Answer)
		res.Predictions = append(res.Predictions, map[bool]string{true: row.Answer, false: "unknown"}[ok])
		res.Scores = append(res.Scores, map[bool]float64{true: 1, false: 0}[ok])
	}
	return res, nil
}

// scriptedProposer is a fake proposer: odd iterations add a useless sentence, even ones
// name the queues of up to two failing rows.
type scriptedProposer struct{}

func (scriptedProposer) Propose(_ context.Context, req optimizer.ProposalRequest) (*optimizer.Proposal, error) {
	if req.Iteration%2 == 1 {
		return &optimizer.Proposal{Prompt: req.CurrentPrompt + "\nBe concise."}, nil
	}
	var add []string
	for _, f := range req.Failures {
		if len(add) < 2 && !strings.Contains(strings.Join(add, " "), f.Expected) {
			add = append(add, f.Expected)
		}
	}
	return &optimizer.Proposal{Prompt: req.CurrentPrompt + "\nQueues include: " + strings.Join(add, ", ") + "."}, nil
}

// bundleZip zips examples/agent-bundle; with slow, agent.py is marked "SLOW AGENT".
func bundleZip(t *testing.T, slow bool) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range []string{"agent.py", "eval.py", "dataset.json"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "examples", "agent-bundle", name))
		if err != nil {
			t.Fatal(err)
		}
		if slow && name == "agent.py" {
			b = append([]byte("# SLOW AGENT\n"), b...)
		}
		w, _ := zw.Create(name)
		w.Write(b)
	}
	zw.Close()
	return buf.Bytes()
}

// bundleServer serves the example bundle at /bundle.zip and a slow one at /slow.zip.
func bundleServer(t *testing.T) string {
	fast, slow := bundleZip(t, false), bundleZip(t, true)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/bundle.zip":
			w.Write(fast)
		case "/slow.zip":
			w.Write(slow)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

// publicFront is the base of artifact links (--public-url) for a test server whose URL is
// known only once it runs: a front that forwards to the URL forward is given, as a proxy
// would.
func publicFront(t *testing.T) (front string, forward func(target string)) {
	var backend atomic.Pointer[httputil.ReverseProxy]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { backend.Load().ServeHTTP(w, r) }))
	t.Cleanup(srv.Close)
	return srv.URL, func(target string) {
		u, err := neturl.Parse(target)
		if err != nil {
			t.Fatal(err)
		}
		backend.Store(httputil.NewSingleHostReverseProxy(u))
	}
}

// optimizerOption is the real optimizer service with the scripted runner and proposer,
// with opts added.
func optimizerOption(t *testing.T, st *store.Store, opts ...optimizer.Option) server.Option {
	svc, err := optimizer.New(st, scriptedRunner{}, scriptedProposer{}, append([]optimizer.Option{
		optimizer.WithFetcher(&fetch.Fetcher{AllowLocal: true}),
		optimizer.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return server.Optimizer(svc)
}

func TestOptimizeCommand(t *testing.T) {
	bundles := bundleServer(t)

	front, forward := publicFront(t)
	url := cliServer(t, func(st *store.Store) []server.Option {
		return []server.Option{optimizerOption(t, st, optimizer.WithPublicURL(front))}
	})
	forward(url)
	t.Setenv("SERVICE_API_KEY", cliKey)
	code, out, errOut := cli(t, "optimize", "--url", url, "--bundle", bundles+"/bundle.zip", "--model", "openai/gpt-4o-mini", "--iterations", "4", "--poll", "20ms")
	if code != 0 {
		t.Fatalf("optimize: %d\n%s\n%s", code, out, errOut)
	}
	t.Logf("stderr:\n%s\nstdout:\n%s", errOut, out)
	// Progress on a non-terminal: plain lines with elapsed time and state, ending completed.
	if !regexp.MustCompile(`(?m)^\[\d\d:\d\d\] completed$`).MatchString(errOut) || strings.Contains(errOut, "\r") {
		t.Fatalf("progress lines:\n%s", errOut)
	}
	for _, want := range []string{
		"openai/gpt-4o-mini (agentopt)",
		"train score  0.000 → 1.000",
		// The split's sizes and seed: 20 rows, 70/30, the default seed.
		"baseline → best, 14 rows)",
		"held-out 6 rows, seed 42)",
		"2 kept of 4 run",
		"/api/v1/artifacts/",
		"score per iteration",
		"0 │", "baseline", "discarded", "kept",
		"Queues include",
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("summary lacks %q:\n%s", want, out)
		}
	}
	// One chart line per iteration (0 = baseline .. 4).
	if n := len(regexp.MustCompile(`(?m)^\s+\d+ │`).FindAllString(out, -1)); n != 5 {
		t.Fatalf("%d chart lines:\n%s", n, out)
	}

	// --no-wait prints the id; --job follows it; --json prints the results document.
	code, out, _ = cli(t, "optimize", "--url", url, "--bundle", bundles+"/bundle.zip", "--model", "openai/gpt-4o-mini", "--iterations", "1", "--no-wait")
	id := strings.TrimSpace(out)
	if code != 0 || !strings.HasPrefix(id, "opt_") && id == "" {
		t.Fatalf("no-wait: %d %q", code, out)
	}
	code, out, errOut = cli(t, "optimize", "--url", url, "--job", id, "--poll", "20ms", "--json")
	if code != 0 || !strings.Contains(out, `"job_id": "`+id+`"`) || !strings.Contains(out, `"iterations_run": 1`) {
		t.Fatalf("follow: %d\n%s\n%s", code, out, errOut)
	}

	// --seed draws the split; the summary names it and the metric eval.py declares;
	// --save-agent writes the best agent.py.
	saved := filepath.Join(t.TempDir(), "best.py")
	code, out, errOut = cli(t, "optimize", "--url", url, "--bundle", bundles+"/bundle.zip", "--model", "openai/gpt-4o-mini", "--iterations", "1", "--seed", "9", "--poll", "20ms", "--save-agent", saved)
	if code != 0 || !strings.Contains(out, "held-out 6 rows, seed 9)") || !regexp.MustCompile(`(?m)^  metric\s+exact_match  \(mean per row, 0-1\)$`).MatchString(out) {
		t.Fatalf("seed: %d\n%s\n%s", code, out, errOut)
	}
	if b, err := os.ReadFile(saved); err != nil || !strings.Contains(string(b), "def run_batch") || !strings.Contains(errOut, "best agent.py of openai/gpt-4o-mini written to "+saved) {
		t.Fatalf("--save-agent: %v\n%s\n%s", err, b, errOut)
	}
	// With several target models, one file each.
	code, _, errOut = cli(t, "optimize", "--url", url, "--bundle", bundles+"/bundle.zip", "--model", "openai/gpt-4o-mini,openai/gpt-4o", "--iterations", "1", "--poll", "20ms", "--save-agent", saved)
	for _, m := range []string{"openai_gpt-4o-mini", "openai_gpt-4o"} {
		if _, err := os.Stat(strings.TrimSuffix(saved, ".py") + "." + m + ".py"); code != 0 || err != nil {
			t.Fatalf("--save-agent, two models: %d %v\n%s", code, err, errOut)
		}
	}
	if code, _, errOut = cli(t, "optimize", "--url", url, "--bundle", bundles+"/bundle.zip", "--model", "openai/gpt-4o-mini", "--seed", "-1"); code == 0 || !strings.Contains(errOut, "-seed: must be an integer from 0 to 18446744073709551615") {
		t.Fatalf("bad seed: %d %s", code, errOut)
	}
	// A bundle the server cannot fetch (or use) is refused at submit, naming input_url.
	code, _, errOut = cli(t, "optimize", "--url", url, "--bundle", bundles+"/missing.zip", "--model", "openai/gpt-4o-mini")
	if code != 1 || !strings.Contains(errOut, "input_url: the bundle could not be fetched") {
		t.Fatalf("missing bundle: %d %s", code, errOut)
	}

	// Cancel a running job: following it then ends with status 1 and the interruption.
	code, out, _ = cli(t, "optimize", "--url", url, "--bundle", bundles+"/slow.zip", "--model", "openai/gpt-4o-mini", "--no-wait")
	slow := strings.TrimSpace(out)
	if code != 0 {
		t.Fatalf("slow submit: %d", code)
	}
	code, out, errOut = cli(t, "optimize", "--url", url, "--job", slow, "--cancel")
	if code != 0 || !strings.Contains(out, "job "+slow+" interrupted: cancelled by the caller") {
		t.Fatalf("cancel: %d %s %s", code, out, errOut)
	}
	code, out, errOut = cli(t, "optimize", "--url", url, "--job", slow, "--poll", "20ms")
	if code != 1 || !strings.Contains(errOut, "interrupted") || !strings.Contains(out, "Optimization "+slow+": interrupted") {
		t.Fatalf("follow cancelled: %d\n%s\n%s", code, out, errOut)
	}

	// A bad request shows the server's message; missing flags are explained.
	code, _, errOut = cli(t, "optimize", "--url", url, "--bundle", bundles+"/b.zip", "--model", "openai/gpt-4o-mini", "--iterations", "99")
	if code != 1 || !strings.Contains(errOut, "n_iterations must be 1-50") {
		t.Fatalf("bad iterations: %d %s", code, errOut)
	}
	code, _, errOut = cli(t, "optimize", "--url", url, "--model", "openai/gpt-4o-mini")
	if code != 1 || !strings.Contains(errOut, "--bundle and --model are required") {
		t.Fatalf("no bundle: %d %s", code, errOut)
	}
}

// TestAgentFileNameIsPortable: with several target models, --save-agent's file of each is
// named by its model with nothing a file name cannot hold on some system: a ':' (an
// Ollama tag) would write an NTFS stream on Windows, a '\' a folder.
func TestAgentFileNameIsPortable(t *testing.T) {
	for model, want := range map[string]string{
		"openai/gpt-4o-mini":         "best.openai_gpt-4o-mini.py",
		"ollama/llama3:8b":           "best.ollama_llama3_8b.py",
		`azure\odd*name?"<x>|`:       "best.azure_odd_name___x__.py",
		"bedrock/anthropic.claude-3": "best.bedrock_anthropic.claude-3.py",
		"tab\there":                  "best.tab_here.py",
	} {
		if got := agentFileNames("best.py", []string{model}); got[0] != want {
			t.Errorf("agentFileNames(best.py, %q) = %q, want %q", model, got[0], want)
		}
	}
}

// TestAgentFileNamesAreUnique: models whose names become the same file name (a/b and a_b;
// names differing only in case, one file on macOS and Windows) each get a short hash of
// their own name, so that --save-agent writes one file per model; the others keep the
// plain name.
func TestAgentFileNamesAreUnique(t *testing.T) {
	models := []string{"a/b", "a_b", "openai/gpt-4o", "OpenAI/GPT-4o", "anthropic/claude-3-5-haiku"}
	got := agentFileNames(filepath.Join("out", "best.py"), models)
	seen := map[string]string{}
	for i, name := range got {
		if other, dup := seen[strings.ToLower(name)]; dup {
			t.Errorf("%s and %s are both written to %s", other, models[i], name)
		}
		seen[strings.ToLower(name)] = models[i]
		if filepath.Dir(name) != "out" || !strings.HasSuffix(name, ".py") {
			t.Errorf("%s: %s is not a .py file beside out/best.py", models[i], name)
		}
	}
	if !regexp.MustCompile(`^best\.a_b-[0-9a-f]{8}\.py$`).MatchString(filepath.Base(got[0])) {
		t.Errorf("a/b: %s, want best.a_b-<hash>.py", got[0])
	}
	if want := filepath.Join("out", "best.anthropic_claude-3-5-haiku.py"); got[4] != want {
		t.Errorf("a model no other collides with: %s, want %s", got[4], want)
	}
	// The same models give the same names, in any order.
	again := agentFileNames(filepath.Join("out", "best.py"), []string{models[1], models[0]})
	if again[0] != got[1] || again[1] != got[0] {
		t.Errorf("names change with the order: %q then %q", got[:2], again)
	}
}
