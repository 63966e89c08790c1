package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// scriptedOpenAI is a fake OpenAI-format upstream: it answers chat completions naming
// itself, or fails with 500 when failing, and counts the calls and the keys it saw.
type scriptedOpenAI struct {
	name    string
	failing bool
	mu      sync.Mutex
	calls   map[string]int // per model
	keys    map[string]int // per Authorization header
}

func (s *scriptedOpenAI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model string `json:"model"`
	}
	json.NewDecoder(r.Body).Decode(&req)
	s.mu.Lock()
	s.calls[req.Model]++
	s.keys[r.Header.Get("Authorization")]++
	s.mu.Unlock()
	if s.failing {
		http.Error(w, `{"error":{"message":"upstream down","type":"server_error"}}`, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"id":"c","object":"chat.completion","model":%q,"choices":[{"index":0,"message":{"role":"assistant","content":"from %s"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}`, req.Model, s.name)
}

func (s *scriptedOpenAI) count(model string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[model]
}

// keyCount is how many calls came with Authorization header h.
func (s *scriptedOpenAI) keyCount(h string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.keys[h]
}

// total is how many calls came, of any model.
func (s *scriptedOpenAI) total() (n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.calls {
		n += c
	}
	return n
}

func newScripted(t *testing.T, name string, failing bool) (*scriptedOpenAI, string) {
	s := &scriptedOpenAI{name: name, failing: failing, calls: map[string]int{}, keys: map[string]int{}}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return s, srv.URL + "/v1"
}

// chatAs posts a one-message chat completion for model with key and returns the status
// and the answer's text.
func chatAs(t *testing.T, base, key, model string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", base+"/v1/chat/completions", strings.NewReader(fmt.Sprintf(`{"model":%q,"messages":[{"role":"user","content":"hi"}]}`, model)))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	json.Unmarshal(b, &out)
	if len(out.Choices) == 0 {
		return resp.StatusCode, string(b)
	}
	return resp.StatusCode, out.Choices[0].Message.Content
}

// serve --litellm-config (here through SWITCHYARD_LITELLM_CONFIG) serves a LiteLLM
// config through the real wiring: two weighted deployments of one model_name on two
// api_bases get requests in proportion, a failing group falls back to the group its
// fallbacks name, the master key (from os.environ/) authenticates, and the keys not
// supported are named in a start-up warning.
func TestServeLiteLLMConfig(t *testing.T) {
	a, aURL := newScripted(t, "a", false)
	b, bURL := newScripted(t, "b", false)
	down, downURL := newScripted(t, "down", true)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	os.WriteFile(cfg, []byte(fmt.Sprintf(`
model_list:
  - model_name: gpt-4o
    litellm_params: {model: openai/gpt-4o, api_base: %[1]q, api_key: os.environ/SY_TEST_KEY_A, weight: 3}
  - model_name: gpt-4o
    litellm_params: {model: openai/gpt-4o, api_base: %[2]q, api_key: os.environ/SY_TEST_KEY_B, weight: 1}
  - model_name: flaky
    litellm_params: {model: openai/flaky-model, api_base: %[3]q, api_key: os.environ/SY_TEST_KEY_B}
  - model_name: backup
    litellm_params: {model: openai/backup-model, api_base: %[2]q, api_key: os.environ/SY_TEST_KEY_B}
router_settings:
  routing_strategy: simple-shuffle
  num_retries: 0
  fallbacks: [{"flaky": ["backup"]}]
litellm_settings:
  callbacks: ["langfuse"]
general_settings:
  master_key: os.environ/SY_TEST_MASTER
  database_url: postgresql://u:p@db/litellm
`, aURL, bURL, downURL)), 0o600)
	const master = "sk-litellm-master-key-for-the-test-0123456789"
	t.Setenv("SY_TEST_KEY_A", "key-a")
	t.Setenv("SY_TEST_KEY_B", "key-b")
	t.Setenv("SY_TEST_MASTER", master)
	t.Setenv("SWITCHYARD_API_KEYS", "")
	t.Setenv("SWITCHYARD_LITELLM_CONFIG", cfg)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, stdout, stderr, done := startServeWith(t, ctx, filepath.Join(dir, "data"), "--breaker-failures", "-1")
	base := "http://" + addr
	if log := stderr.String(); !strings.Contains(log, "litellm_settings.callbacks") || !strings.Contains(log, "general_settings.database_url") {
		t.Errorf("no warning naming the keys ignored:\n%s", log)
	}
	if strings.Contains(stdout.String(), "sy-") {
		t.Errorf("a key was generated although the master key is one: %s", stdout.String())
	}

	// The master key authenticates; another key does not.
	if code, _ := chatAs(t, base, "sk-wrong-key", "gpt-4o"); code != http.StatusUnauthorized {
		t.Fatalf("a wrong key: %d, want 401", code)
	}
	const n = 400
	for range n {
		if code, text := chatAs(t, base, master, "gpt-4o"); code != 200 || (text != "from a" && text != "from b") {
			t.Fatalf("gpt-4o: %d %s", code, text)
		}
	}
	na, nb := a.count("gpt-4o"), b.count("gpt-4o")
	if na+nb != n {
		t.Fatalf("upstream calls a=%d b=%d, want %d in all (no retries, nothing failing)", na, nb, n)
	}
	// weight 3 to 1: a's share is 0.75 (±0.1 is more than 4 standard deviations).
	if share := float64(na) / n; share < 0.65 || share > 0.85 {
		t.Errorf("a got %d of %d requests (%.2f), want about 0.75 by weight", na, n, share)
	}
	if a.keys["Bearer key-a"] != na || b.keys["Bearer key-b"] != nb {
		t.Errorf("keys seen: a %v, b %v: each deployment sends its own os.environ/ key", a.keys, b.keys)
	}

	// A failing group falls back to the group its fallbacks name.
	code, text := chatAs(t, base, master, "flaky")
	if code != 200 || text != "from b" || down.count("flaky-model") != 1 || b.count("backup-model") != 1 {
		t.Errorf("flaky: %d %q; down saw %d, backup %d: want flaky-model tried once, then backup-model", code, text, down.count("flaky-model"), b.count("backup-model"))
	}
	cancel()
	<-done
}

// --litellm-config refuses --providers-config and --model-groups beside it, and a
// malformed config, naming what is at fault, before anything starts.
func TestServeLiteLLMConfigRefused(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	os.WriteFile(good, []byte("model_list: [{model_name: m, litellm_params: {model: openai/gpt-4o}}]\n"), 0o600)
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("model_list:\n  - {model_name: m, litellm_params: {model: openai/gpt-4o}}\n  - {model_name: m, litellm_params: {model: nope/gpt-4o}}\n"), 0o600)
	groups := filepath.Join(dir, "groups.json")
	os.WriteFile(groups, []byte(`{"g": {"models": ["openai/gpt-4o"]}}`), 0o600)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--litellm-config", good, "--providers-config", groups}, "without --providers-config"},
		{[]string{"--litellm-config", good, "--model-groups", groups}, "without --model-groups"},
		{[]string{"--litellm-config", bad}, `model_list[1].litellm_params.model: unknown provider prefix "nope"`},
	} {
		var out bytes.Buffer
		code := run(context.Background(), append([]string{"serve", "--addr", "127.0.0.1:0", "--data", filepath.Join(dir, "d")}, tc.args...), io.Discard, &out)
		if code == 0 || !strings.Contains(out.String(), tc.want) {
			t.Errorf("%v: exit %d, %s; want an error containing %q", tc.args, code, out.String(), tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "d")); err == nil {
		t.Error("a refused start created the data directory")
	}
}

// litellm-config check prints what serve would configure, keys left out.
func TestLiteLLMConfigCheck(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	os.WriteFile(cfg, []byte(`
model_list:
  - {model_name: gpt-4o, litellm_params: {model: azure/prod-4o, api_base: "https://eu.openai.azure.com", api_key: sk-literal-secret, api_version: "2024-10-21"}}
  - {model_name: gpt-4o, litellm_params: {model: openai/gpt-4o, input_cost_per_token: 0.000002}}
router_settings: {routing_strategy: least-busy, allowed_fails: 2, cooldown_time: 45}
litellm_settings: {success_callback: ["langfuse"]}
`), 0o600)
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"litellm-config", "check", cfg}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var got struct {
		Providers []struct {
			Name    string `json:"name"`
			BaseURL string `json:"base_url"`
		} `json:"providers"`
		ModelGroups map[string]struct {
			Models  []string `json:"models"`
			Shuffle bool     `json:"shuffle"`
		} `json:"model_groups"`
		Warnings        []string                      `json:"warnings"`
		BreakerFailures int                           `json:"breaker_failures"`
		BreakerCooldown string                        `json:"breaker_cooldown"`
		Prices          map[string]map[string]float64 `json:"prices"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if strings.Contains(out.String(), "sk-literal-secret") {
		t.Errorf("the key is printed: %s", out.String())
	}
	if g := got.ModelGroups["gpt-4o"]; !g.Shuffle || len(g.Models) != 2 || g.Models[0] != "azure-gpt-4o/prod-4o" {
		t.Errorf("groups %+v", got.ModelGroups)
	}
	if got.BreakerFailures != 3 || got.BreakerCooldown != "45s" || got.Prices["openai/gpt-4o"]["input_cost_per_token"] != 2e-6 {
		t.Errorf("breaker %d %q, prices %v: want allowed_fails+1, cooldown_time and the deployment's price", got.BreakerFailures, got.BreakerCooldown, got.Prices)
	}
	w := strings.Join(got.Warnings, "\n")
	if !strings.Contains(w, "least-busy is not supported") || !strings.Contains(w, "litellm_settings.success_callback") {
		t.Errorf("warnings %q", got.Warnings)
	}
	errOut.Reset()
	if code := run(context.Background(), []string{"litellm-config", "check", filepath.Join(dir, "missing.yaml")}, &out, &errOut); code == 0 {
		t.Errorf("a missing file: exit 0")
	}
}
