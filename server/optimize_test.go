package server

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/fetch"
	"github.com/switchyard-ai/switchyard/optimizer"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/sandbox"
	"github.com/switchyard-ai/switchyard/sandbox/process"
)

const optimizeOtherKey = "optimize-other-key"

// optimizeTask: inputs are "<category>: <text>"; the scripted task model solves a category
// only when the system prompt holds "RULE <category>", else echoes the text (always wrong).
func optimizeSolve(input string) string {
	cat, text, _ := strings.Cut(input, ": ")
	switch cat {
	case "first":
		return strings.Fields(text)[0]
	case "reverse":
		r := []rune(text)
		for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
			r[i], r[j] = r[j], r[i]
		}
		return string(r)
	case "count":
		return fmt.Sprint(len(strings.Fields(text)))
	case "double":
		return text + "-" + text
	}
	return text
}

func optimizeDataset() []map[string]string {
	words := []string{"apple pie", "blue sky day", "cold tea", "dark night owl", "eager fox", "fresh green leaf", "gold ring", "happy little cloud"}
	var rows []map[string]string
	for i, w := range words {
		for _, c := range []string{"first", "reverse", "count", "double"} {
			in := fmt.Sprintf("%s: %s %d", c, w, i)
			rows = append(rows, map[string]string{"input": in, "answer": optimizeSolve(in)})
		}
	}
	return rows
}

// scriptedOptimizeUpstream is a fake OpenAI-compatible LLM (a test double): model
// "proposer" proposes prompts, every other model is the task model.
type scriptedOptimizeUpstream struct {
	mu            sync.Mutex
	proposerCalls int
	taskCalls     int
	shownInputs   []string
}

func (u *scriptedOptimizeUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model    string `json:"model"`
		Messages []struct{ Role, Content string }
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, "bad json", http.StatusBadRequest)
		return
	}
	var system, user string
	for _, m := range req.Messages {
		if m.Role == "system" {
			system = m.Content
		} else if m.Role == "user" {
			user = m.Content
		}
	}
	u.mu.Lock()
	var answer string
	if req.Model == "proposer" {
		u.proposerCalls++
		_, cur, _ := strings.Cut(user, "<current_prompt>\n")
		cur, _, _ = strings.Cut(cur, "\n</current_prompt>")
		var inputs []string
		for rest := user; ; {
			_, after, ok := strings.Cut(rest, "<input>")
			if !ok {
				break
			}
			in, tail, _ := strings.Cut(after, "</input>")
			inputs, rest = append(inputs, in), tail
		}
		u.shownInputs = append(u.shownInputs, inputs...)
		if u.proposerCalls%2 == 1 || len(inputs) == 0 {
			answer = "<prompt>" + cur + "\nBe careful.</prompt>"
		} else {
			cat, _, _ := strings.Cut(inputs[0], ": ")
			answer = "<prompt>" + cur + "\nRULE " + cat + "</prompt>"
		}
	} else {
		u.taskCalls++
		cat, text, _ := strings.Cut(user, ": ")
		answer = text
		if strings.Contains(system, "RULE "+cat) {
			answer = optimizeSolve(user)
		}
	}
	u.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"id": "x", "object": "chat.completion", "model": req.Model,
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": answer}}},
		"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
	})
}

// fakeAgentRunner is a fake sandbox.Runner (a test double that executes nothing from the
// bundle): it does what examples/agent-bundle/agent.py does — one gateway call per row with
// the EDITABLE section's SYSTEM_PROMPT — and scores by exact match.
type fakeAgentRunner struct{ block func(sandbox.Job) bool }

func (fakeAgentRunner) Name() string { return "fake" }

func (f fakeAgentRunner) Run(ctx context.Context, job sandbox.Job) (*sandbox.Result, error) {
	if f.block != nil && f.block(job) {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	a, err := optimizer.ParseAgent(job.Files["agent.py"])
	if err != nil {
		return nil, &sandbox.JobError{Reason: sandbox.ReasonException, Message: err.Error()}
	}
	res := &sandbox.Result{}
	for _, row := range job.Rows {
		body, _ := json.Marshal(map[string]any{"model": job.Gateway.Model, "messages": []map[string]string{
			{"role": "system", "content": a.Prompt()}, {"role": "user", "content": row.Input}}})
		req, _ := http.NewRequestWithContext(ctx, "POST", job.Gateway.BaseURL+"/chat/completions", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+job.Gateway.APIKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, &sandbox.JobError{Reason: sandbox.ReasonException, Message: err.Error()}
		}
		var out struct {
			Choices []struct{ Message struct{ Content string } }
		}
		json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		if resp.StatusCode != 200 || len(out.Choices) == 0 {
			return nil, &sandbox.JobError{Reason: sandbox.ReasonException, Message: fmt.Sprintf("run_batch raised HTTPError: HTTP %d", resp.StatusCode)}
		}
		pred := out.Choices[0].Message.Content
		res.Predictions = append(res.Predictions, pred)
		sc := 0.0
		if strings.EqualFold(strings.TrimSpace(pred), strings.TrimSpace(row.Answer)) {
			sc = 1
		}
		res.Scores = append(res.Scores, sc)
	}
	return res, nil
}

// exampleBundle zips examples/agent-bundle's agent.py and eval.py with the scripted dataset.
func exampleBundle(t *testing.T) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, n := range []string{"agent.py", "eval.py"} {
		b, err := os.ReadFile(filepath.Join("..", "examples", "agent-bundle", n))
		if err != nil {
			t.Fatal(err)
		}
		w, _ := zw.Create(n)
		w.Write(b)
	}
	ds, _ := json.Marshal(optimizeDataset())
	w, _ := zw.Create("dataset.json")
	w.Write(ds)
	zw.Close()
	return buf.Bytes()
}

type optimizeEnv struct {
	hs  *httptest.Server
	s   *Server
	svc *optimizer.Service
	up  *scriptedOptimizeUpstream
	url string // bundle URL
}

// optimizeServer builds the whole stack on a real listener: server (with the completions
// gateway and the optimizer), scripted upstream behind a providers registry, and the bundle
// served over local HTTP.
func optimizeServer(t *testing.T, runner sandbox.Runner) *optimizeEnv {
	t.Helper()
	e := &optimizeEnv{up: &scriptedOptimizeUpstream{}}
	ups := httptest.NewServer(e.up)
	t.Cleanup(ups.Close)
	reg := providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "scripted", BaseURL: ups.URL + "/v1", APIKey: "sk-up"}))
	st := newTestStore(t)
	g, err := completions.New(completions.Options{Providers: reg, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	proposer, err := optimizer.NewLLMProposer(reg, "scripted/proposer", nil)
	if err != nil {
		t.Fatal(err)
	}
	e.hs = httptest.NewUnstartedServer(nil)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	e.svc, err = optimizer.New(st, runner, proposer,
		optimizer.WithFetcher(&fetch.Fetcher{AllowLocal: true}),
		optimizer.WithGateway("http://"+e.hs.Listener.Addr().String()+"/v1", nil),
		optimizer.WithPublicURL("http://"+e.hs.Listener.Addr().String()),
		optimizer.WithSandboxConcurrency(2),
		optimizer.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	e.s, err = New(Config{Store: st, APIKeys: []string{testKey, optimizeOtherKey}, Logger: log}, Completions(g), Optimizer(e.svc))
	if err != nil {
		t.Fatal(err)
	}
	e.hs.Config.Handler = e.s
	e.hs.Start()
	t.Cleanup(e.hs.Close)
	if err := e.svc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := e.s.Close(ctx); err != nil {
			t.Errorf("Close: %v (a job did not stop when cancelled)", err)
		}
	})
	bundle := exampleBundle(t)
	bs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(bundle) }))
	t.Cleanup(bs.Close)
	e.url = bs.URL + "/bundle.zip"
	return e
}

func (e *optimizeEnv) call(t *testing.T, method, path, key, body string) reply {
	t.Helper()
	return do(t, e.s, method, path, key, body)
}

func (e *optimizeEnv) wait(t *testing.T, id string) reply {
	t.Helper()
	deadline := time.Now().Add(50 * time.Second)
	for time.Now().Before(deadline) {
		r := e.call(t, "GET", "/api/v1/optimize/status?job_id="+id, testKey, "")
		if r.status != 200 {
			t.Fatalf("status: %d %s", r.status, r.raw)
		}
		switch r.body["status"] {
		case "completed", "failed", "interrupted":
			return r
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("job %s did not finish", id)
	return reply{}
}

func TestOptimizeSubmitValidation(t *testing.T) {
	e := optimizeServer(t, fakeAgentRunner{block: func(sandbox.Job) bool { return true }})
	cases := []struct{ body, msg string }{
		{`{"optimizer":"agentopt","target_models":["scripted/task"]}`, "agentopt requires input_url"},
		{`{"optimizer":"agentopt","input_url":"","target_models":["scripted/task"]}`, "agentopt requires input_url"},
		{`{"optimizer":"agentopt","input_url":"https://x.example/b.zip"}`, "agentopt requires target_models"},
		{`{"optimizer":"agentopt","input_url":"https://x.example/b.zip","target_models":[]}`, "agentopt requires target_models"},
		{`{"input_url":"https://x.example/b.zip","target_models":["a/b"],"n_iterations":0}`, "n_iterations must be 1-50"},
		{`{"input_url":"https://x.example/b.zip","target_models":["a/b"],"n_iterations":51}`, "n_iterations must be 1-50"},
		{`{"input_url":"https://x.example/b.zip","target_models":["a/b"],"overall_timeout_seconds":299}`, "overall_timeout_seconds must be 300-7200"},
		{`{"input_url":"https://x.example/b.zip","target_models":["a/b"],"overall_timeout_seconds":7201}`, "overall_timeout_seconds must be 300-7200"},
		{`{"input_url":"https://x.example/b.zip","target_models":["a/b"],"llm_call_timeout_seconds":29}`, "llm_call_timeout_seconds must be 30-600"},
		{`{"input_url":"https://x.example/b.zip","target_models":["a/b"],"llm_call_timeout_seconds":601}`, "llm_call_timeout_seconds must be 30-600"},
		{`{"input_url":"https://x.example/b.zip","target_models":["a/b"],"sandbox_timeout_seconds":59}`, "sandbox_timeout_seconds must be 60-1800"},
		{`{"input_url":"https://x.example/b.zip","target_models":["a/b"],"sandbox_timeout_seconds":1801}`, "sandbox_timeout_seconds must be 60-1800"},
		// However far outside, beyond any integer type, the spec's message.
		{`{"input_url":"https://x.example/b.zip","target_models":["a/b"],"n_iterations":9223372036854775808}`, "n_iterations must be 1-50"},
		{`{"input_url":"https://x.example/b.zip","target_models":["a/b"],"n_iterations":-99999999999999999999}`, "n_iterations must be 1-50"},
		{`{"input_url":"https://x.example/b.zip","target_models":["a/b"],"overall_timeout_seconds":1e30}`, "overall_timeout_seconds must be 300-7200"},
		{`{"input_url":"https://x.example/b.zip","target_models":["a/b"],"n_iterations":2.5}`, "n_iterations must be an integer, got 2.5"},
		// Beyond float64 too (a spec audit found the decoder's complaint here).
		{`{"input_url":"https://x.example/b.zip","target_models":["a/b"],"n_iterations":1e400}`, "n_iterations must be 1-50"},
		{`{"input_url":"https://x.example/b.zip","target_models":["a/b"],"sandbox_timeout_seconds":-1e400}`, "sandbox_timeout_seconds must be 60-1800"},
		{`{"input_url":"https://x.example/b.zip","target_models":["a/b"],"llm_call_timeout_seconds":1e-400}`, "llm_call_timeout_seconds must be 30-600"},
		{`{"target_models":["a/b"],"n_iterations":1e400}`, "agentopt requires input_url"},
		// A wrong type is worded as every field's of the server: the field, the type it
		// must be, the one sent.
		{`{"input_url":"https://x.example/b.zip","target_models":["a/b"],"n_iterations":"10"}`, `field "n_iterations" must be an integer, got string`},
		{`{"input_url":"https://x.example/b.zip","target_models":["a/b"],"overall_timeout_seconds":true}`, `field "overall_timeout_seconds" must be an integer, got bool`},
		{`{"input_url":"https://x.example/b.zip","target_models":["a/b"],"llm_call_timeout_seconds":[30]}`, `field "llm_call_timeout_seconds" must be an integer, got array`},
		{`{"input_url":"https://x.example/b.zip","target_models":["a/b"],"sandbox_timeout_seconds":{}}`, `field "sandbox_timeout_seconds" must be an integer, got object`},
		{`{"input_url":"https://x.example/b.zip","target_models":"a/b"}`, `field "target_models" must be an array, got string`},
		{`{"input_url":"https://x.example/b.zip","target_models":["a/b",7]}`, `field "target_models[1]" must be a string, got number`},
		{`{"input_url":7,"target_models":["a/b"]}`, `field "input_url" must be a string, got number`},
		{`{"optimizer":1,"input_url":"https://x.example/b.zip","target_models":["a/b"]}`, `field "optimizer" must be a string, got number`},
	}
	for _, c := range cases {
		r := e.call(t, "POST", "/api/v1/optimize", testKey, c.body)
		if r.status != 422 || r.body["error"] != KindValidation || r.body["message"] != c.msg {
			t.Errorf("%s: %d %s, want 422 %q", c.body, r.status, r.raw, c.msg)
		}
	}
	for body, part := range map[string]string{
		`{"optimizer":"dspy","input_url":"https://x.example/b.zip","target_models":["a/b"]}`: `optimizer must be "agentopt"`,
		`{"input_url":"https://x.example/b.zip","target_models":["gpt-4o"]}`:                 "target_models[0] must be provider/model",
		`{"input_url":"https://x.example/b.zip","target_models":["a/b"],"bogus":1}`:          "bogus",
		`{"input_url":"https://x.example/b.zip","target_models":"a/b"}`:                      "target_models",
	} {
		wantError(t, e.call(t, "POST", "/api/v1/optimize", testKey, body), 422, KindValidation, part)
	}
	wantError(t, e.call(t, "POST", "/api/v1/optimize", testKey, `{`), 400, KindBadRequest, "malformed")
	wantError(t, e.call(t, "POST", "/api/v1/optimize", "", `{}`), 401, KindUnauthorized, "API key")

	// Accepted with the bounds' edges (an integral number written as 5e1 is 50).
	r := e.call(t, "POST", "/api/v1/optimize", testKey, `{"optimizer":"agentopt","input_url":"`+e.url+`","target_models":["scripted/task"],
		"n_iterations":5e1,"overall_timeout_seconds":300,"llm_call_timeout_seconds":600.0,"sandbox_timeout_seconds":60}`)
	if r.status != 202 || r.body["status"] != "queued" || r.body["version"] == "" || r.body["job_id"] == "" {
		t.Fatalf("submit: %d %s", r.status, r.raw)
	}
	id := r.body["job_id"].(string)
	// The job runs (the fake runner blocks), so results are not ready: 409 with its status.
	r = e.call(t, "GET", "/api/v1/optimize/results?job_id="+id, testKey, "")
	wantError(t, r, 409, KindConflict, "results are available once")
	if r.body["status"] != "queued" && r.body["status"] != "running" {
		t.Errorf("409 body lacks the status: %s", r.raw)
	}
	st := e.call(t, "GET", "/api/v1/optimize/status?job_id="+id, testKey, "")
	if st.status != 200 || st.body["n_iterations"] != 50.0 {
		t.Errorf("status: %d %s", st.status, st.raw)
	}
	// Another key sees nothing.
	for _, p := range []string{"GET /api/v1/optimize/status", "GET /api/v1/optimize/results", "POST /api/v1/optimize/cancel"} {
		method, path, _ := strings.Cut(p, " ")
		wantError(t, e.call(t, method, path+"?job_id="+id, optimizeOtherKey, ""), 404, KindNotFound, "not found")
	}
	wantError(t, e.call(t, "GET", "/api/v1/optimize/status?job_id=nope", testKey, ""), 404, KindNotFound, "not found")
	wantError(t, e.call(t, "GET", "/api/v1/optimize/status", testKey, ""), 422, KindValidation, "job_id is required")
	// Cancel: interrupted; then the results are readable and a second cancel is a conflict.
	if c := e.call(t, "POST", "/api/v1/optimize/cancel?job_id="+id, testKey, ""); c.status != 200 {
		t.Fatalf("cancel: %d %s", c.status, c.raw)
	}
	done := e.wait(t, id)
	if done.body["status"] != "interrupted" || !strings.Contains(done.body["error_message"].(string), "cancelled") {
		t.Errorf("after cancel: %s", done.raw)
	}
	if r := e.call(t, "GET", "/api/v1/optimize/results?job_id="+id, testKey, ""); r.status != 200 || r.body["status"] != "interrupted" {
		t.Errorf("results after cancel: %d %s", r.status, r.raw)
	}
	// Worded as the results' 409 (it read "job already finished: job opt_… is interrupted"),
	// with the job's status in the body.
	again := e.call(t, "POST", "/api/v1/optimize/cancel?job_id="+id, testKey, "")
	wantError(t, again, 409, KindConflict, "optimization job "+id+" has already ended (interrupted); only a queued or running job can be cancelled")
	if again.body["status"] != "interrupted" || again.body["job_id"] != id {
		t.Errorf("second cancel's body lacks the job's status: %s", again.raw)
	}
	// The routes are in the OpenAPI document.
	doc := e.call(t, "GET", "/api/v1/openapi.json", "", "")
	for _, p := range []string{"/api/v1/optimize", "/api/v1/optimize/status", "/api/v1/optimize/results", "/api/v1/optimize/cancel", "/api/v1/artifacts/{token}/agent.py"} {
		if !strings.Contains(doc.raw, `"`+p+`"`) {
			t.Errorf("OpenAPI document lacks %s", p)
		}
	}
	// Artifacts need no key, and unknown tokens are 404 (not 401).
	wantError(t, e.call(t, "GET", "/api/v1/artifacts/0123456789abcdef0123456789abcdef/agent.py", "", ""), 404, KindNotFound, "not found")
}

// runOptimizeEndToEnd drives submit → status → results over HTTP and checks the outcome.
func runOptimizeEndToEnd(t *testing.T, runner sandbox.Runner) {
	e := optimizeServer(t, runner)
	r := e.call(t, "POST", "/api/v1/optimize", testKey, `{"optimizer":"agentopt","input_url":"`+e.url+`","target_models":["scripted/task"],"n_iterations":4,"overall_timeout_seconds":300,"sandbox_timeout_seconds":60}`)
	if r.status != 202 {
		t.Fatalf("submit: %d %s", r.status, r.raw)
	}
	id := r.body["job_id"].(string)
	st := e.wait(t, id)
	if st.body["status"] != "completed" || st.body["current_iteration"] != 4.0 || st.body["best_score"].(float64) <= st.body["baseline_score"].(float64) {
		t.Fatalf("status: %s", st.raw)
	}
	r = e.call(t, "GET", "/api/v1/optimize/results?job_id="+id, testKey, "")
	if r.status != 200 {
		t.Fatalf("results: %d %s", r.status, r.raw)
	}
	var res optimizer.Results
	if err := json.Unmarshal([]byte(r.raw), &res); err != nil {
		t.Fatal(err)
	}
	m := res.Results[0]
	if m.IterationsRun != 4 || m.IterationsKept != 2 || m.TrainScore == nil || m.BaselineScore == nil || *m.TrainScore <= *m.BaselineScore || m.TestScore == nil || len(m.History) != 5 {
		t.Fatalf("result: %+v", m)
	}
	// The task model was called through Switchyard's gateway with the job's scoped key, so
	// the gateway metered it.
	if m.Usage.TaskSource != "gateway" || m.Usage.Task.Tokens == 0 || m.Usage.Proposer.Tokens != 4*15 {
		t.Errorf("usage: %+v", m.Usage)
	}
	e.up.mu.Lock()
	calls := e.up.taskCalls
	e.up.mu.Unlock()
	if m.Usage.Task.Tokens != int64(15*calls) {
		t.Errorf("gateway metered %d tokens for %d task calls", m.Usage.Task.Tokens, calls)
	}
	// The artifact: public, the example agent with the winning prompt, FIXED unchanged.
	prefix := e.hs.URL + "/api/v1/artifacts/"
	if !strings.HasPrefix(m.AgentCodeURL, prefix) {
		t.Fatalf("agent_code_url %q", m.AgentCodeURL)
	}
	resp, err := http.Get(m.AgentCodeURL)
	if err != nil {
		t.Fatal(err)
	}
	code, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/x-python") {
		t.Fatalf("artifact %s: %d %s %s", m.AgentCodeURL, resp.StatusCode, resp.Header.Get("Content-Type"), code)
	}
	orig, _ := os.ReadFile(filepath.Join("..", "examples", "agent-bundle", "agent.py"))
	a, err := optimizer.ParseAgent(code)
	if err != nil {
		t.Fatal(err)
	}
	o, _ := optimizer.ParseAgent(orig)
	if !bytes.Equal(a.Fixed(), o.Fixed()) || a.Prompt() != m.OptimizedPrompt || !strings.Contains(a.Prompt(), "RULE ") {
		t.Errorf("artifact agent.py:\n%s", code)
	}
	// The scoped key is gone once the job ended.
	if n := len(e.s.Auth().temporary); n != 0 {
		t.Errorf("%d temporary keys left after the job", n)
	}
}

func TestOptimizeEndToEndFakeRunner(t *testing.T) {
	runOptimizeEndToEnd(t, fakeAgentRunner{})
}

func TestOptimizeEndToEndProcessSandbox(t *testing.T) {
	work, err := os.MkdirTemp("", "switchyard-server-optimize-*")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(work) })
	os.Chmod(work, 0o755)
	r, err := process.New(process.Options{WorkDir: work, CacheDir: work, PackageIndex: "http://127.0.0.1:1/simple", Logger: slog.New(slog.DiscardHandler)})
	if errors.Is(err, sandbox.ErrUnavailable) {
		t.Skipf("process sandbox unavailable here (install the Debian package bubblewrap and allow user namespaces): %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	runOptimizeEndToEnd(t, r)
}

// TestOptimizeJobLimitIs429: the optimizer's per-key job limit maps to 429 with Retry-After
// and the message naming the limit; a full queue (the server's, not the key's) to 503 with
// Retry-After, as a full training queue does.
func TestOptimizeJobLimitIs429(t *testing.T) {
	ae := optimizerError(fmt.Errorf("submit: %w", &optimizer.JobLimitError{Limit: 4, Active: 4, Jobs: "optimization", Kind: optimizer.ErrTooManyJobs}))
	if ae == nil || ae.Status != http.StatusTooManyRequests || ae.Header.Get("Retry-After") == "" || !strings.Contains(ae.Message, "limit is 4 per key") {
		t.Fatalf("mapped to %+v, want 429 with Retry-After naming the limit", ae)
	}
	ae = optimizerError(fmt.Errorf("submit: %w", optimizer.ErrQueueFull))
	if ae == nil || ae.Status != http.StatusServiceUnavailable || ae.Kind != KindUnavailable || ae.Header.Get("Retry-After") == "" {
		t.Fatalf("full queue mapped to %+v, want 503 with Retry-After", ae)
	}
}

// TestOptimizeOpenAPIDocumentsAbsentScores: the optional scores say when they are absent,
// and the iteration's search fields are in the document.
func TestOptimizeOpenAPIDocumentsAbsentScores(t *testing.T) {
	e := optimizeServer(t, fakeAgentRunner{})
	r := e.call(t, "GET", "/api/v1/openapi.json", "", "")
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal([]byte(r.raw), &doc); err != nil {
		t.Fatal(err)
	}
	status := string(doc.Paths["/api/v1/optimize/status"]["get"])
	results := string(doc.Paths["/api/v1/optimize/results"]["get"])
	for _, want := range []string{"best_score", "absent until its baseline is measured"} {
		if !strings.Contains(status, want) {
			t.Errorf("status schema lacks %q", want)
		}
	}
	for _, want := range []string{"absent when the job ended before it was measured", "minibatch_score", "rows_run", "proposer_prompt",
		"absent when no candidate ran on the whole split"} {
		if !strings.Contains(results, want) {
			t.Errorf("results schema lacks %q", want)
		}
	}
}

// TestOnlyThreePublicRoutes pins the routes that answer without a key, as the README states:
// health (with LiteLLM's probes), the OpenAPI document and artifact links (whose token is the
// credential).
func TestOnlyThreePublicRoutes(t *testing.T) {
	e := optimizeServer(t, fakeAgentRunner{})
	var public []string
	for _, rt := range e.s.routes {
		if rt.Public {
			public = append(public, rt.Method+" "+rt.Path)
		}
	}
	slices.Sort(public)
	want := []string{"GET /api/v1/artifacts/{token}/agent.py", "GET /api/v1/openapi.json",
		"GET /health/liveliness", "GET /health/liveness", "GET /health/readiness", "GET /healthz"}
	if !slices.Equal(public, want) {
		t.Errorf("public routes %q, want %q", public, want)
	}
}
