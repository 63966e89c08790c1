package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/switchyard-ai/switchyard/completions"
)

// logprobsUpstream is a fake OpenAI upstream streaming "Hello world" with each token's log
// probability and, when asked, its likeliest alternatives; asked records each request's
// logprobs and top_logprobs.
type logprobsUpstream struct {
	mu    sync.Mutex
	asked []string
}

func (u *logprobsUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model       string `json:"model"`
		Logprobs    bool   `json:"logprobs"`
		TopLogprobs int    `json:"top_logprobs"`
	}
	json.NewDecoder(r.Body).Decode(&req)
	u.mu.Lock()
	u.asked = append(u.asked, fmt.Sprintf("logprobs=%v top=%d", req.Logprobs, req.TopLogprobs))
	u.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	tokens := []struct {
		text    string
		logprob float64
		alt     string
		altLP   float64
	}{{"Hello", -0.01005, "Hi", -4.60517}, {" world", -0.5, " there", -1.2}}
	for _, tk := range tokens {
		var bytes []int
		for _, c := range []byte(tk.text) {
			bytes = append(bytes, int(c))
		}
		entry := map[string]any{"token": tk.text, "logprob": tk.logprob, "bytes": bytes}
		if req.TopLogprobs > 0 {
			entry["top_logprobs"] = []any{map[string]any{"token": tk.text, "logprob": tk.logprob}, map[string]any{"token": tk.alt, "logprob": tk.altLP}}[:req.TopLogprobs]
		}
		choice := map[string]any{"index": 0, "delta": map[string]any{"content": tk.text}}
		if req.Logprobs {
			choice["logprobs"] = map[string]any{"content": []any{entry}}
		}
		b, _ := json.Marshal(map[string]any{"id": "chatcmpl-lp", "object": "chat.completion.chunk", "model": req.Model, "choices": []any{choice}})
		fmt.Fprintf(w, "data: %s\n\n", b)
	}
	b, _ := json.Marshal(map[string]any{"id": "chatcmpl-lp", "object": "chat.completion.chunk", "model": req.Model,
		"choices": []any{map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": "stop"}}})
	fmt.Fprintf(w, "data: %s\n\n", b)
	b, _ = json.Marshal(map[string]any{"id": "chatcmpl-lp", "object": "chat.completion.chunk", "model": req.Model,
		"choices": []any{}, "usage": map[string]int{"prompt_tokens": 7, "completion_tokens": 2, "total_tokens": 9}})
	fmt.Fprintf(w, "data: %s\n\ndata: [DONE]\n\n", b)
}

// TestChatLogprobs: `switchyard chat --logprobs` asks the native route for the answer's
// log probabilities and prints each token (quoted) with its log probability and the
// probability it stands for after the answer; --top-logprobs N (which implies --logprobs)
// asks for N alternatives and prints them with each token; --json carries them in the
// answer. With a model group (asked through /v1/chat/completions) the flags ask that route
// for them (logprobs, top_logprobs) and print them the same way, gathered from the
// answer's chunks. --top-logprobs outside 0-20 is a command line error (exit 2) naming the
// flag.
func TestChatLogprobs(t *testing.T) {
	up := &logprobsUpstream{}
	ts := httptest.NewServer(up)
	t.Cleanup(ts.Close)
	url := chatServerOver(t, ts.URL, map[string]completions.ModelGroup{"smart": {Models: []string{"openai/gpt-4o-mini"}}})
	base := []string{"chat", "--url", url, "--key", cliKey, "-m", "openai/gpt-4o-mini"}

	code, out, errOut := cli(t, append(base, "--top-logprobs", "2", "Say", "hello")...)
	if code != 0 {
		t.Fatalf("--top-logprobs 2: code %d, stderr %q", code, errOut)
	}
	for _, want := range []string{"Hello world\n", "logprobs (2 tokens):\n", `"Hello"`, "-0.0100", "99.00%",
		`top: "Hello" -0.0100 (99.00%), "Hi" -4.6052 (1.00%)`, `" world"`, "-0.5000", "60.65%", `" there" -1.2000 (30.12%)`} {
		if !strings.Contains(out, want) {
			t.Errorf("--top-logprobs 2: stdout %q lacks %q", out, want)
		}
	}

	code, out, errOut = cli(t, append(base, "--logprobs", "Say", "hello")...)
	if code != 0 {
		t.Fatalf("--logprobs: code %d, stderr %q", code, errOut)
	}
	if !strings.Contains(out, `"Hello"`) || !strings.Contains(out, "99.00%") || strings.Contains(out, "top:") {
		t.Errorf("--logprobs: stdout %q, want the tokens without alternatives", out)
	}

	code, out, errOut = cli(t, append(base, "--logprobs", "--json", "Say", "hello")...)
	if code != 0 {
		t.Fatalf("--logprobs --json: code %d, stderr %q", code, errOut)
	}
	var ans struct {
		Logprobs struct {
			Content []struct {
				Token   string  `json:"token"`
				Logprob float64 `json:"logprob"`
			} `json:"content"`
		} `json:"logprobs"`
	}
	if err := json.Unmarshal([]byte(out), &ans); err != nil || len(ans.Logprobs.Content) != 2 || ans.Logprobs.Content[1].Token != " world" {
		t.Errorf("--logprobs --json: %v, answer %q", err, out)
	}

	code, out, _ = cli(t, append(base, "Say", "hello")...)
	if code != 0 || strings.Contains(out, "logprobs") {
		t.Errorf("without --logprobs: code %d, stdout %q", code, out)
	}
	up.mu.Lock()
	asked := append([]string(nil), up.asked...)
	up.mu.Unlock()
	want := []string{"logprobs=true top=2", "logprobs=true top=0", "logprobs=true top=0", "logprobs=false top=0"}
	if strings.Join(asked, "; ") != strings.Join(want, "; ") {
		t.Errorf("upstream asked %q, want %q", asked, want)
	}

	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"--top-logprobs", "21"}, "--top-logprobs"},
		{[]string{"--top-logprobs", "-1"}, "--top-logprobs"},
		{[]string{"--top-logprobs", "many"}, "top-logprobs"},
	} {
		if code, _, errOut := cli(t, append(append(base, tc.args...), "hi")...); code != 2 || !strings.Contains(errOut, tc.flag) {
			t.Errorf("%v: code %d, stderr %q, want 2 naming %s", tc.args, code, errOut, tc.flag)
		}
	}
	group := []string{"chat", "--url", url, "--key", cliKey, "-m", "smart"}
	code, out, errOut = cli(t, append(group, "--top-logprobs", "2", "Say", "hello")...)
	if code != 0 {
		t.Fatalf("a model group with --top-logprobs 2: code %d, stderr %q", code, errOut)
	}
	for _, want := range []string{"Hello world\n", "logprobs (2 tokens):\n", `top: "Hello" -0.0100 (99.00%), "Hi" -4.6052 (1.00%)`, `" there" -1.2000 (30.12%)`} {
		if !strings.Contains(out, want) {
			t.Errorf("a model group with --top-logprobs 2: stdout %q lacks %q", out, want)
		}
	}
	code, out, errOut = cli(t, append(group, "--logprobs", "--json", "Say", "hello")...)
	ans.Logprobs.Content = nil
	if err := json.Unmarshal([]byte(out), &ans); code != 0 || err != nil || len(ans.Logprobs.Content) != 2 || ans.Logprobs.Content[1].Token != " world" || ans.Logprobs.Content[1].Logprob != -0.5 {
		t.Errorf("a model group with --logprobs --json: code %d, %v, stdout %q, stderr %q", code, err, out, errOut)
	}
	code, out, _ = cli(t, append(group, "Say", "hello")...)
	if code != 0 || strings.Contains(out, "logprobs") {
		t.Errorf("a model group without --logprobs: code %d, stdout %q", code, out)
	}
	want = append(want, "logprobs=true top=2", "logprobs=true top=0", "logprobs=false top=0")
	up.mu.Lock()
	defer up.mu.Unlock()
	if strings.Join(up.asked, "; ") != strings.Join(want, "; ") {
		t.Errorf("upstream asked %q, want %q (refused command lines must not reach it)", up.asked, want)
	}
}
