package optimizer

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/sandbox"
)

// The scripted task: each input is "<category>: <text>". The scripted task model answers
// correctly only when the system prompt holds the line "RULE <category>"; otherwise it
// echoes the text (wrong for every row of the dataset below).

var categories = []string{"upper", "reverse", "count", "double"}

func solve(input string) string {
	cat, text, _ := strings.Cut(input, ": ")
	switch cat {
	case "upper":
		return strings.ToUpper(text)
	case "reverse":
		r := []rune(text)
		for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
			r[i], r[j] = r[j], r[i]
		}
		return string(r)
	case "count":
		return fmt.Sprint(len(strings.Fields(text)))
	case "double":
		return text + text
	}
	return text
}

// scriptedAnswer answers like the scripted task model. "SKIP <category>" in the system prompt
// makes it ignore that category's RULE (a variant that wins rows and loses others).
func scriptedAnswer(system, input string) string {
	cat, text, _ := strings.Cut(input, ": ")
	if strings.Contains(system, "SKIP "+cat) {
		return text
	}
	if strings.Contains(system, "RULE "+cat) {
		return solve(input)
	}
	return text
}

// scriptedDataset has 8 rows per category (32 rows).
func scriptedDataset() []sandbox.Row {
	words := []string{"apple pie", "blue sky day", "cold tea", "dark night owl", "eager fox", "fresh green leaf", "gold ring", "happy little cloud"}
	var rows []sandbox.Row
	for i := range words {
		for _, c := range categories {
			in := fmt.Sprintf("%s: %s %d", c, words[i], i)
			rows = append(rows, sandbox.Row{Input: in, Answer: solve(in)})
		}
	}
	return rows
}

// scriptedUpstream is a fake OpenAI-compatible LLM server (named as a fake: it is a test
// double). Model "proposer" is the proposer; any other model is the task model.
type scriptedUpstream struct {
	*httptest.Server
	taskKey string // the bearer key the task model requires ("" = any)
	// failProposer makes that many proposer calls fail with HTTP proposerStatus.
	failProposer   int
	proposerStatus int

	mu             sync.Mutex
	proposerCalls  int
	taskCalls      int
	proposerInputs []string // every <input> the proposer was shown
	proposerBodies []string
	taskKeys       map[string]int
}

func newScriptedUpstream(t *testing.T, taskKey string) *scriptedUpstream {
	u := &scriptedUpstream{taskKey: taskKey, taskKeys: map[string]int{}}
	u.Server = httptest.NewServer(http.HandlerFunc(u.serve))
	t.Cleanup(u.Close)
	return u
}

func (u *scriptedUpstream) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
		return
	}
	var req struct {
		Model    string `json:"model"`
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error":{"message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	var system, user string
	for _, m := range req.Messages {
		switch m.Role {
		case "system":
			system = m.Content
		case "user":
			user = m.Content
		}
	}
	var answer string
	key := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	u.mu.Lock()
	if req.Model == "proposer" && u.failProposer > 0 {
		u.failProposer--
		u.mu.Unlock()
		w.WriteHeader(u.proposerStatus)
		w.Write([]byte(`{"error":{"message":"scripted failure","type":"server_error"}}`))
		return
	}
	if req.Model == "proposer" {
		u.proposerCalls++
		u.proposerBodies = append(u.proposerBodies, user)
		answer = u.propose(user)
	} else {
		u.taskCalls++
		u.taskKeys[key]++
		if u.taskKey != "" && key != u.taskKey {
			u.mu.Unlock()
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"error":{"message":"bad key","type":"invalid_request_error"}}`))
			return
		}
		answer = scriptedAnswer(system, user)
	}
	u.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-scripted", "object": "chat.completion", "model": req.Model,
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": answer}}},
		"usage": map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
	})
}

// propose is the scripted proposer: odd calls add a useless line (the variant ties and is
// discarded); even calls add the RULE of the first failing row's category.
func (u *scriptedUpstream) propose(msg string) string {
	cur := between(msg, "<current_prompt>\n", "\n</current_prompt>")
	var inputs []string
	for rest := msg; ; {
		_, after, ok := strings.Cut(rest, "<input>")
		if !ok {
			break
		}
		in, tail, _ := strings.Cut(after, "</input>")
		inputs = append(inputs, in)
		rest = tail
	}
	u.proposerInputs = append(u.proposerInputs, inputs...)
	if u.proposerCalls%2 == 1 || len(inputs) == 0 {
		return "<prompt>" + cur + "\nBe careful and precise.</prompt>"
	}
	cat, _, _ := strings.Cut(inputs[0], ": ")
	return "Here it is:\n<prompt>" + cur + "\nRULE " + cat + ": apply the " + cat + " rule.</prompt>"
}

func between(s, a, b string) string {
	_, after, _ := strings.Cut(s, a)
	in, _, _ := strings.Cut(after, b)
	return in
}

// fakeRunner is a fake sandbox.Runner for loop tests: it executes nothing from the bundle.
// It reads SYSTEM_PROMPT from agent.py and does what testdata/bundle/agent.py does — one
// call per row to the gateway — then scores by exact match like eval.py.
type fakeRunner struct {
	// block, when it returns true for a job, makes Run wait for ctx to end.
	block func(job sandbox.Job) bool
	// fail, when it returns an error for a job, makes Run return it.
	fail func(job sandbox.Job) error
	// feedback makes the scores (score, feedback) pairs, as an eval.py returning them would.
	feedback bool
	// mangle, when set, may change each run's result (a flaky task model).
	mangle func(job sandbox.Job, res *sandbox.Result)
	// delay, when set, is how long a run takes before it answers (a slow task model).
	delay func(job sandbox.Job) time.Duration

	mu   sync.Mutex
	runs [][]string // inputs of each run, in order of start
}

func (f *fakeRunner) Name() string { return "fake" }

func (f *fakeRunner) Run(ctx context.Context, job sandbox.Job) (*sandbox.Result, error) {
	if err := job.Validate(); err != nil {
		return nil, err
	}
	var ins []string
	for _, r := range job.Rows {
		ins = append(ins, r.Input)
	}
	f.mu.Lock()
	f.runs = append(f.runs, ins)
	f.mu.Unlock()
	if f.block != nil && f.block(job) {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if f.delay != nil {
		select {
		case <-time.After(f.delay(job)):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if f.fail != nil {
		if err := f.fail(job); err != nil {
			return nil, err
		}
	}
	a, err := ParseAgent(job.Files["agent.py"])
	if err != nil {
		return nil, &sandbox.JobError{Reason: sandbox.ReasonException, Message: "import agent.py raised SyntaxError"}
	}
	res := &sandbox.Result{}
	for _, row := range job.Rows {
		pred, tokens, err := askGateway(ctx, job.Gateway, a.Prompt(), row.Input)
		if err != nil {
			return nil, &sandbox.JobError{Reason: sandbox.ReasonException, Message: "run_batch raised HTTPError: " + err.Error()}
		}
		res.Predictions = append(res.Predictions, pred)
		res.Usage.Tokens += tokens
		sc := 0.0
		if strings.TrimSpace(pred) == strings.TrimSpace(row.Answer) {
			sc = 1
		}
		res.Scores = append(res.Scores, sc)
		if f.feedback {
			note := ""
			if sc < 1 {
				note = fmt.Sprintf("wrong: %q is not %q", pred, row.Answer)
			}
			res.Feedback = append(res.Feedback, note)
		}
	}
	if f.mangle != nil {
		f.mangle(job, res)
	}
	return res, nil
}

func (f *fakeRunner) allRuns() [][]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([][]string(nil), f.runs...)
}

func askGateway(ctx context.Context, gw sandbox.Gateway, system, input string) (string, int64, error) {
	body, _ := json.Marshal(map[string]any{"model": gw.Model, "messages": []map[string]string{
		{"role": "system", "content": system}, {"role": "user", "content": input}}})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, gw.BaseURL+"/chat/completions", bytes.NewReader(body))
	if err != nil {
		return "", 0, err
	}
	req.Header.Set("Authorization", "Bearer "+gw.APIKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", 0, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	var out struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
		Usage struct {
			TotalTokens int64 `json:"total_tokens"`
		} `json:"usage"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || len(out.Choices) == 0 {
		return "", 0, fmt.Errorf("bad response: %v", err)
	}
	return out.Choices[0].Message.Content, out.Usage.TotalTokens, nil
}

// bundleFiles returns the test bundle's files with the scripted dataset.
func bundleFiles(t testing.TB) map[string][]byte {
	agent, err := os.ReadFile("testdata/bundle/agent.py")
	if err != nil {
		t.Fatal(err)
	}
	eval, err := os.ReadFile("testdata/bundle/eval.py")
	if err != nil {
		t.Fatal(err)
	}
	ds, _ := json.Marshal(scriptedDataset())
	return map[string][]byte{"agent.py": agent, "eval.py": eval, "dataset.json": ds}
}

// zipFiles builds a ZIP (deflated) of files, in sorted order.
func zipFiles(t testing.TB, files map[string][]byte) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		w, err := zw.Create(n)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(files[n])
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// serveBytes serves data at /bundle.zip on a local test server.
func serveBytes(t testing.TB, data []byte) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/zip")
		w.Write(data)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/bundle.zip"
}
