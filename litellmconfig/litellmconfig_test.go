package litellmconfig

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
)

// env is a test environment.
func env(vars map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) { v, ok := vars[name]; return v, ok }
}

func provider(t *testing.T, c *Config, name string) providers.ProviderConfig {
	t.Helper()
	for _, pc := range c.Providers.Providers {
		if pc.Name == name {
			return pc
		}
	}
	t.Fatalf("no provider %q in %+v", name, c.Providers.Providers)
	return providers.ProviderConfig{}
}

// LiteLLM's load-balancing example: one model_name over two Azure resources and OpenAI,
// shares by rpm, router fallbacks, retries, timeout, a master key from the environment,
// and settings Switchyard does not have.
const azureBalanced = `
model_list:
  - model_name: gpt-4o
    litellm_params:
      model: azure/gpt-4o-eu
      api_base: https://my-eu.openai.azure.com/
      api_key: os.environ/AZURE_EU_KEY
      api_version: "2024-10-21"
      rpm: 600
    model_info:
      base_model: azure/gpt-4o-2024-08-06
  - model_name: gpt-4o
    litellm_params:
      model: azure/gpt-4o-ca
      api_base: os.environ/AZURE_CA_BASE
      api_key: os.environ/AZURE_CA_KEY
      api_version: 2025-04-01-preview
      rpm: 300
      temperature: 0.2
  - model_name: gpt-4o
    litellm_params:
      model: openai/gpt-4o
      api_key: os.environ/OPENAI_API_KEY
      rpm: 100
  - model_name: claude-3-5
    litellm_params:
      model: anthropic/claude-3-5-sonnet-20241022
      api_key: os.environ/ANTHROPIC_API_KEY
router_settings:
  routing_strategy: simple-shuffle
  num_retries: 3
  timeout: 45
  fallbacks: [{"gpt-4o": ["claude-3-5"]}]
  redis_host: localhost
litellm_settings:
  callbacks: ["langfuse"]
  cache: true
  cache_params:
    type: redis
general_settings:
  master_key: os.environ/LITELLM_MASTER_KEY
  database_url: postgresql://u:p@db/litellm
`

func TestAzureLoadBalancing(t *testing.T) {
	c, err := Parse([]byte(azureBalanced), env(map[string]string{
		"AZURE_EU_KEY": "k1", "AZURE_CA_KEY": "k2", "AZURE_CA_BASE": "https://my-ca.openai.azure.com",
		"OPENAI_API_KEY": "sk-o", "ANTHROPIC_API_KEY": "sk-a", "LITELLM_MASTER_KEY": "sk-master-1234",
	}))
	if err != nil {
		t.Fatal(err)
	}
	eu := provider(t, c, "azure-gpt-4o")
	if eu.Format != providers.FormatAzure || eu.BaseURL != "https://my-eu.openai.azure.com/" || eu.APIKeyEnv != "AZURE_EU_KEY" || eu.APIKey != "" ||
		eu.APIVersion != "2024-10-21" || eu.BaseModels["gpt-4o-eu"] != "gpt-4o-2024-08-06" {
		t.Errorf("eu entry %+v", eu)
	}
	ca := provider(t, c, "azure-gpt-4o-2")
	if ca.BaseURL != "https://my-ca.openai.azure.com" || ca.APIKeyEnv != "AZURE_CA_KEY" || ca.APIVersion != "2025-04-01-preview" {
		t.Errorf("ca entry %+v (an unquoted date version stays text)", ca)
	}
	if len(c.Providers.Providers) != 2 {
		t.Errorf("providers %+v: OpenAI and Anthropic on their environment keys need no entry", c.Providers.Providers)
	}
	g := c.ModelGroups["gpt-4o"]
	if !slices.Equal(g.Models, []string{"azure-gpt-4o/gpt-4o-eu", "azure-gpt-4o-2/gpt-4o-ca", "openai/gpt-4o"}) || !g.Shuffle ||
		!slices.Equal(g.Weights, []float64{600, 300, 100}) || !slices.Equal(g.Fallbacks, []string{"claude-3-5"}) {
		t.Errorf("gpt-4o group %+v", g)
	}
	// A deployment's temperature is its member's default (LiteLLM sends it unless the
	// request sets one), the other members setting none.
	if g := c.ModelGroups["gpt-4o"]; len(g.Params) != len(g.Models) || !slices.ContainsFunc(g.Params, func(p completions.MemberParams) bool { return p.Temperature != nil && *p.Temperature == 0.2 }) {
		t.Errorf("gpt-4o group params %+v, want the azure/gpt-4o-ca deployment's temperature 0.2", g.Params)
	}
	if g := c.ModelGroups["claude-3-5"]; !slices.Equal(g.Models, []string{"anthropic/claude-3-5-sonnet-20241022"}) || g.Shuffle {
		t.Errorf("claude-3-5 group %+v", g)
	}
	if c.MasterKey != "sk-master-1234" || c.NumRetries == nil || *c.NumRetries != 3 || c.Timeout != 45*time.Second {
		t.Errorf("settings: key %q retries %v timeout %s", c.MasterKey, c.NumRetries, c.Timeout)
	}
	warn := strings.Join(c.Warnings, "\n")
	for _, k := range []string{"litellm_settings.callbacks", "litellm_settings.cache,", "litellm_settings.cache_params", "general_settings.database_url",
		"router_settings.redis_host"} {
		if !strings.Contains(warn, k) {
			t.Errorf("warnings %q do not name %s", warn, k)
		}
	}
	if len(c.Warnings) != 2 || !strings.Contains(c.Warnings[0], "litellm_settings.callbacks: logging callbacks are not run") ||
		!strings.Contains(c.Warnings[0], "OTEL_EXPORTER_OTLP_ENDPOINT") || !strings.Contains(c.Warnings[0], "--trace-content") {
		t.Errorf("want two warnings (the callbacks, pointing at OTLP tracing; the keys ignored), got %q", c.Warnings)
	}
}

// Latency routing over default providers, a self-hosted vLLM (no key), bare names,
// weights beside rpm, default fallbacks, an alias, a wildcard, retries from
// litellm_settings.
const mixed = `
model_list:
  - model_name: fast
    litellm_params: {model: gemini/gemini-2.0-flash}
  - model_name: fast
    litellm_params: {model: groq/llama-3.1-8b-instant, weight: 2}
  - model_name: fast
    litellm_params: {model: hosted_vllm/meta-llama/Llama-3.1-8B-Instruct, api_base: "http://gpu:8000/v1"}
  - model_name: sonnet
    litellm_params: {model: claude-3-5-sonnet-20241022}
  - model_name: mini
    litellm_params: {model: gpt-4o-mini}
  - model_name: "openai/*"
    litellm_params: {model: "openai/*"}
router_settings:
  routing_strategy: latency-based-routing
  model_group_alias: {"claude": "sonnet", "small": {"model": "mini", "hidden": true}}
litellm_settings:
  num_retries: 0
  request_timeout: 600
  default_fallbacks: ["mini"]
`

func TestLatencyRoutingSelfHostedAndDefaults(t *testing.T) {
	c, err := Parse([]byte(mixed), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	vllm := provider(t, c, "hosted-vllm-fast-3")
	if vllm.Format != providers.FormatOpenAI || vllm.BaseURL != "http://gpu:8000/v1" || !vllm.KeyOptional {
		t.Errorf("vllm entry %+v", vllm)
	}
	fast := c.ModelGroups["fast"]
	if !slices.Equal(fast.Models, []string{"gemini/gemini-2.0-flash", "groq/llama-3.1-8b-instant", "hosted-vllm-fast-3/meta-llama/Llama-3.1-8B-Instruct"}) ||
		!fast.Fastest || fast.Shuffle || fast.Weights != nil || !slices.Equal(fast.Fallbacks, []string{"mini"}) {
		t.Errorf("fast group %+v", fast)
	}
	if s := c.ModelGroups["sonnet"]; !slices.Equal(s.Models, []string{"anthropic/claude-3-5-sonnet-20241022"}) {
		t.Errorf("a bare claude name is Anthropic's: %+v", s)
	}
	if m := c.ModelGroups["mini"]; !slices.Equal(m.Models, []string{"openai/gpt-4o-mini"}) || len(m.Fallbacks) != 0 {
		t.Errorf("a bare gpt name is OpenAI's, and not its own fallback: %+v", m)
	}
	if a := c.ModelGroups["claude"]; !slices.Equal(a.Models, c.ModelGroups["sonnet"].Models) {
		t.Errorf("alias claude %+v", a)
	}
	if _, ok := c.ModelGroups["small"]; !ok {
		t.Error("alias small (object form) missing")
	}
	if !slices.Equal(c.Passthrough, []string{"openai/*"}) || c.NumRetries == nil || *c.NumRetries != 0 || c.Timeout != 600*time.Second {
		t.Errorf("passthrough %v retries %v timeout %s", c.Passthrough, c.NumRetries, c.Timeout)
	}
	if w := strings.Join(c.Warnings, "\n"); !strings.Contains(w, "model_group_alias.small.hidden") {
		t.Errorf("warnings %q: hidden is not supported", w)
	}
}

// usage-based routing is the nearest we have: a shuffle weighted by tpm, said once.
func TestUsageBasedRoutingIsWeightedShuffle(t *testing.T) {
	c, err := Parse([]byte(`
model_list:
  - {model_name: m, litellm_params: {model: openai/gpt-4o, rpm: 10, tpm: 1000}}
  - {model_name: m, litellm_params: {model: openrouter/openai/gpt-4o, rpm: 10, tpm: 3000}}
router_settings: {routing_strategy: usage-based-routing-v2}
`), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	g := c.ModelGroups["m"]
	if !g.Shuffle || !slices.Equal(g.Weights, []float64{1000, 3000}) {
		t.Errorf("group %+v: want a shuffle weighted by tpm", g)
	}
	if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "usage-based-routing-v2 is not supported") {
		t.Errorf("warnings %q", c.Warnings)
	}
	c, err = Parse([]byte(`
model_list:
  - {model_name: m, litellm_params: {model: openai/gpt-4o}}
  - {model_name: m, litellm_params: {model: azure/prod, api_base: "https://x.openai.azure.com", api_key: literal-key}}
  - {model_name: m, litellm_params: {model: azure/prod-2, api_base: "https://x.openai.azure.com", api_key: literal-key}}
router_settings: {routing_strategy: cost-based-routing}
`), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	// Two deployments on one resource share its entry.
	if g := c.ModelGroups["m"]; !g.Route || g.Tradeoff != "cost" || !slices.Equal(g.Models, []string{"openai/gpt-4o", "azure-m-2/prod", "azure-m-2/prod-2"}) {
		t.Errorf("group %+v", g)
	}
	if len(c.Providers.Providers) != 1 || c.Providers.Providers[0].APIKey != "literal-key" {
		t.Errorf("providers %+v", c.Providers.Providers)
	}
}

// Every malformed value fails, naming its path.
func TestErrorsNameTheField(t *testing.T) {
	vars := env(map[string]string{"SET": "v"})
	for doc, want := range map[string]string{
		`model_list: {}`:      "model_list: must be a list",
		`router_settings: {}`: "model_list: is required",
		`model_list: [{model_name: a, litellm_params: {model: openai/x}}, {model_name: b, litellm_params: {model: foo/x}}]`: `model_list[1].litellm_params.model: unknown provider prefix "foo"`,
		`model_list: [{model_name: a, litellm_params: {model: 5}}]`:                                                         "model_list[0].litellm_params.model: must be a string, got the number 5",
		`model_list: [{model_name: a}]`:                                                                                                                                                "model_list[0].litellm_params: must be a map",
		`model_list: [{litellm_params: {model: openai/x}}]`:                                                                                                                            "model_list[0].model_name: is required",
		`model_list: [{model_name: a, litellm_params: {model: openai/x, api_base: "ftp://x"}}]`:                                                                                        "model_list[0].litellm_params.api_base: must be an http",
		`model_list: [{model_name: a, litellm_params: {model: openai/x, api_base: os.environ/UNSET_BASE}}]`:                                                                            `model_list[0].litellm_params.api_base: the environment variable "UNSET_BASE"`,
		`model_list: [{model_name: a, litellm_params: {model: openai/x, api_key: os.environ/UNSET_KEY}}]`:                                                                              `model_list[0].litellm_params.api_key: the environment variable "UNSET_KEY" (os.environ/UNSET_KEY) holding its key is not set`,
		`model_list: [{model_name: a, litellm_params: {model: openai/x, rpm: lots}}]`:                                                                                                  `model_list[0].litellm_params.rpm: must be a number, got the string "lots"`,
		`model_list: [{model_name: a, litellm_params: {model: openai/x, api_version: "2024-10-21"}}]`:                                                                                  "model_list[0].litellm_params.api_version: applies to azure",
		`model_list: [{model_name: a, litellm_params: {model: azure/d, api_base: "https://x.openai.azure.com", api_version: "v9"}}]`:                                                   `model_list[0].litellm_params: provider "azure-a".api_version`,
		`model_list: [{model_name: a, litellm_params: {model: hosted_vllm/x}}]`:                                                                                                        "model_list[0].litellm_params.api_base: is required for hosted_vllm",
		`model_list: [{model_name: a, litellm_params: {model: bedrock/x, aws_access_key_id: AKIA}}]`:                                                                                   "model_list[0].litellm_params.aws_access_key_id: must be os.environ/VARIABLE",
		`model_list: [{model_name: a, litellm_params: {model: openai/x}}, {model_name: a, litellm_params: {model: openai/y}}, {model_name: "b c", litellm_params: {model: openai/y}}]`: `model_list[2].model_name: "b c"`,
		`model_list: [{model_name: x/y, litellm_params: {model: openai/x}}, {model_name: x/y, litellm_params: {model: openai/y}}]`:                                                     "model_list[1].model_name:",
		`{model_list: [{model_name: a, litellm_params: {model: openai/x}}], router_settings: {routing_strategy: fastest}}`:                                                             `router_settings.routing_strategy: unknown strategy "fastest"`,
		`{model_list: [{model_name: a, litellm_params: {model: openai/x}}], router_settings: {fallbacks: [{a: [nope]}]}}`:                                                              `router_settings.fallbacks[0].a[0]: "nope" is not a model_name`,
		`{model_list: [{model_name: a, litellm_params: {model: openai/x}}], litellm_settings: {fallbacks: [{nope: [a]}]}}`:                                                             `litellm_settings.fallbacks[0].nope: "nope" is not a model_name`,
		`{model_list: [{model_name: a, litellm_params: {model: openai/x}}], router_settings: {fallbacks: {a: [a]}}}`:                                                                   "router_settings.fallbacks: must be a list",
		`{model_list: [{model_name: a, litellm_params: {model: openai/x}}], router_settings: {num_retries: -1}}`:                                                                       "router_settings.num_retries: must be a whole number",
		`{model_list: [{model_name: a, litellm_params: {model: openai/x}}], router_settings: {timeout: "30s"}}`:                                                                        "router_settings.timeout: must be a number",
		`{model_list: [{model_name: a, litellm_params: {model: openai/x}}], general_settings: {master_key: os.environ/NO_MASTER}}`:                                                     `general_settings.master_key: the environment variable "NO_MASTER"`,
		`{model_list: [{model_name: a, litellm_params: {model: openai/x}}], general_settings: {master_key: 1234}}`:                                                                     "general_settings.master_key: must be a string",
		`{model_list: [{model_name: a, litellm_params: {model: openai/x}}], router_settings: [1]}`:                                                                                     "router_settings: must be a map",
		"model_list:\n  - model_name: a\n   litellm_params: {}":                                                                                                                        "(file): not YAML",
	} {
		_, err := Parse([]byte(doc), vars)
		var e *Error
		if err == nil || !errors.Is(err, ErrInvalid) || !errors.As(err, &e) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s:\n  got %v\n  want an error containing %q", doc, err, want)
		}
	}
}

// A model group of more than MaxModels deployments is refused naming the first one past it.
func TestTooManyDeployments(t *testing.T) {
	var b strings.Builder
	b.WriteString("model_list:\n")
	for range completions.MaxModels + 1 {
		b.WriteString("  - {model_name: big, litellm_params: {model: openai/gpt-4o, api_base: \"https://x.example\"}}\n")
	}
	_, err := Parse([]byte(b.String()), env(nil))
	if err == nil || !strings.Contains(err.Error(), "model_list[10].model_name") {
		t.Fatalf("%v", err)
	}
}
