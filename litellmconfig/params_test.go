package litellmconfig

import (
	"slices"
	"strings"
	"testing"
)

// TestDeploymentParams: a deployment's temperature, max_tokens, stop, seed and
// reasoning_effort become its member's defaults; two deployments of one upstream with
// different ones keep the first's, with a warning; bad values are refused naming the path.
func TestDeploymentParams(t *testing.T) {
	cfg, err := Parse([]byte(`model_list:
  - model_name: claude
    litellm_params: {model: anthropic/claude-sonnet-4-5, max_tokens: 8192, temperature: 0.3, stop: "###", reasoning_effort: low}
  - model_name: claude
    litellm_params: {model: openai/gpt-4o, seed: 42}
  - model_name: other
    litellm_params: {model: anthropic/claude-sonnet-4-5, max_tokens: 100}
  - model_name: openai/gpt-4o-mini
    litellm_params: {model: openai/gpt-4o-mini, temperature: 0}
`), env(map[string]string{"OPENAI_API_KEY": "sk-o", "ANTHROPIC_API_KEY": "sk-a"}))
	if err != nil {
		t.Fatal(err)
	}
	g := cfg.ModelGroups["claude"]
	i := slices.Index(g.Models, "anthropic/claude-sonnet-4-5")
	if len(g.Params) != len(g.Models) || i < 0 {
		t.Fatalf("claude group %+v, want a params entry per member", g)
	}
	p := g.Params[i]
	if p.MaxTokens != 8192 || p.Temperature == nil || *p.Temperature != 0.3 || !slices.Equal(p.Stop, []string{"###"}) || p.ReasoningEffort != "low" {
		t.Errorf("claude member params %+v", p)
	}
	if q := g.Params[1-i]; q.Seed == nil || *q.Seed != 42 {
		t.Errorf("gpt-4o member params %+v, want seed 42", q)
	}
	if o := cfg.ModelGroups["other"]; len(o.Params) != 1 || o.Params[0].MaxTokens != 8192 {
		t.Errorf("other group %+v: one upstream, the first deployment's params hold", o.Params)
	}
	warn := strings.Join(cfg.Warnings, "\n")
	for _, w := range []string{"model_list[2].litellm_params: temperature, max_tokens or another request parameter differs from model_list[0]'s", "model_list[3].litellm_params: temperature, max_tokens and the other request parameters are not applied to a model_name with '/'"} {
		if !strings.Contains(warn, w) {
			t.Errorf("warnings %q lack %q", warn, w)
		}
	}
	for doc, want := range map[string]string{
		`model_list: [{model_name: a, litellm_params: {model: openai/x, temperature: 3}}]`:            `model_list[0].litellm_params.temperature: must be 0 to 2`,
		`model_list: [{model_name: a, litellm_params: {model: openai/x, max_tokens: 0}}]`:             `model_list[0].litellm_params.max_tokens: must be a whole number of tokens`,
		`model_list: [{model_name: a, litellm_params: {model: openai/x, max_tokens: "many"}}]`:        `model_list[0].litellm_params.max_tokens: must be a number`,
		`model_list: [{model_name: a, litellm_params: {model: openai/x, stop: [a, b, c, d, e]}}]`:     `model_list[0].litellm_params.stop: at most 4`,
		`model_list: [{model_name: a, litellm_params: {model: openai/x, reasoning_effort: extreme}}]`: `model_list[0].litellm_params.reasoning_effort`,
	} {
		_, err := Parse([]byte(doc), env(map[string]string{"OPENAI_API_KEY": "sk-o"}))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s:\n  got %v\n  want %q", doc, err, want)
		}
	}
}

// TestDeploymentExtraHeaders: a deployment's extra_headers (values may be os.environ/NAME)
// become its provider entry's headers; not a map, or on vertex_ai, refused naming the path.
func TestDeploymentExtraHeaders(t *testing.T) {
	cfg, err := Parse([]byte(`model_list:
  - model_name: router
    litellm_params:
      model: openai/some-model
      api_base: https://openrouter.example/api/v1
      api_key: sk-or
      extra_headers: {HTTP-Referer: "https://app.example", X-Proxy-Key: os.environ/PROXY_KEY}
`), env(map[string]string{"PROXY_KEY": "pk-123"}))
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, pc := range cfg.Providers.Providers {
		if pc.Headers["HTTP-Referer"] == "https://app.example" && pc.Headers["X-Proxy-Key"] == "pk-123" {
			found = true
		}
	}
	if !found {
		t.Errorf("providers %+v: want an entry with the deployment's headers", cfg.Providers.Providers)
	}
	for doc, want := range map[string]string{
		`model_list: [{model_name: a, litellm_params: {model: openai/x, api_base: "http://h", extra_headers: "X-A: b"}}]`:                         `model_list[0].litellm_params.extra_headers: must be a map`,
		`model_list: [{model_name: a, litellm_params: {model: openai/x, api_base: "http://h", extra_headers: {X-A: os.environ/UNSET_FOR_TEST}}}]`: `model_list[0].litellm_params.extra_headers.X-A`,
	} {
		_, err := Parse([]byte(doc), env(nil))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s:\n  got %v\n  want %q", doc, err, want)
		}
	}
}

// TestDeploymentOrganization: an OpenAI deployment's organization is sent as OpenAI's
// OpenAI-Organization header; on another format it is refused naming the path.
func TestDeploymentOrganization(t *testing.T) {
	cfg, err := Parse([]byte(`model_list:
  - model_name: gpt
    litellm_params: {model: openai/gpt-4o, api_key: sk-x, organization: org-abc}
`), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, pc := range cfg.Providers.Providers {
		found = found || pc.Headers["OpenAI-Organization"] == "org-abc"
	}
	if !found {
		t.Errorf("providers %+v: want OpenAI-Organization org-abc", cfg.Providers.Providers)
	}
	// Elsewhere it does nothing on LiteLLM: named among the keys ignored, no header sent.
	cfg, err = Parse([]byte(`model_list: [{model_name: c, litellm_params: {model: anthropic/claude-x, api_key: sk-a, organization: org-abc}}]`), env(nil))
	if err != nil || !strings.Contains(strings.Join(cfg.Warnings, "\n"), "model_list[0].litellm_params.organization") {
		t.Fatalf("organization on anthropic: %v, warnings %q: want it named as ignored", err, cfg.Warnings)
	}
	for _, pc := range cfg.Providers.Providers {
		if pc.Headers["OpenAI-Organization"] != "" {
			t.Errorf("anthropic entry %s sends OpenAI-Organization", pc.Name)
		}
	}
	// A tag_regex pattern Go cannot read is skipped with a warning, as LiteLLM skips it.
	cfg, err = Parse([]byte("model_list: [{model_name: a, litellm_params: {model: openai/x, tag_regex: [\"(?=claude)\", \"^User-Agent: codex\"]}}]\nrouter_settings: {enable_tag_filtering: true}\n"), env(map[string]string{"OPENAI_API_KEY": "sk"}))
	if err != nil || !strings.Contains(strings.Join(cfg.Warnings, "\n"), "tag_regex[0] \"(?=claude)\" is not a regular expression") {
		t.Fatalf("a lookahead pattern: %v, warnings %q", err, cfg.Warnings)
	}
	if g := cfg.ModelGroups["a"]; len(g.TagRegex) != 1 || len(g.TagRegex[0]) != 1 || g.TagRegex[0][0] != "^User-Agent: codex" {
		t.Errorf("patterns kept %v, want the readable one", g.TagRegex)
	}
}

// TestProxyMaxBudget: litellm_settings.max_budget and budget_duration are read (the
// proxy-wide budget); 0 is no bound (LiteLLM's default), a negative one is refused naming
// it; a duration alone warns.
func TestProxyMaxBudget(t *testing.T) {
	cfg, err := Parse([]byte("model_list: [{model_name: a, litellm_params: {model: openai/x}}]\nlitellm_settings: {max_budget: 250, budget_duration: 30d}\n"), env(map[string]string{"OPENAI_API_KEY": "sk"}))
	if err != nil || cfg.MaxBudget != 250 || cfg.BudgetDuration != "30d" {
		t.Fatalf("cfg %+v, %v: want max_budget 250 per 30d", cfg, err)
	}
	if _, err := Parse([]byte("model_list: [{model_name: a, litellm_params: {model: openai/x}}]\nlitellm_settings: {max_budget: -1}\n"), env(map[string]string{"OPENAI_API_KEY": "sk"})); err == nil || !strings.Contains(err.Error(), "litellm_settings.max_budget: must be 0 or more") {
		t.Errorf("max_budget -1: %v", err)
	}
	// LiteLLM's default and its docs' example (max_budget: 0 with budget_duration: 30d): no bound.
	cfg, err = Parse([]byte("model_list: [{model_name: a, litellm_params: {model: openai/x}}]\nlitellm_settings: {max_budget: 0, budget_duration: 30d}\n"), env(map[string]string{"OPENAI_API_KEY": "sk"}))
	if err != nil || cfg.MaxBudget != 0 || cfg.BudgetDuration != "" || !strings.Contains(strings.Join(cfg.Warnings, "\n"), "max_budget 0 sets no proxy-wide bound") {
		t.Errorf("max_budget 0: %+v %v, want no bound, warned", cfg, err)
	}
	cfg, err = Parse([]byte("model_list: [{model_name: a, litellm_params: {model: openai/x}}]\nlitellm_settings: {budget_duration: 1d}\n"), env(map[string]string{"OPENAI_API_KEY": "sk"}))
	if err != nil || cfg.BudgetDuration != "" || !strings.Contains(strings.Join(cfg.Warnings, "\n"), "budget_duration does nothing without") {
		t.Errorf("a duration alone: %+v %v", cfg, err)
	}
}
