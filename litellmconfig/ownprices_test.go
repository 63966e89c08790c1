package litellmconfig

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// ignoredWarning returns the "not supported, ignored" warning of cfg ("" when none).
func ignoredWarning(cfg *Config) string {
	for _, w := range cfg.Warnings {
		if strings.HasPrefix(w, "not supported, ignored: ") {
			return w
		}
	}
	return ""
}

// A deployment's own prices (litellm_params or model_info; numbers, text, os.environ/)
// and token limits become its member's OwnPrice, keyed by provider/model: litellm_params
// wins over model_info, max_tokens is the output limit when max_output_tokens is not set,
// model_info.mode embedding puts it among embedding models, an Azure base_model only fills
// what the deployment leaves; none of these keys is named ignored any more.
func TestOwnPrices(t *testing.T) {
	cfg, err := Parse([]byte(`
model_list:
  - model_name: llama
    litellm_params:
      model: hosted_vllm/meta-llama/Llama-3.1-8B-Instruct
      api_base: http://vllm:8000/v1
      input_cost_per_token: "0.0000002"
      output_cost_per_token: os.environ/LLAMA_OUT
      cache_read_input_token_cost: 0.00000005
    model_info:
      input_cost_per_token: 0.5
      cache_creation_input_token_cost: 0.0000003
      max_input_tokens: "8192"
      max_tokens: 2048
      mode: chat
  - model_name: embed
    litellm_params: {model: hosted_vllm/bge-small, api_base: http://vllm:8000/v1}
    model_info: {mode: embedding, input_cost_per_token: 0.00000001, max_input_tokens: 512, max_output_tokens: 1}
  - model_name: gpt-4o
    litellm_params: {model: azure/prod-4o, api_base: https://eu.openai.azure.com, api_key: os.environ/AZ, api_version: "2024-10-21", output_cost_per_token: 0.00002}
    model_info: {base_model: azure/gpt-4o-2024-08-06}
  - model_name: plain
    litellm_params: {model: openai/gpt-4o-mini}
`), env(map[string]string{"LLAMA_OUT": "0.0000004", "AZ": "k"}))
	if err != nil {
		t.Fatal(err)
	}
	f := func(v float64) *float64 { return &v }
	eq := func(a, b *float64) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b }
	llama := cfg.Prices["hosted-vllm-llama/meta-llama/Llama-3.1-8B-Instruct"]
	if !eq(llama.InputPerToken, f(2e-7)) || !eq(llama.OutputPerToken, f(4e-7)) || !eq(llama.CacheReadPerToken, f(5e-8)) ||
		!eq(llama.CacheCreationPerToken, f(3e-7)) || llama.MaxInputTokens != 8192 || llama.MaxOutputTokens != 2048 || llama.Embedding {
		t.Errorf("llama's price %+v (prices %v)", llama, cfg.Prices)
	}
	emb := cfg.Prices["hosted-vllm-llama/bge-small"] // one vLLM server, one provider entry
	if !emb.Embedding || !eq(emb.InputPerToken, f(1e-8)) || emb.MaxInputTokens != 512 || emb.MaxOutputTokens != 1 {
		t.Errorf("embedding price %+v", emb)
	}
	az := cfg.Prices["azure-gpt-4o/prod-4o"]
	if !eq(az.OutputPerToken, f(2e-5)) || az.InputPerToken != nil || az.Like != "azure/gpt-4o-2024-08-06" {
		t.Errorf("azure price %+v", az)
	}
	if pc := provider(t, cfg, "azure-gpt-4o"); pc.BaseModels["prod-4o"] != "gpt-4o-2024-08-06" {
		t.Errorf("base_models %v: the deployment's base model (its family) stays, its own price is priced by its own name", pc.BaseModels)
	}
	if _, ok := cfg.Prices["openai/gpt-4o-mini"]; ok || len(cfg.Prices) != 3 {
		t.Errorf("prices %v: only the three deployments with prices", cfg.Prices)
	}
	if w := ignoredWarning(cfg); w != "" {
		t.Errorf("keys named ignored: %s", w)
	}
	// Through the catalogue the gateway is built with.
	cat := providers.DefaultCatalog().WithOwnPrices(cfg.Prices)
	if c := cat.Cost("hosted-vllm-llama/meta-llama/Llama-3.1-8B-Instruct", providers.Usage{PromptTokens: 100, CompletionTokens: 10}); !c.Known || math.Abs(c.TotalUSD-(100*2e-7+10*4e-7)) > 1e-15 {
		t.Errorf("llama's cost %+v", c)
	}
}

// Malformed prices and limits fail naming their path; prices of a mode other than chat
// and embedding, and of a wildcard, are named ignored; a rate that looks like a price per
// million tokens is warned about.
func TestOwnPricesBad(t *testing.T) {
	for _, tc := range []struct{ yaml, path string }{
		{`{model_name: m, litellm_params: {model: openai/x, input_cost_per_token: cheap}}`, "model_list[0].litellm_params.input_cost_per_token"},
		{`{model_name: m, litellm_params: {model: openai/x, output_cost_per_token: -1}}`, "model_list[0].litellm_params.output_cost_per_token"},
		{`{model_name: m, litellm_params: {model: openai/x, output_cost_per_token: os.environ/NOPE}}`, "model_list[0].litellm_params.output_cost_per_token"},
		{`{model_name: m, litellm_params: {model: openai/x}, model_info: {cache_read_input_token_cost: [1]}}`, "model_list[0].model_info.cache_read_input_token_cost"},
		{`{model_name: m, litellm_params: {model: openai/x}, model_info: {max_input_tokens: 0.5}}`, "model_list[0].model_info.max_input_tokens"},
		{`{model_name: m, litellm_params: {model: openai/x}, model_info: {max_tokens: "many"}}`, "model_list[0].model_info.max_tokens"},
		{`{model_name: m, litellm_params: {model: openai/x}, model_info: {mode: 3}}`, "model_list[0].model_info.mode"},
	} {
		_, err := Parse([]byte("model_list:\n  - "+tc.yaml+"\n"), env(nil))
		var e *Error
		if !errors.As(err, &e) || e.Path != tc.path || !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want an error at %s", tc.yaml, err, tc.path)
		}
	}
	cfg, err := Parse([]byte(`
model_list:
  - {model_name: img, litellm_params: {model: openai/dall-e-3}, model_info: {mode: image_generation, input_cost_per_token: 0.00001}}
  - {model_name: "*", litellm_params: {model: "openai/*", input_cost_per_token: 0.00001}}
  - {model_name: m, litellm_params: {model: openai/x, input_cost_per_token: 3, output_cost_per_token: 0.00001}}
`), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	w := ignoredWarning(cfg)
	if !strings.Contains(w, "model_list[0] prices and token limits (model_info.mode image_generation") || !strings.Contains(w, "model_list[1] prices and token limits (a wildcard's)") {
		t.Errorf("ignored warning %q", w)
	}
	if _, ok := cfg.Prices["openai/dall-e-3"]; ok {
		t.Errorf("an image model's price was taken: %v", cfg.Prices)
	}
	if all := strings.Join(cfg.Warnings, "\n"); !strings.Contains(all, "model_list[2].litellm_params.input_cost_per_token: 3 USD per token") {
		t.Errorf("no warning of a price per million: %q", cfg.Warnings)
	}
}

// Two deployments of one upstream with different prices: the first one's holds, with a
// warning naming both.
func TestOwnPricesOneUpstream(t *testing.T) {
	cfg, err := Parse([]byte(`
model_list:
  - {model_name: a, litellm_params: {model: openai/gpt-4o, input_cost_per_token: 0.000001}}
  - {model_name: b, litellm_params: {model: openai/gpt-4o, input_cost_per_token: 0.000002}}
`), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if p := cfg.Prices["openai/gpt-4o"]; p.InputPerToken == nil || *p.InputPerToken != 1e-6 {
		t.Errorf("price %+v, want the first deployment's", p)
	}
	if all := strings.Join(cfg.Warnings, "\n"); !strings.Contains(all, "model_list[1] sets another price than model_list[0] for openai/gpt-4o") {
		t.Errorf("warnings %q", cfg.Warnings)
	}
}

// router_settings.allowed_fails (+1: LiteLLM cools down on the failure after those
// allowed), cooldown_time (seconds) and disable_cooldowns set the circuit breakers, with a
// warning saying how the counts differ; litellm_settings.drop_params is taken with a
// warning saying what Switchyard does; none of them is named ignored; bad values fail
// naming their path.
func TestBreakerAndDropParams(t *testing.T) {
	const models = "model_list: [{model_name: m, litellm_params: {model: openai/gpt-4o}}]\n"
	cfg, err := Parse([]byte(models+`
router_settings: {allowed_fails: "2", cooldown_time: os.environ/COOL}
litellm_settings: {drop_params: true}
`), env(map[string]string{"COOL": "12.5"}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Breaker != (Breaker{Failures: 3, Cooldown: 12500 * time.Millisecond}) {
		t.Errorf("breaker %+v, want 3 failures, 12.5s", cfg.Breaker)
	}
	if cfg.DropParams == nil || !*cfg.DropParams {
		t.Errorf("drop_params %v", cfg.DropParams)
	}
	all := strings.Join(cfg.Warnings, "\n")
	if !strings.Contains(all, "allowed_fails 2: a model's circuit breaker opens after 3 failures in a row") ||
		!strings.Contains(all, "drop_params: true is what Switchyard does anyway") {
		t.Errorf("warnings %q", cfg.Warnings)
	}
	if w := ignoredWarning(cfg); w != "" {
		t.Errorf("keys named ignored: %s", w)
	}

	cfg, err = Parse([]byte(models+"router_settings: {allowed_fails: 0, disable_cooldowns: true}\nlitellm_settings: {drop_params: false}\n"), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Breaker.Failures != -1 || !strings.Contains(strings.Join(cfg.Warnings, "\n"), "drop_params: false is not followed") {
		t.Errorf("breaker %+v, warnings %q", cfg.Breaker, cfg.Warnings)
	}
	cfg, err = Parse([]byte(models+"router_settings: {allowed_fails: 0}\n"), env(nil))
	if err != nil || cfg.Breaker.Failures != 1 || cfg.Breaker.Cooldown != 0 {
		t.Errorf("allowed_fails 0: %+v %v, want the first failure to open it", cfg, err)
	}

	for _, tc := range []struct{ yaml, path string }{
		{"router_settings: {allowed_fails: 1.5}", "router_settings.allowed_fails"},
		{"router_settings: {allowed_fails: -1}", "router_settings.allowed_fails"},
		{"router_settings: {allowed_fails: many}", "router_settings.allowed_fails"},
		{"router_settings: {cooldown_time: 86401}", "router_settings.cooldown_time"},
		{"router_settings: {cooldown_time: os.environ/NOPE}", "router_settings.cooldown_time"},
		{"router_settings: {disable_cooldowns: yes please}", "router_settings.disable_cooldowns"},
		{"litellm_settings: {drop_params: \"true\"}", "litellm_settings.drop_params"},
	} {
		_, err := Parse([]byte(models+tc.yaml+"\n"), env(nil))
		var e *Error
		if !errors.As(err, &e) || e.Path != tc.path {
			t.Errorf("%s: %v, want an error at %s", tc.yaml, err, tc.path)
		}
	}
}

// model_info.mode embedding alone, without rates or limits, makes the deployment an
// embedding model (its member's OwnPrice.Embedding), as LiteLLM reads the mode for its
// health checks; mode chat alone sets nothing.
func TestModeEmbeddingWithoutPrices(t *testing.T) {
	cfg, err := Parse([]byte(`
model_list:
  - {model_name: embed, litellm_params: {model: openai/bge-small, api_base: "http://vllm:8000/v1"}, model_info: {mode: embedding}}
  - {model_name: chat, litellm_params: {model: openai/llama, api_base: "http://vllm:8000/v1"}, model_info: {mode: chat}}
`), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	var emb, chat int
	for m, p := range cfg.Prices {
		switch {
		case p.Embedding && m == "openai-embed/bge-small":
			emb++
		default:
			chat++
		}
	}
	if emb != 1 || chat != 0 {
		t.Errorf("prices %+v: want only openai-embed/bge-small, as an embedding model", cfg.Prices)
	}
}
