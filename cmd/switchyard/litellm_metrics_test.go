package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeLiteLLMPrometheusCallback: a --litellm-config whose litellm_settings.callbacks
// names prometheus adds LiteLLM's metrics to /metrics, labelled with the deployment's
// model_info.id and the model group asked for, a failed request under its model group's
// name with the status it was answered; --litellm-metrics=false given beside it wins and
// leaves them out.
func TestServeLiteLLMPrometheusCallback(t *testing.T) {
	_, vURL := newScripted(t, "vllm", false)
	_, downURL := newScripted(t, "down", true)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	const master = "sk-litellm-master-key-for-the-metrics-test-1"
	os.WriteFile(cfg, []byte(fmt.Sprintf(`
model_list:
  - model_name: llama
    litellm_params: {model: hosted_vllm/my-llama, api_base: %q, input_cost_per_token: "0.000001", output_cost_per_token: 0.00001}
    model_info: {id: llama-1}
  - model_name: broken
    litellm_params: {model: hosted_vllm/broken-model, api_base: %q}
router_settings: {num_retries: 0}
litellm_settings:
  callbacks: ["prometheus"]
general_settings: {master_key: %s}
`, vURL, downURL, master)), 0o600)
	t.Setenv("SWITCHYARD_API_KEYS", "")
	t.Setenv("SWITCHYARD_LITELLM_CONFIG", cfg)
	for _, tc := range []struct {
		flags []string
		on    bool
	}{{nil, true}, {[]string{"--litellm-metrics=false"}, false}} {
		ctx, cancel := context.WithCancel(context.Background())
		addr, _, stderr, done := startServeWith(t, ctx, filepath.Join(dir, "data"), tc.flags...)
		base := "http://" + addr
		failed, _ := chatAs(t, base, master, "broken") // first: the group has not answered yet
		if failed < 400 {
			t.Fatalf("%v: the broken group answered %d", tc.flags, failed)
		}
		if code, text := chatAs(t, base, master, "llama"); code != 200 {
			t.Fatalf("%v: chat %d %s", tc.flags, code, text)
		}
		_, text := scrapeMetrics(t, base+"/metrics", "")
		var total, failure string
		for _, line := range strings.Split(text, "\n") {
			if strings.HasPrefix(line, "litellm_proxy_total_requests_metric_total{") && strings.Contains(line, `status_code="200"`) {
				total = line
			}
			if strings.HasPrefix(line, "litellm_proxy_failed_requests_metric_total{") {
				failure = line
			}
		}
		switch {
		case !tc.on && strings.Contains(text, "litellm_"):
			t.Errorf("%v: LiteLLM's metrics served", tc.flags)
		case tc.on && (!strings.Contains(total, `model_id="llama-1"`) || !strings.Contains(total, `requested_model="llama"`) ||
			!strings.Contains(total, `status_code="200"`) || !strings.HasSuffix(total, " 1")):
			t.Errorf("%v: total requests %q in\n%s", tc.flags, total, text)
		case tc.on && (!strings.Contains(failure, `requested_model="broken"`) || !strings.Contains(failure, fmt.Sprintf(`exception_status="%d"`, failed)) ||
			!strings.Contains(failure, `exception_class="Hosted_vllm.`) || !strings.HasSuffix(failure, " 1")):
			t.Errorf("%v: failed requests %q (answered %d) in\n%s", tc.flags, failure, failed, text)
		case tc.on && (!strings.Contains(text, `api_provider="hosted_vllm"`) || !strings.Contains(text, `litellm_deployment_success_responses_total{api_base="`+vURL+`",api_key_alias="",api_provider="hosted_vllm",client_ip="",hashed_api_key="",litellm_model_name="hosted_vllm/my-llama",model_id="llama-1",requested_model="llama"`)):
			t.Errorf("%v: no api_provider hosted_vllm in\n%s", tc.flags, text)
		case tc.on && !strings.Contains(text, `litellm_deployment_state{api_base=`):
			t.Errorf("%v: no deployment state in\n%s", tc.flags, text)
		}
		if strings.Contains(stderr.String(), "logging callbacks are not run") {
			t.Errorf("%v: the prometheus callback is warned about: %s", tc.flags, stderr.String())
		}
		cancel()
		<-done
	}
}
