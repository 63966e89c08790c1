package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/batch"
	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/deployments"
	"github.com/switchyard-ai/switchyard/fetch"
	"github.com/switchyard-ai/switchyard/inference"
	"github.com/switchyard-ai/switchyard/optimizer"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/routing"
	"github.com/switchyard-ai/switchyard/server"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/trainer"
	"github.com/switchyard-ai/switchyard/usagelog"
)

// fakeOpenAIUpstream is a scripted OpenAI-compatible LLM server: it answers every chat
// completion with "Hello from the fake upstream", plain or streamed with usage.
func fakeOpenAIUpstream(t *testing.T) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(fakeOpenAIChat))
	t.Cleanup(ts.Close)
	return ts
}

// fakeOpenAIChat is fakeOpenAIUpstream's handler: "Hello from the fake upstream" to every
// chat completion, plain or streamed with usage; 404 to any other path.
func fakeOpenAIChat(w http.ResponseWriter, r *http.Request) {
	const answer = "Hello from the fake upstream"
	var req struct {
		Model  string `json:"model"`
		Stream bool   `json:"stream"`
	}
	json.NewDecoder(r.Body).Decode(&req)
	if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.Error(w, `{"error":{"message":"not found"}}`, 404)
		return
	}
	usage := map[string]int{"prompt_tokens": 7, "completion_tokens": 5, "total_tokens": 12}
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"id": "chatcmpl-fake", "object": "chat.completion", "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": answer}}},
			"usage": usage,
		})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	for _, part := range strings.SplitAfter(answer, " ") {
		b, _ := json.Marshal(map[string]any{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": part}}}})
		fmt.Fprintf(w, "data: %s\n\n", b)
	}
	b, _ := json.Marshal(map[string]any{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "model": req.Model,
		"choices": []any{map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": "stop"}}})
	fmt.Fprintf(w, "data: %s\n\n", b)
	b, _ = json.Marshal(map[string]any{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "model": req.Model,
		"choices": []any{}, "usage": usage})
	fmt.Fprintf(w, "data: %s\n\ndata: [DONE]\n\n", b)
}

// serveForClients runs `switchyard serve` in-process on a random port with the key given
// in SWITCHYARD_API_KEYS, local URLs allowed, and the openai and cohere providers pointed
// at a scripted upstream, fakeClientsUpstream (extra flags follow). It returns the base URL
// and the capabilities missing from its OpenAPI document.
func serveForClients(t *testing.T, key string, extra ...string) (base string, missing []string) {
	t.Helper()
	up := fakeClientsUpstream(t)
	t.Setenv("SWITCHYARD_API_KEYS", key)
	t.Setenv("OPENAI_API_KEY", "sk-fake")
	t.Setenv("OPENAI_BASE_URL", up.URL+"/v1")
	t.Setenv("COHERE_API_KEY", "co-fake")
	t.Setenv("COHERE_BASE_URL", up.URL)
	ctx, cancel := context.WithCancel(context.Background())
	stdout, stderr := &syncBuffer{}, &syncBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, append([]string{"serve", "--addr", "127.0.0.1:0", "--data", t.TempDir(), "--allow-local-urls"}, extra...), stdout, stderr)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("serve did not stop")
		}
	})
	// The address is read from the "listening" log line.
	deadline := time.Now().Add(20 * time.Second)
	for base == "" {
		if m := addrRe.FindStringSubmatch(stderr.String()); m != nil {
			base = "http://" + m[1]
			break
		}
		select {
		case code := <-done:
			t.Fatalf("serve exited with %d: %s", code, stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not start: %s", stderr.String())
		}
	}
	code, doc := get(t, base+"/api/v1/openapi.json", key)
	if code != 200 {
		t.Fatalf("openapi.json: %d", code)
	}
	paths, _ := doc["paths"].(map[string]any)
	for capability, path := range map[string]string{
		"select": "/api/v1/model-select", "completions": "/api/v1/completions",
		"trainer": "/api/v1/routers/train", "optimizer": "/api/v1/optimize", "batches": "/v1/batches",
	} {
		if _, ok := paths[path]; !ok {
			missing = append(missing, capability)
		}
	}
	return base, missing
}

// runPythonSuite runs the Python client's unittest suite with the interpreter py ("" for
// python3) and the given environment, and fails the test when it fails. It skips when
// python3 is missing.
func runPythonSuite(t *testing.T, py string, env ...string) {
	t.Helper()
	if py == "" {
		var err error
		if py, err = exec.LookPath("python3"); err != nil {
			t.Skip("python3 is not installed; the Python client's tests need it (apt-get install python3)")
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, "-m", "unittest", "discover", "-s", "tests", "-t", ".", "-v")
	cmd.Dir = filepath.Join("..", "..", "clients", "python")
	cmd.Env = append(append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1"), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python3 -m unittest failed: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "\nOK") {
		t.Fatalf("unexpected unittest output:\n%s", out)
	}
	t.Logf("python client tests:\n%s", lastLines(string(out), 3))
}

// TestPythonClient runs the Python client's unittest suite against a real `switchyard
// serve` (what it wires today; capabilities it lacks are skipped with a log line).
func TestPythonClient(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed; the Python client's tests need it (apt-get install python3)")
	}
	const key = "py-client-test-key"
	base, missing := serveForClients(t, key)
	if len(missing) > 0 {
		t.Logf("switchyard serve is not wired with %v; those Python tests are skipped here (TestPythonClientAllCapabilities runs them)", missing)
	}
	data := httptest.NewServer(http.FileServer(http.Dir(filepath.Join("..", "..", "examples", "data"))))
	defer data.Close()
	runPythonSuite(t, "",
		"SWITCHYARD_BASE_URL="+base,
		"SERVICE_API_KEY="+key,
		"SWITCHYARD_TEST_DATA_URL="+data.URL,
		"SWITCHYARD_TEST_MODEL=openai/gpt-4o-mini",
		"SWITCHYARD_TEST_SKIP="+strings.Join(missing, ","),
	)
}

// TestPythonClientAllCapabilities runs the whole Python suite, optimizer flow included,
// against the server package with every capability on an in-memory store: the real
// trainer, selection with trained routers, completions over a scripted upstream, and the
// real optimizer with the scripted sandbox runner and proposer.
func TestPythonClientAllCapabilities(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed; the Python client's tests need it (apt-get install python3)")
	}
	runPythonSuiteAllCapabilities(t, "")
}

// TestPythonClientDeclaredMinimum runs the whole Python suite, as
// TestPythonClientAllCapabilities does, with an interpreter of the oldest Python the
// client declares (pyproject.toml's requires-python), so that the declaration stays true.
// It skips, saying so, when no such interpreter is installed (python3.X on PATH, or a
// pyenv version): Debian ships one Python 3 only.
func TestPythonClientDeclaredMinimum(t *testing.T) {
	minimum := declaredPythonMinimum(t)
	py := findPython(minimum)
	if py == "" {
		t.Skipf("no Python %s interpreter (python%s on PATH or under pyenv's versions); the client declares it as its minimum, and only a run on it shows the declaration true", minimum, minimum)
	}
	t.Logf("running the Python client's suite with %s (Python %s, the declared minimum)", py, minimum)
	runPythonSuiteAllCapabilities(t, py)
}

// declaredPythonMinimum is the X.Y of the Python client's requires-python (">=X.Y").
func declaredPythonMinimum(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "clients", "python", "pyproject.toml"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^requires-python\s*=\s*">=\s*(3\.\d+)"`).FindSubmatch(b)
	if m == nil {
		t.Fatal(`clients/python/pyproject.toml has no requires-python = ">=3.X"`)
	}
	return string(m[1])
}

// findPython returns an interpreter of Python version ("3.7") that says it is that version:
// pythonVERSION on PATH, else one under pyenv's versions ($PYENV_ROOT or ~/.pyenv); "" if
// there is none.
func findPython(version string) string {
	var candidates []string
	if p, err := exec.LookPath("python" + version); err == nil {
		candidates = append(candidates, p)
	}
	root := os.Getenv("PYENV_ROOT")
	if root == "" {
		if home, err := os.UserHomeDir(); err == nil {
			root = filepath.Join(home, ".pyenv")
		}
	}
	if root != "" {
		found, _ := filepath.Glob(filepath.Join(root, "versions", version+".*", "bin", "python"+version))
		slices.Reverse(found) // the newest patch release first, roughly
		candidates = append(candidates, found...)
	}
	for _, p := range candidates {
		out, err := exec.Command(p, "-c", "import sys; print('%d.%d' % sys.version_info[:2])").Output()
		if err == nil && strings.TrimSpace(string(out)) == version {
			return p
		}
	}
	return ""
}

// runPythonSuiteAllCapabilities runs the whole Python suite with the interpreter py (""
// for python3) against the server package with every capability (see
// TestPythonClientAllCapabilities).
func runPythonSuiteAllCapabilities(t *testing.T, py string) {
	t.Helper()
	up := fakeClientsUpstream(t)
	var spend server.Option
	front, forward := publicFront(t) // agent_code_url's base (agent_code() downloads it)
	url := cliServer(t, func(st *store.Store) []server.Option {
		svc, err := trainer.New(st, trainer.WithFetcher(&fetch.Fetcher{AllowLocal: true}),
			trainer.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
			trainer.WithFitOptions(func(o *inference.FitOptions) { o.L2 = []float64{1e-3} }))
		if err != nil {
			t.Fatal(err)
		}
		if err := svc.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		env := map[string]string{"OPENAI_API_KEY": "sk-fake", "OPENAI_BASE_URL": up.URL + "/v1",
			"COHERE_API_KEY": "co-fake", "COHERE_BASE_URL": up.URL}
		roll := usagelog.NewRollup(st, usagelog.RollupOptions{})
		spend = server.Spend(roll)
		reg := providers.FromEnv(func(k string) string { return env[k] }, providers.Options{})
		gw, err := completions.New(completions.Options{Providers: reg, Store: st,
			Cache: completions.CacheOptions{Driver: &completions.MemoryCache{}}, Observer: roll})
		if err != nil {
			t.Fatal(err)
		}
		// LiteLLM's /model/new deployments, as serve has them (test_server_orgs.py).
		deps, err := deployments.New(deployments.Options{Store: st, Gateway: gw, Registry: reg, SecretKey: []byte("salt-for-tests"),
			LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
		if err != nil {
			t.Fatal(err)
		}
		if err := deps.Sync(context.Background()); err != nil {
			t.Fatal(err)
		}
		return []server.Option{
			server.StoredDeployments(deps),
			spend,
			server.CustomRouters(svc),
			server.ModelSelection(routing.NewSelector(routing.Options{Store: st, CustomModels: routing.TrainerModels(svc)})),
			server.Completions(gw),
			optimizerOption(t, st, optimizer.WithPublicURL(front)),
			batchesOption(t, st),
		}
	})
	forward(url)
	data := httptest.NewServer(http.FileServer(http.Dir(filepath.Join("..", "..", "examples", "data"))))
	defer data.Close()
	runPythonSuite(t, py,
		"SWITCHYARD_BASE_URL="+url,
		"SERVICE_API_KEY="+cliKey,
		"SWITCHYARD_TEST_DATA_URL="+data.URL,
		"SWITCHYARD_TEST_BUNDLE_URL="+bundleServer(t),
		"SWITCHYARD_TEST_MODEL=openai/gpt-4o-mini",
		"SWITCHYARD_TEST_SKIP=",
	)
}

// batchesOption plugs the Files and Batch APIs in, on st, and starts their service once
// the server is its Executor.
func batchesOption(t *testing.T, st *store.Store) server.Option {
	files, err := batch.NewFiles(st, batch.FilesOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := batch.New(st, files, batch.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return func(s *server.Server) error {
		if err := server.Batches(svc)(s); err != nil {
			return err
		}
		return svc.Start(context.Background())
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
