package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/litellmconfig"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/usagelog"
)

// litellmConfigServer is a server whose gateway is wired from the LiteLLM config yaml as
// serve --litellm-config wires it (its providers over the environment env's, its groups,
// listed names, deployment names and wildcards, Options.ListConfigured); "URL" in yaml
// is replaced by url. tweak, when not nil, changes the options last.
func litellmConfigServer(t *testing.T, yaml, url string, env map[string]string, tweak func(*completions.Options)) (*httptest.Server, *Server, *litellmconfig.Config) {
	t.Helper()
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	cfg, err := litellmconfig.Parse([]byte(strings.ReplaceAll(yaml, "URL", url)), lookup)
	if err != nil {
		t.Fatal(err)
	}
	getenv := func(k string) string { return env[k] }
	reg := providers.FromEnv(getenv, providers.Options{})
	if err := reg.Configure(&cfg.Providers, getenv, providers.Options{}); err != nil {
		t.Fatal(err)
	}
	st := newTestStore(t)
	rec := usagelog.New(usagelog.Options{})
	o := completions.Options{Providers: reg, Prices: providers.DefaultCatalog().WithOwnPrices(cfg.Prices), Store: st, Observer: rec,
		ModelGroups: cfg.ModelGroups, ListConfigured: true, Listed: cfg.Listed, DeploymentNames: cfg.DeploymentNames,
		Wildcards: cfg.Wildcards, DeploymentIDs: cfg.DeploymentIDs()}
	if tweak != nil {
		tweak(&o)
	}
	g, err := completions.New(o)
	if err != nil {
		t.Fatal(err)
	}
	s := testServer(t, Config{Store: st, APIKeys: []string{testKey}}, nil)
	for _, opt := range []Option{Completions(g), Usage(rec)} {
		if err := opt(s); err != nil {
			t.Fatal(err)
		}
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	return hs, s, cfg
}

// listedIDs is GET /v1/models' ids for key.
func listedIDs(t *testing.T, url, key string) []string {
	t.Helper()
	resp, b := do2(t, "GET", url+"/v1/models", key, "", nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/v1/models: %d %s", resp.StatusCode, b)
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &list); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range list.Data {
		ids = append(ids, m.ID)
	}
	return ids
}

// A model_name with '/' (openai/gpt-4o-custom of a deployment calling openai/gpt-4o with
// an api_base of its own) is listed by GET /v1/models as written, as LiteLLM lists its
// model_names, not by the member the gateway calls it as (openai-…/gpt-4o); a request may
// name it or the deployment's litellm_params.model, and both reach its api_base.
func TestLiteLLMSlashModelNameListedAsWritten(t *testing.T) {
	up := &fakeOpenAIUpstream{}
	ups := httptest.NewServer(up)
	t.Cleanup(ups.Close)
	hs, _, _ := litellmConfigServer(t, `
model_list:
  - model_name: openai/gpt-4o-custom
    litellm_params: {model: openai/gpt-4o, api_base: URL/v1, api_key: sk-own}
  - model_name: smart
    litellm_params: {model: openai/gpt-4o-mini, api_base: URL/v1, api_key: sk-own}
`, ups.URL, nil, nil)
	ids := listedIDs(t, hs.URL, testKey)
	if !slices.Contains(ids, "openai/gpt-4o-custom") || !slices.Contains(ids, "smart") {
		t.Errorf("/v1/models %v: want openai/gpt-4o-custom and smart", ids)
	}
	for _, id := range ids {
		if strings.HasPrefix(id, "openai-") {
			t.Errorf("/v1/models lists %s, the gateway's internal name of the deployment", id)
		}
	}
	for _, m := range []string{"openai/gpt-4o-custom", "openai/gpt-4o"} {
		resp, b := post(t, hs.URL+"/v1/chat/completions", testKey, `{"model":"`+m+`","messages":[{"role":"user","content":"hi"}]}`)
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "from gpt-4o") {
			t.Errorf("chat %s: %d %s, want 200 from the deployment's gpt-4o", m, resp.StatusCode, b)
		}
	}
}

// A model_name with '/' whose deployment calls the environment's provider
// (openai/gpt-4o-custom calling openai/gpt-4o, no api_base of its own) is listed as
// written too, and its litellm_params.model, no group's member, is still served.
func TestLiteLLMSlashModelNameOfTheEnvironmentsProvider(t *testing.T) {
	up := &fakeOpenAIUpstream{}
	ups := httptest.NewServer(up)
	t.Cleanup(ups.Close)
	hs, _, _ := litellmConfigServer(t, `
model_list:
  - model_name: openai/gpt-4o-custom
    litellm_params: {model: openai/gpt-4o}
`, ups.URL, map[string]string{"OPENAI_API_KEY": "sk-env", "OPENAI_BASE_URL": ups.URL + "/v1"}, nil)
	if ids := listedIDs(t, hs.URL, testKey); !slices.Equal(ids, []string{"openai/gpt-4o-custom"}) {
		t.Errorf("/v1/models %v, want [openai/gpt-4o-custom]", ids)
	}
	for m, want := range map[string]int{"openai/gpt-4o-custom": 200, "openai/gpt-4o": 200, "openai/gpt-4.1": 400} {
		resp, b := post(t, hs.URL+"/v1/chat/completions", testKey, `{"model":"`+m+`","messages":[{"role":"user","content":"hi"}]}`)
		if resp.StatusCode != want {
			t.Errorf("chat %s: %d %s, want %d", m, resp.StatusCode, b, want)
		}
	}
}

// /utils/token_counter counts a model group whose deployment is an Azure OpenAI
// deployment with a model_info.base_model in the base model's tokenizer (gpt-4o's
// o200k_base), as LiteLLM chooses its tokenizer by base_model, not by the deployment's
// own name (prod-eu, which no tokenizer knows: cl100k_base's estimate); model_used is
// still the deployment, as LiteLLM reports it.
func TestLiteLLMTokenCounterUsesBaseModel(t *testing.T) {
	hs, _, _ := litellmConfigServer(t, `
model_list:
  - model_name: my-azure
    litellm_params: {model: azure/prod-eu, api_base: "https://eu.example.invalid", api_key: k, api_version: v1}
    model_info: {base_model: azure/gpt-4o}
  - model_name: bare-azure
    litellm_params: {model: azure/prod-us, api_base: "https://us.example.invalid", api_key: k, api_version: v1}
`, "", nil, nil)
	const text = "Grüße aus München! 東京で会いましょう。 Привет, как дела? 🙂 " +
		"def f(x): return [i**2 for i in range(x) if i % 3 == 0]"
	o200k, cl100k := providers.CountTokens("openai/gpt-4o", text), providers.CountTokens("openai/gpt-4", text)
	if o200k == cl100k {
		t.Fatalf("the text counts %d in both tokenizers: pick another", o200k)
	}
	for model, want := range map[string]int{"my-azure": o200k, "bare-azure": cl100k} {
		body, _ := json.Marshal(map[string]any{"model": model, "prompt": text})
		resp, b := post(t, hs.URL+"/utils/token_counter", testKey, string(body))
		var got struct {
			TotalTokens int    `json:"total_tokens"`
			ModelUsed   string `json:"model_used"`
		}
		json.Unmarshal(b, &got)
		if resp.StatusCode != http.StatusOK || got.TotalTokens != want {
			t.Errorf("%s: %d %s, want %d tokens (o200k %d, cl100k %d)", model, resp.StatusCode, b, want, o200k, cl100k)
		}
		if model == "my-azure" && got.ModelUsed != "prod-eu" {
			t.Errorf("%s: model_used %q, want prod-eu", model, got.ModelUsed)
		}
	}
}

// Under a LiteLLM config a key allowed a model group may call the group but not one of its
// deployments by the deployment's own litellm_params.model (or a model_name with '/'
// calling the same upstream): LiteLLM's proxy grants a key the names in its models only
// (can_key_call_model), so both are a 403 key_model_access_denied, on chat, the token
// counter and GET /v1/models' list; a key naming the deployment's model may call it.
func TestLiteLLMKeyAllowedAGroupMayNotCallItsMembersName(t *testing.T) {
	up := &fakeOpenAIUpstream{}
	ups := httptest.NewServer(up)
	t.Cleanup(ups.Close)
	hs, s, _ := litellmConfigServer(t, `
model_list:
  - model_name: smart
    litellm_params: {model: openai/gpt-4o, api_base: URL/v1, api_key: sk-own}
  - model_name: team/gpt
    litellm_params: {model: openai/gpt-4o, api_base: URL/v1, api_key: sk-own}
`, ups.URL, nil, nil)
	group := issue(t, s, `{"name":"group","models":["smart"]}`)
	member := issue(t, s, `{"name":"member","models":["openai/gpt-4o"]}`)
	chat := func(key, model string) (int, string) {
		resp, b := post(t, hs.URL+"/v1/chat/completions", key, `{"model":"`+model+`","messages":[{"role":"user","content":"hi"}]}`)
		return resp.StatusCode, string(b)
	}
	for _, c := range []struct {
		key, model string
		want       int
	}{
		{group.Key, "smart", 200},
		{group.Key, "openai/gpt-4o", 403},
		{group.Key, "team/gpt", 403},
		{member.Key, "openai/gpt-4o", 200},
		{member.Key, "smart", 403},
	} {
		code, b := chat(c.key, c.model)
		if code != c.want || c.want == 403 && !strings.Contains(b, "key_model_access_denied") {
			t.Errorf("key %v chat %s: %d %s, want %d", c.key == group.Key, c.model, code, b, c.want)
		}
	}
	resp, b := post(t, hs.URL+"/utils/token_counter", group.Key, `{"model":"openai/gpt-4o","prompt":"hi"}`)
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("token_counter of the member's name with the group's key: %d %s, want 403", resp.StatusCode, b)
	}
	if ids := listedIDs(t, hs.URL, group.Key); !slices.Equal(ids, []string{"smart"}) {
		t.Errorf("/v1/models of the group's key: %v, want [smart]", ids)
	}
}
