// Command optimizer measures the wall time of optimization iterations on a 30-row dataset.
//
// Everything runs in one process on loopback TCP: a scripted OpenAI-format upstream (the
// task model answers a row correctly only when the system prompt holds that row's rule; the
// proposer alternates a useless line and the rule of the first failing row), the real
// Switchyard server (server.Completions + server.Optimizer over an in-memory store), the
// bubblewrap process sandbox running examples/agent-bundle/agent.py, and the bundle served
// over local HTTP. Each iteration is one proposer call plus one sandboxed benchmark of the
// variant on the 21 train rows (one gateway call per row), split into -concurrency chunks.
//
//	go run ./bench/optimizer -runs 3 -iterations 10
package main

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/fetch"
	"github.com/switchyard-ai/switchyard/optimizer"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/sandbox/process"
	"github.com/switchyard-ai/switchyard/server"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

const apiKey = "bench-key"

var (
	runs        = flag.Int("runs", 3, "jobs to run (each a fresh server)")
	iterations  = flag.Int("iterations", 10, "n_iterations per job")
	rows        = flag.Int("rows", 30, "dataset rows (70% train)")
	concurrency = flag.Int("concurrency", optimizer.DefaultSandboxConcurrency, "sandbox concurrency budget (chunks per benchmark)")
	bundleDir   = flag.String("bundle", "examples/agent-bundle", "directory with agent.py and eval.py")
)

func solve(input string) string {
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

// upstream is the scripted LLM.
type upstream struct {
	mu    sync.Mutex
	calls int
}

func (u *upstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model    string
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
	var answer string
	if req.Model == "proposer" {
		u.mu.Lock()
		u.calls++
		odd := u.calls%2 == 1
		u.mu.Unlock()
		_, cur, _ := strings.Cut(user, "<current_prompt>\n")
		cur, _, _ = strings.Cut(cur, "\n</current_prompt>")
		_, in, ok := strings.Cut(user, "<input>")
		if odd || !ok {
			answer = "<prompt>" + cur + "\nBe careful.</prompt>"
		} else {
			cat, _, _ := strings.Cut(in, ": ")
			answer = "<prompt>" + cur + "\nRULE " + cat + "</prompt>"
		}
	} else {
		cat, text, _ := strings.Cut(user, ": ")
		answer = text
		if strings.Contains(system, "RULE "+cat) {
			answer = solve(user)
		}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"id": "x", "object": "chat.completion", "model": req.Model,
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": answer}}},
		"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
	})
}

func bundle() []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, n := range []string{"agent.py", "eval.py"} {
		b, err := os.ReadFile(filepath.Join(*bundleDir, n))
		if err != nil {
			log.Fatal(err)
		}
		w, _ := zw.Create(n)
		w.Write(b)
	}
	words := []string{"apple pie", "blue sky day", "cold tea", "dark night owl", "eager fox", "fresh green leaf", "gold ring", "happy little cloud"}
	var ds []map[string]string
	for i := 0; len(ds) < *rows; i++ {
		c := []string{"first", "reverse", "count", "double"}[i%4]
		in := fmt.Sprintf("%s: %s %d", c, words[(i/4)%len(words)], i)
		ds = append(ds, map[string]string{"input": in, "answer": solve(in)})
	}
	b, _ := json.Marshal(ds)
	w, _ := zw.Create("dataset.json")
	w.Write(b)
	zw.Close()
	return buf.Bytes()
}

func serve(h http.Handler) (string, func()) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	return "http://" + ln.Addr().String(), func() { srv.Close() }
}

// oneJob runs a job on a fresh server and returns its result.
func oneJob(runner *process.Runner, bundleURL string) (*optimizer.ModelResult, time.Duration) {
	quiet := slog.New(slog.DiscardHandler)
	upURL, stopUp := serve(&upstream{})
	defer stopUp()
	reg := providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "scripted", BaseURL: upURL + "/v1", APIKey: "sk"}))
	st := memstore.New()
	g, err := completions.New(completions.Options{Providers: reg, Store: st, Logger: quiet})
	if err != nil {
		log.Fatal(err)
	}
	prop, err := optimizer.NewLLMProposer(reg, "scripted/proposer", nil)
	if err != nil {
		log.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	svc, err := optimizer.New(st, runner, prop, optimizer.WithFetcher(&fetch.Fetcher{AllowLocal: true}),
		optimizer.WithGateway(base+"/v1", nil), optimizer.WithPublicURL(base),
		optimizer.WithSandboxConcurrency(*concurrency), optimizer.WithLogger(quiet))
	if err != nil {
		log.Fatal(err)
	}
	s, err := server.New(server.Config{Store: st, APIKeys: []string{apiKey}, Logger: quiet}, server.Completions(g), server.Optimizer(svc))
	if err != nil {
		log.Fatal(err)
	}
	hs := &http.Server{Handler: s}
	go hs.Serve(ln)
	defer hs.Close()
	ctx := context.Background()
	if err := svc.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer s.Close(ctx)
	start := time.Now()
	sub, err := svc.Submit(ctx, "bench", optimizer.Request{InputURL: bundleURL, TargetModels: []string{"scripted/task"}, NIterations: *iterations})
	if err != nil {
		log.Fatal(err)
	}
	for {
		stt, err := svc.Status(ctx, "bench", sub.JobID)
		if err != nil {
			log.Fatal(err)
		}
		if stt.Status.Terminal() {
			if stt.Status != optimizer.StatusCompleted {
				log.Fatalf("job %s: %s", stt.Status, stt.ErrorMessage)
			}
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	total := time.Since(start)
	res, err := svc.Results(ctx, "bench", sub.JobID)
	if err != nil {
		log.Fatal(err)
	}
	return &res.Results[0], total
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func main() {
	flag.Parse()
	log.SetFlags(0)
	work, err := os.MkdirTemp("", "switchyard-bench-optimizer-*")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(work)
	os.Chmod(work, 0o755)
	runner, err := process.New(process.Options{WorkDir: work, CacheDir: work, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		log.Fatal(err)
	}
	zipData := bundle()
	bundleURL, stop := serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.Copy(w, bytes.NewReader(zipData)) }))
	defer stop()
	var perIter, baselines, kept, discarded, totals []float64
	for r := 0; r < *runs; r++ {
		res, total := oneJob(runner, bundleURL)
		var its []float64
		var k, d []float64
		for _, h := range res.History[1:] {
			its = append(its, h.DurationMS)
			if h.Kept {
				k = append(k, h.DurationMS)
			} else {
				d = append(d, h.DurationMS)
			}
		}
		fmt.Printf("run %d: baseline %.0f ms, iteration median %.0f ms (kept %.0f, discarded %.0f), %d kept of %d, train %.2f → %.2f, test %.2f → %.2f, job %.1f s\n",
			r+1, res.History[0].DurationMS, median(its), median(k), median(d), res.IterationsKept, res.IterationsRun,
			*res.BaselineScore, *res.TrainScore, *res.OriginalTestScore, *res.TestScore, total.Seconds())
		perIter = append(perIter, median(its))
		baselines = append(baselines, res.History[0].DurationMS)
		kept = append(kept, median(k))
		discarded = append(discarded, median(d))
		totals = append(totals, total.Seconds())
	}
	fmt.Printf("\nmedian of %d runs: per iteration %.0f ms (kept %.0f, discarded %.0f), baseline %.0f ms, whole job (%d iterations + test split) %.1f s\n",
		*runs, median(perIter), median(kept), median(discarded), median(baselines), *iterations, median(totals))
}
