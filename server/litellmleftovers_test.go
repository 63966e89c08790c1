package server

import (
	"encoding/json"
	"io"
	"math/rand/v2"
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
		Wildcards: cfg.Wildcards, DeploymentIDs: cfg.DeploymentIDs(), ContextWindowFallbacksSet: cfg.ContextWindowFallbacksSet}
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
	// Anthropic's count_tokens counts on the group's deployment alike.
	counted := map[string]int{}
	for _, model := range []string{"my-azure", "bare-azure"} {
		body, _ := json.Marshal(map[string]any{"model": model, "messages": []map[string]string{{"role": "user", "content": text}}})
		resp, b := post(t, hs.URL+"/v1/messages/count_tokens", testKey, string(body))
		var got struct {
			InputTokens int `json:"input_tokens"`
		}
		json.Unmarshal(b, &got)
		if resp.StatusCode != http.StatusOK || got.InputTokens == 0 {
			t.Fatalf("count_tokens %s: %d %s", model, resp.StatusCode, b)
		}
		counted[model] = got.InputTokens
	}
	if d := counted["my-azure"] - counted["bare-azure"]; d != o200k-cl100k {
		t.Errorf("count_tokens: my-azure %d, bare-azure %d: want them %d apart (the base model's tokenizer)", counted["my-azure"], counted["bare-azure"], o200k-cl100k)
	}
}

// Under a LiteLLM config a key allowed a model group may call the group but not one of its
// deployments by the deployment's own litellm_params.model (or a model_name with '/'
// calling the same upstream): LiteLLM's proxy grants a key the names in its models only
// (can_key_call_model), so both are a 401 key_model_access_denied, on chat, the token
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
		{group.Key, "openai/gpt-4o", 401},
		{group.Key, "team/gpt", 401},
		{member.Key, "openai/gpt-4o", 200},
		{member.Key, "smart", 401},
	} {
		code, b := chat(c.key, c.model)
		if code != c.want || c.want == 401 && !strings.Contains(b, "key_model_access_denied") {
			t.Errorf("key %v chat %s: %d %s, want %d", c.key == group.Key, c.model, code, b, c.want)
		}
	}
	resp, b := post(t, hs.URL+"/utils/token_counter", group.Key, `{"model":"openai/gpt-4o","prompt":"hi"}`)
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("token_counter of the member's name with the group's key: %d %s, want 401", resp.StatusCode, b)
	}
	if ids := listedIDs(t, hs.URL, group.Key); !slices.Equal(ids, []string{"smart"}) {
		t.Errorf("/v1/models of the group's key: %v, want [smart]", ids)
	}
}

// Deployments sharing a model_name are picked as LiteLLM's default simple-shuffle picks
// them: the first by weighted random draw (litellm_params.weight; without weights rpm),
// the others after it as fallbacks drawn the same way. Over many requests of a seeded
// gateway (Options.Rand) each deployment is tried first about its share of the time
// (counts in a wide band, no timings), and a request whose first pick fails (down, 503)
// is answered by a later one.
func TestLiteLLMWeightedDeploymentsAreShuffled(t *testing.T) {
	up := &fakeOpenAIUpstream{}
	ups := httptest.NewServer(up)
	t.Cleanup(ups.Close)
	hs, _, cfg := litellmConfigServer(t, `
model_list:
  - model_name: spread
    litellm_params: {model: openai/gpt-4o, api_base: URL/v1, api_key: sk-own, weight: 6}
  - model_name: spread
    litellm_params: {model: openai/gpt-4o-mini, api_base: URL/v1, api_key: sk-own, weight: 3}
  - model_name: spread
    litellm_params: {model: openai/down, api_base: URL/v1, api_key: sk-own, weight: 1}
  - model_name: by-rpm
    litellm_params: {model: openai/gpt-4.1, api_base: URL/v1, api_key: sk-own, rpm: 100000}
  - model_name: by-rpm
    litellm_params: {model: openai/gpt-4.1-mini, api_base: URL/v1, api_key: sk-own, rpm: 300000}
`, ups.URL, nil, func(o *completions.Options) {
		o.Rand = rand.NewPCG(36, 5)
		o.Breaker.Failures = -1 // down's failures must not take it out of the draw
	})
	if g := cfg.ModelGroups["spread"]; !g.Shuffle || !slices.Equal(g.Weights, []float64{6, 3, 1}) {
		t.Fatalf("spread: %+v, want shuffle by weights 6, 3, 1", g)
	}
	firsts := func(model string, n int) map[string]int {
		counts := map[string]int{}
		for range n {
			resp, b := post(t, hs.URL+"/v1/chat/completions", testKey, `{"model":"`+model+`","max_retries":0,"messages":[{"role":"user","content":"hi"}]}`)
			var out struct {
				Switchyard struct {
					Attempts []struct {
						Model string `json:"model"`
					} `json:"attempts"`
				} `json:"switchyard"`
			}
			json.Unmarshal(b, &out)
			if resp.StatusCode != http.StatusOK || len(out.Switchyard.Attempts) == 0 {
				t.Fatalf("chat %s: %d %s", model, resp.StatusCode, b)
			}
			a := out.Switchyard.Attempts
			counts[a[0].Model[strings.IndexByte(a[0].Model, '/')+1:]]++
			if strings.HasSuffix(a[0].Model, "/down") && len(a) < 2 {
				t.Errorf("a request whose first pick was down: attempts %+v, want a fallback after it", a)
			}
		}
		return counts
	}
	const n = 300
	c := firsts("spread", n)
	for m, band := range map[string][2]int{"gpt-4o": {140, 220}, "gpt-4o-mini": {55, 125}, "down": {10, 55}} {
		if c[m] < band[0] || c[m] > band[1] {
			t.Errorf("spread: %s first in %d of %d requests, want %d-%d (counts %v)", m, c[m], n, band[0], band[1], c)
		}
	}
	c = firsts("by-rpm", 200)
	if c["gpt-4.1-mini"] < 120 || c["gpt-4.1-mini"] > 180 {
		t.Errorf("by-rpm: gpt-4.1-mini (rpm 3 to 1) first in %d of 200 requests, want 120-180 (counts %v)", c["gpt-4.1-mini"], c)
	}
}

// A LiteLLM config's Azure OpenAI realtime deployment (model azure/gpt-realtime-eu, on
// the environment's Azure resource or with an api_base of its own) opens a realtime
// session when called by its model_name or by its litellm_params.model, dialling its
// deployment on its own resource (the v1 realtime URL, model=the deployment), as the chat
// routes resolve those names; a bare name the config does not hold (gpt-realtime-eu) is
// refused before any dial, as chat refuses it and LiteLLM's proxy routes only the names
// its model_list holds.
func TestLiteLLMAzureRealtimeDeploymentNames(t *testing.T) {
	own := &scriptedRealtime{endedCh: make(chan struct{}, 16)}
	ownSrv := httptest.NewServer(http.StripPrefix("/openai", own)) // Azure's /openai/v1/realtime
	t.Cleanup(ownSrv.Close)
	envUp := &scriptedRealtime{endedCh: make(chan struct{}, 16)}
	envSrv := httptest.NewServer(http.StripPrefix("/openai", envUp))
	t.Cleanup(envSrv.Close)
	hs, _, _ := litellmConfigServer(t, `
model_list:
  - model_name: voice-eu
    litellm_params: {model: azure/gpt-realtime-eu, api_base: URL, api_key: az-own, api_version: v1}
  - model_name: voice-env
    litellm_params: {model: azure/gpt-realtime-env}
`, ownSrv.URL, map[string]string{"AZURE_API_KEY": "az-env", "AZURE_API_BASE": envSrv.URL, "AZURE_API_VERSION": "v1"}, nil)
	for _, c := range []struct {
		model, deployment string
		up                *scriptedRealtime
		key               string
	}{
		{"voice-eu", "gpt-realtime-eu", own, "az-own"},
		{"azure/gpt-realtime-eu", "gpt-realtime-eu", own, "az-own"},
		{"voice-env", "gpt-realtime-env", envUp, "az-env"},
		{"azure/gpt-realtime-env", "gpt-realtime-env", envUp, "az-env"},
	} {
		conn, resp, err := dialRealtime(t, hs, "model="+c.model, http.Header{"Authorization": {"Bearer " + testKey}})
		if err != nil {
			var b []byte
			if resp != nil && resp.Body != nil {
				b, _ = io.ReadAll(resp.Body)
			}
			t.Errorf("realtime %s: %v %s", c.model, err, b)
			continue
		}
		if typ, _ := readEvent(t, conn); typ != "session.created" {
			t.Errorf("realtime %s: first event %q", c.model, typ)
		}
		conn.CloseNow()
		<-c.up.endedCh
		d := c.up.lastDial()
		if d.URL.Path != "/v1/realtime" || d.URL.Query().Get("model") != c.deployment || d.Header.Get("Api-Key") != c.key {
			t.Errorf("realtime %s dialled %s with api-key %q, want deployment %s with %s", c.model, d.URL, d.Header.Get("Api-Key"), c.deployment, c.key)
		}
	}
	before := own.dialCount() + envUp.dialCount()
	for _, bare := range []string{"gpt-realtime-eu", "gpt-realtime-env"} {
		conn, resp, err := dialRealtime(t, hs, "model="+bare, http.Header{"Authorization": {"Bearer " + testKey}})
		if err == nil {
			conn.CloseNow()
			t.Errorf("realtime %s: upgraded", bare)
			continue
		}
		var b []byte
		if resp != nil && resp.Body != nil {
			b, _ = io.ReadAll(resp.Body)
		}
		if resp == nil || resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "Invalid model name passed in model="+bare) {
			t.Errorf("realtime %s: %v %s, want LiteLLM's 400", bare, resp, b)
		}
		chat, cb := post(t, hs.URL+"/v1/chat/completions", testKey, `{"model":"`+bare+`","messages":[{"role":"user","content":"hi"}]}`)
		if chat.StatusCode != http.StatusBadRequest {
			t.Errorf("chat %s: %d %s, want 400 as the realtime route", bare, chat.StatusCode, cb)
		}
	}
	if n := own.dialCount() + envUp.dialCount() - before; n != 0 {
		t.Errorf("the refused bare names dialled %d sessions", n)
	}
}
