package agentbundletools_test

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
	"regexp"
	"strconv"
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
	"github.com/switchyard-ai/switchyard/server"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// shopModel is a scripted OpenAI-format LLM for the example: as "task" it asks for
// get_price of every item a question names (parallel tool calls), and once the results are
// in it answers the total; as "proposer" it returns the current prompt with one more line.
type shopModel struct {
	mu        sync.Mutex
	toolTurns int // requests that carried tool results
	withTools int // requests that declared tools
}

var itemRE = regexp.MustCompile(`(\d+) ([a-z]+)`)

func (m *shopModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model    string           `json:"model"`
		Messages []map[string]any `json:"messages"`
		Tools    []any            `json:"tools"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error":{"message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	reply := func(message map[string]any, finish string) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"id": "c", "object": "chat.completion", "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "message": message, "finish_reason": finish}},
			"usage":   map[string]any{"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25}})
	}
	if req.Model == "proposer" {
		text, _ := req.Messages[len(req.Messages)-1]["content"].(string)
		_, cur, _ := strings.Cut(text, "<current_prompt>\n")
		cur, _, _ = strings.Cut(cur, "\n</current_prompt>")
		reply(map[string]any{"role": "assistant", "content": "<prompt>" + cur + "\nDouble-check the arithmetic.</prompt>"}, "stop")
		return
	}
	var question string
	prices := map[string]float64{}
	results := 0
	for _, msg := range req.Messages {
		switch msg["role"] {
		case "user":
			question, _ = msg["content"].(string)
		case "tool":
			results++
			var res struct {
				Item  string  `json:"item"`
				Price float64 `json:"price"`
			}
			content, _ := msg["content"].(string)
			json.Unmarshal([]byte(content), &res)
			prices[res.Item] = res.Price
		}
	}
	m.mu.Lock()
	if len(req.Tools) > 0 {
		m.withTools++
	}
	if results > 0 {
		m.toolTurns++
	}
	m.mu.Unlock()
	matches := itemRE.FindAllStringSubmatch(question, -1)
	if results == 0 {
		var calls []any
		for i, mt := range matches {
			args, _ := json.Marshal(map[string]string{"item": mt[2]})
			calls = append(calls, map[string]any{"id": fmt.Sprintf("call_%d", i), "type": "function",
				"function": map[string]any{"name": "get_price", "arguments": string(args)}})
		}
		reply(map[string]any{"role": "assistant", "content": nil, "tool_calls": calls}, "tool_calls")
		return
	}
	total := 0.0
	for _, mt := range matches {
		n, _ := strconv.Atoi(mt[1])
		item := strings.TrimSuffix(mt[2], "s")
		if strings.HasSuffix(item, "ie") {
			item = strings.TrimSuffix(item, "ie") + "y"
		}
		total += float64(n) * prices[item]
	}
	reply(map[string]any{"role": "assistant", "content": fmt.Sprintf("%.2f", total)}, "stop")
}

// TestToolUsingBundleInTheSandbox runs this directory's bundle as an optimization job: the
// agent runs in the bubblewrap sandbox and its tool loop goes through the sandbox's gateway
// proxy to Switchyard's /v1/chat/completions (the real gateway, whose upstream is the
// scripted shopModel). Every row needs two tool calls and a tool-result turn; the baseline
// must score 1.0. Skips, saying why, where the process sandbox cannot run.
func TestToolUsingBundleInTheSandbox(t *testing.T) {
	work, err := os.MkdirTemp("", "switchyard-tools-bundle-*")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(work) })
	os.Chmod(work, 0o755)
	runner, err := process.New(process.Options{WorkDir: work, CacheDir: work, PackageIndex: "http://127.0.0.1:1/simple",
		Logger: slog.New(slog.DiscardHandler)})
	if errors.Is(err, sandbox.ErrUnavailable) {
		t.Skipf("skipping: the process sandbox is unavailable here (install the Debian package bubblewrap and allow user namespaces): %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}

	model := &shopModel{}
	upstream := httptest.NewServer(model)
	defer upstream.Close()
	reg := providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "shop", BaseURL: upstream.URL + "/v1", APIKey: "sk-shop"}))
	st := memstore.New()
	g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog(), Store: st})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Config{Store: st, APIKeys: []string{"job-key"}, Logger: slog.New(slog.DiscardHandler)}, server.Completions(g))
	if err != nil {
		t.Fatal(err)
	}
	gateway := httptest.NewServer(srv)
	defer gateway.Close()

	proposer, err := optimizer.NewLLMProposer(reg, "shop/proposer", nil)
	if err != nil {
		t.Fatal(err)
	}
	var zipped bytes.Buffer
	zw := zip.NewWriter(&zipped)
	for _, name := range []string{"agent.py", "eval.py", "dataset.json"} {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, _ := zw.Create(name)
		f.Write(b)
	}
	zw.Close()
	bundle := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/zip")
		w.Write(zipped.Bytes())
	}))
	defer bundle.Close()

	svc, err := optimizer.New(memstore.New(), runner, proposer,
		optimizer.WithFetcher(&fetch.Fetcher{AllowLocal: true}),
		optimizer.WithGateway(gateway.URL+"/v1", optimizer.StaticKey("job-key")),
		optimizer.WithPublicURL("https://sy.example"),
		optimizer.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := svc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		svc.Close(cctx)
	}()
	sub, err := svc.Submit(ctx, "alice", optimizer.Request{Optimizer: "agentopt", InputURL: bundle.URL + "/bundle.zip",
		TargetModels: []string{"shop/task"}, NIterations: 1, OverallTimeout: time.Minute,
		LLMCallTimeout: 10 * time.Second, SandboxTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var status *optimizer.JobStatus
	for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if status, err = svc.Status(ctx, "alice", sub.JobID); err != nil {
			t.Fatal(err)
		}
		if status.Status == optimizer.StatusCompleted || status.Status == optimizer.StatusFailed {
			break
		}
	}
	if status.Status != optimizer.StatusCompleted {
		t.Fatalf("job %+v", status)
	}
	res, err := svc.Results(ctx, "alice", sub.JobID)
	if err != nil {
		t.Fatal(err)
	}
	r := res.Results[0]
	if r.BaselineScore == nil || *r.BaselineScore != 1 || r.TestScore == nil || *r.TestScore != 1 {
		t.Fatalf("baseline %v test %v: the tool loop did not get every total right", r.BaselineScore, r.TestScore)
	}
	model.mu.Lock()
	defer model.mu.Unlock()
	if model.toolTurns < 12 || model.withTools < 24 {
		t.Fatalf("tool-result turns %d, requests with tools %d: the agent did not loop through the gateway", model.toolTurns, model.withTools)
	}
}
