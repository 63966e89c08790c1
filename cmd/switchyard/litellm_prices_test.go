package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// modelInfo returns /model/info's model_info of the deployment of modelName.
func modelInfo(t *testing.T, base, key, modelName string) map[string]any {
	t.Helper()
	var out struct {
		Data []struct {
			ModelName string         `json:"model_name"`
			ModelInfo map[string]any `json:"model_info"`
		} `json:"data"`
	}
	b := getJSONAs(t, base, key, "/model/info", &out)
	for _, d := range out.Data {
		if d.ModelName == modelName {
			return d.ModelInfo
		}
	}
	t.Fatalf("/model/info lists no %s: %s", modelName, b)
	return nil
}

// serve --litellm-config prices a deployment at its own input_cost_per_token and
// output_cost_per_token, and its model_info.max_input_tokens (a self-hosted vLLM the
// catalogue does not know), over what --prices-file says of the same model, as /model/info
// shows; its router_settings.allowed_fails: 0 and
// cooldown_time open a failing model's circuit breaker on its first failure, so the next
// request goes to its fallback without calling it; an explicit --breaker-failures wins
// over allowed_fails.
// Counted at the scripted upstreams.
func TestServeLiteLLMConfigPricesAndBreaker(t *testing.T) {
	_, vURL := newScripted(t, "vllm", false)
	down, downURL := newScripted(t, "down", true)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	os.WriteFile(cfg, []byte(fmt.Sprintf(`
model_list:
  - model_name: llama
    litellm_params: {model: hosted_vllm/my-llama, api_base: %[1]q, input_cost_per_token: "0.000001", output_cost_per_token: 0.00001}
    model_info: {max_input_tokens: 8192}
  - model_name: flaky
    litellm_params: {model: hosted_vllm/flaky-model, api_base: %[2]q}
  - model_name: backup
    litellm_params: {model: hosted_vllm/backup-model, api_base: %[1]q}
router_settings: {num_retries: 0, allowed_fails: 0, cooldown_time: 600, fallbacks: [{flaky: [backup]}]}
general_settings: {master_key: sk-litellm-master-key-for-the-prices-test-1}
`, vURL, downURL)), 0o600)
	prices := filepath.Join(dir, "prices.json")
	os.WriteFile(prices, []byte(`{"hosted-vllm-llama/my-llama": {"litellm_provider": "openai", "mode": "chat", "input_cost_per_token": 0.5, "output_cost_per_token": 0.5}}`), 0o600)
	const master = "sk-litellm-master-key-for-the-prices-test-1"
	t.Setenv("SWITCHYARD_API_KEYS", "")
	t.Setenv("SWITCHYARD_LITELLM_CONFIG", cfg)

	for _, tc := range []struct {
		flags     []string
		downCalls int // of two requests to flaky
	}{
		{[]string{"--prices-file", prices}, 1},
		{[]string{"--breaker-failures", "5"}, 2},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		addr, _, stderr, done := startServeWith(t, ctx, filepath.Join(dir, "data"), tc.flags...)
		base := "http://" + addr
		mi := modelInfo(t, base, master, "llama")
		if mi["input_cost_per_token"] != 1e-6 || mi["output_cost_per_token"] != 1e-5 || mi["max_input_tokens"] != 8192.0 {
			t.Errorf("%v: llama's model_info %v; want its own price and max_input_tokens", tc.flags, mi)
		}
		before := down.count("flaky-model")
		for range 2 {
			if code, text := chatAs(t, base, master, "flaky"); code != 200 || text != "from vllm" {
				t.Errorf("%v: flaky (falling back to backup) answered %d %s", tc.flags, code, text)
			}
		}
		if got := down.count("flaky-model") - before; got != tc.downCalls {
			t.Errorf("%v: the failing upstream was called %d times for 2 requests, want %d", tc.flags, got, tc.downCalls)
		}
		if len(tc.flags) > 0 && tc.flags[0] == "--breaker-failures" && !strings.Contains(stderr.String(), "breaker-failures gives way to the flag") {
			t.Errorf("no log line saying the flag wins:\n%s", stderr.String())
		}
		cancel()
		<-done
	}
}

// getJSONAs GETs path of the server at base with key and decodes its answer into out,
// failing the test when it is not JSON of that shape; it returns the answer's body.
func getJSONAs(t *testing.T, base, key, path string, out any) []byte {
	t.Helper()
	req, _ := http.NewRequest("GET", base+path, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("%s: %d %v: %s", path, resp.StatusCode, err, b)
	}
	return b
}
