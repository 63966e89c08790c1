package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// usageUpstream is a scripted OpenAI-format (and Azure OpenAI) upstream answering every
// chat call with usage of 1000 prompt and 500 completion tokens; it records the paths called.
type usageUpstream struct {
	mu     sync.Mutex
	paths  []string
	bodies []map[string]any
}

func (u *usageUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model string `json:"model"`
	}
	b, _ := io.ReadAll(r.Body)
	json.Unmarshal(b, &req)
	var body map[string]any
	json.Unmarshal(b, &body)
	u.mu.Lock()
	u.paths = append(u.paths, r.URL.Path)
	u.bodies = append(u.bodies, body)
	u.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"id":"c","object":"chat.completion","model":%q,"choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1000,"completion_tokens":500,"total_tokens":1500}}`, req.Model)
}

// spendOf returns the spend /spend/logs records for the requests to modelGroup.
func spendOf(t *testing.T, base, key, modelGroup string) (float64, int) {
	t.Helper()
	var rows []map[string]any
	getJSONAs(t, base, key, "/spend/logs", &rows)
	var spend float64
	n := 0
	for _, r := range rows {
		if r["model_group"] == modelGroup || r["model"] == modelGroup {
			s, _ := r["spend"].(float64)
			spend += s
			n++
		}
	}
	return spend, n
}

// A request's recorded spend is the deployment's own price end to end: a self-hosted
// vLLM's and an Azure deployment's (on an api_base of its own, with and without a
// base_model) input_cost_per_token and output_cost_per_token price an answer of 1000
// prompt and 500 completion tokens, as /spend/logs records it.
func TestReview26hLiteLLMOwnPriceSpend(t *testing.T) {
	up := &usageUpstream{}
	srv := httptest.NewServer(up)
	t.Cleanup(srv.Close)
	const master = "sk-litellm-master-key-for-the-spend-test-1"
	base := serveLiteLLMConfig(t, fmt.Sprintf(`
model_list:
  - model_name: llama
    litellm_params: {model: hosted_vllm/my-llama, api_base: %[1]q, input_cost_per_token: 0.000001, output_cost_per_token: 0.00001}
  - model_name: az
    litellm_params: {model: azure/prod-4o, api_base: %[2]q, api_key: sk-azure-literal, api_version: "2024-10-21", input_cost_per_token: 0.000002, output_cost_per_token: 0.000004}
  - model_name: az-base
    litellm_params: {model: azure/prod-o3, api_base: %[2]q, api_key: sk-azure-literal-2, api_version: "2024-10-21", input_cost_per_token: 0.000003, output_cost_per_token: 0.000006}
    model_info: {base_model: azure/o3-mini}
router_settings: {num_retries: 0}
general_settings: {master_key: sk-litellm-master-key-for-the-spend-test-1}
`, srv.URL+"/v1", srv.URL))
	for _, tc := range []struct {
		group   string
		in, out float64
	}{
		{"llama", 1e-6, 1e-5},
		{"az", 2e-6, 4e-6},
		{"az-base", 3e-6, 6e-6},
	} {
		want := 1000*tc.in + 500*tc.out
		if code, text := chatAs(t, base, master, tc.group); code != 200 || text != "ok" {
			t.Fatalf("%s answered %d %s (upstream paths %v)", tc.group, code, text, up.paths)
		}
		spend, n := spendOf(t, base, master, tc.group)
		if n != 1 || math.Abs(spend-want) > 1e-12 {
			t.Errorf("%s: /spend/logs records %d requests costing $%g; want 1 at $%g (its own price)", tc.group, n, spend, want)
		}
		mi := modelInfo(t, base, master, tc.group)
		if mi["input_cost_per_token"] != tc.in || mi["output_cost_per_token"] != tc.out {
			t.Errorf("%s: /model/info's model_info %v; want its own price", tc.group, mi)
		}
	}
}

// serveLiteLLMConfig starts serve (--allow-local-urls, no API keys) on the LiteLLM
// config yaml, stopped when the test ends, and returns its base URL.
func serveLiteLLMConfig(t *testing.T, yaml string) string {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SWITCHYARD_API_KEYS", "")
	t.Setenv("SWITCHYARD_LITELLM_CONFIG", cfg)
	ctx, cancel := context.WithCancel(context.Background())
	addr, _, _, done := startServeWith(t, ctx, filepath.Join(dir, "data"), "--allow-local-urls")
	t.Cleanup(func() { cancel(); <-done })
	return "http://" + addr
}
