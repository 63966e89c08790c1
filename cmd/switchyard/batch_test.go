package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/server"
	"github.com/switchyard-ai/switchyard/store"
)

// TestServeResumesABatchAfterRestart: `switchyard serve` on bbolt is stopped (SIGTERM)
// while a batch runs, with a line at the upstream; a new serve on the same data directory
// resumes the batch, and every line reaches the upstream and is answered exactly once: the
// lines answered before the stop are not sent again, the one cut by the stop is.
func TestServeResumesABatchAfterRestart(t *testing.T) {
	var mu sync.Mutex
	answered := map[string]int{}
	var holding atomic.Bool
	holding.Store(true)
	held := make(chan struct{}, 10)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct {
				Content string `json:"content"`
			} `json:"messages"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		text := req.Messages[0].Content
		if strings.HasPrefix(text, "hold") && holding.Load() {
			held <- struct{}{}
			<-r.Context().Done() // cut by the shutdown
			return
		}
		mu.Lock()
		answered[text]++
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"c","object":"chat.completion","model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"re: %s"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}`, text)
	}))
	defer up.Close()
	t.Setenv("SWITCHYARD_API_KEYS", "k")
	t.Setenv("OPENAI_API_KEY", "sk-fake")
	t.Setenv("OPENAI_BASE_URL", up.URL+"/v1")
	// The held line never answers: the stop waits half of this for it, then cuts it.
	t.Setenv("SWITCHYARD_SHUTDOWN_TIMEOUT", "2s")
	data := t.TempDir()
	serve := func() (base string, stop func()) {
		ctx, cancel := context.WithCancel(context.Background())
		stderr := &syncBuffer{}
		done := make(chan int, 1)
		go func() {
			done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--data", data, "--batch-concurrency", "1", "--shutdown-timeout", "5s"}, &syncBuffer{}, stderr)
		}()
		re := regexp.MustCompile(`switchyard listening.*addr=(127\.0\.0\.1:\d+)`)
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			if m := re.FindStringSubmatch(stderr.String()); m != nil {
				return "http://" + m[1], func() { cancel(); <-done }
			}
			if time.Now().After(deadline) {
				t.Fatalf("serve did not start: %s", stderr.String())
			}
		}
	}
	texts := []string{"line-0", "line-1", "line-2", "hold-3", "line-4", "line-5"}
	var in bytes.Buffer
	for i, text := range texts {
		fmt.Fprintf(&in, `{"custom_id":"r%d","method":"POST","url":"/v1/chat/completions","body":{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":%q}]}}`+"\n", i, text)
	}

	base, stop := serve()
	var form bytes.Buffer
	mw := multipart.NewWriter(&form)
	mw.WriteField("purpose", "batch")
	fw, _ := mw.CreateFormFile("file", "in.jsonl")
	fw.Write(in.Bytes())
	mw.Close()
	var file struct{ ID string }
	if code := doJSON(t, "POST", base+"/v1/files", mw.FormDataContentType(), &form, &file); code != 200 {
		t.Fatalf("upload: %d", code)
	}
	var b struct {
		ID            string
		Status        string
		OutputFileID  *string                                `json:"output_file_id"`
		RequestCounts struct{ Total, Completed, Failed int } `json:"request_counts"`
	}
	body := strings.NewReader(`{"input_file_id":"` + file.ID + `","endpoint":"/v1/chat/completions","completion_window":"24h"}`)
	if code := doJSON(t, "POST", base+"/v1/batches", "application/json", body, &b); code != 200 {
		t.Fatalf("create: %d", code)
	}
	select {
	case <-held:
	case <-time.After(20 * time.Second):
		t.Fatal("the batch never reached its fourth line")
	}
	stop()

	holding.Store(false)
	base, stop = serve()
	defer stop()
	for deadline := time.Now().Add(20 * time.Second); b.Status != "completed"; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("after the restart the batch is still %s", b.Status)
		}
		doJSON(t, "GET", base+"/v1/batches/"+b.ID, "", nil, &b)
	}
	if b.RequestCounts.Completed != 6 || b.OutputFileID == nil {
		t.Fatalf("ended %+v", b)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, text := range texts {
		if answered[text] != 1 {
			t.Errorf("%s reached the upstream and was answered %d times, want once", text, answered[text])
		}
	}
	req, _ := http.NewRequest("GET", base+"/v1/files/"+*b.OutputFileID+"/content", nil)
	req.Header.Set("Authorization", "Bearer k")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if n := strings.Count(string(out), `"status_code":200`); n != 6 || !strings.Contains(string(out), "re: hold-3") {
		t.Fatalf("output file: %s", out)
	}
}

// doJSON sends a request with key k and decodes the JSON answer into v.
func doJSON(t *testing.T, method, url, ctype string, body io.Reader, v any) int {
	t.Helper()
	req, _ := http.NewRequest(method, url, body)
	req.Header.Set("Authorization", "Bearer k")
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, v); err != nil && resp.StatusCode == 200 {
		t.Fatalf("%s %s: %v: %s", method, url, err, b)
	}
	if resp.StatusCode != 200 {
		t.Logf("%s %s: %d %s", method, url, resp.StatusCode, b)
	}
	return resp.StatusCode
}

// TestBatchCommand: `switchyard batch run` uploads a file, runs it, shows the summary and
// writes the output and error files; list, show and download find it; cancel of an ended
// batch and a bad file are errors.
func TestBatchCommand(t *testing.T) {
	up := fakeOpenAIUpstream(t)
	url := cliServer(t, func(st *store.Store) []server.Option {
		env := map[string]string{"OPENAI_API_KEY": "sk-fake", "OPENAI_BASE_URL": up.URL + "/v1"}
		gw, err := completions.New(completions.Options{Providers: providers.FromEnv(func(k string) string { return env[k] }, providers.Options{}), Store: st})
		if err != nil {
			t.Fatal(err)
		}
		return []server.Option{server.Completions(gw), batchesOption(t, st)}
	})
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	os.WriteFile(in, []byte(`{"custom_id":"a","method":"POST","url":"/v1/chat/completions","body":{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}}
{"custom_id":"b","method":"POST","url":"/v1/chat/completions","body":{"model":"nosuch/x","messages":[{"role":"user","content":"hi"}]}}
`), 0o644)
	code, out, errOut := cli(t, "batch", "run", in, "--url", url, "--key", cliKey, "--poll", "10ms", "--out", dir)
	if code != 0 || !regexp.MustCompile(`status\s+completed`).MatchString(out) || !strings.Contains(out, "2 total, 1 completed, 1 failed") ||
		!strings.Contains(out, "_output.jsonl") || !strings.Contains(out, "_error.jsonl") {
		t.Fatalf("batch run: %d\n%s\n%s", code, out, errOut)
	}
	id := regexp.MustCompile(`batch_[0-9a-f]{24}`).FindString(out)
	b, err := os.ReadFile(filepath.Join(dir, id+"_output.jsonl"))
	if err != nil || !strings.Contains(string(b), `"custom_id":"a"`) || !strings.Contains(string(b), "Hello from the fake upstream") {
		t.Fatalf("output file: %s %v", b, err)
	}
	if code, out, _ := cli(t, "batch", "--url", url, "--key", cliKey); code != 0 || !strings.Contains(out, id) || !strings.Contains(out, "2/2") {
		t.Fatalf("batch list: %d %s", code, out)
	}
	if code, out, _ := cli(t, "batch", "show", id, "--url", url, "--key", cliKey, "--json"); code != 0 || !strings.Contains(out, `"status": "completed"`) {
		t.Fatalf("batch show: %d %s", code, out)
	}
	if code, _, errOut := cli(t, "batch", "cancel", id, "--url", url, "--key", cliKey); code != 1 || !strings.Contains(errOut, "409") {
		t.Fatalf("batch cancel of an ended batch: %d %s", code, errOut)
	}
	os.WriteFile(in, []byte("not json\n"), 0o644)
	if code, _, errOut := cli(t, "batch", "run", in, "--url", url, "--key", cliKey); code != 1 || !strings.Contains(errOut, "line 1") {
		t.Fatalf("batch run of a bad file: %d %s", code, errOut)
	}
}
