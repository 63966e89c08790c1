package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
)

// listConfiguredServer is completionsServer as --litellm-config wires its gateway
// (Options.ListConfigured): model group "smart" of up/ok, alias "fast" of it, up/listed
// listed (a model_name with '/'), and the wildcard "wild-*" routed to up/*; every other
// model of provider up (whose models the catalogue does not enumerate) is not served.
func listConfiguredServer(t *testing.T, configured bool) (string, *Server) {
	hs, s, _ := completionsServerWith(t, func(o *completions.Options) {
		o.ModelGroups = map[string]completions.ModelGroup{
			"smart": {Models: []string{"up/ok"}, Fallbacks: []string{"up/ok2"}},
			"fast":  {Models: []string{"up/ok"}},
			"pair":  {Models: []string{"up/ok2"}},
		}
		o.ListConfigured = configured
		o.Listed = []string{"up/listed"}
		o.Wildcards = []completions.Wildcard{{Pattern: "wild-*", Model: "up/*"}}
	})
	return hs.URL, s
}

// A LiteLLM config's gateway serves what GET /v1/models lists and nothing else: a model it
// does not name is refused on every route that names a model with LiteLLM's proxy's 400
// ("/chat/completions: Invalid model name passed in model=…"), before any upstream call,
// and a key may not be issued for it; the groups, an alias, a group's member (a
// deployment's model), a listed name and a wildcard's names are served.
func TestListConfiguredRefusesUnlistedModels(t *testing.T) {
	url, _ := listConfiguredServer(t, true)
	chat := func(model string) string {
		return `{"model":"` + model + `","messages":[{"role":"user","content":"hi"}]}`
	}
	for _, m := range []string{"smart", "fast", "up/ok", "up/ok2", "up/listed", "wild-x"} {
		resp, b := do2(t, "POST", url+"/v1/chat/completions", testKey, chat(m), nil)
		if resp.StatusCode != http.StatusOK {
			t.Errorf("chat %s: %d %s, want 200", m, resp.StatusCode, b)
		}
	}
	for _, c := range []struct{ path, route, body string }{
		{"/v1/chat/completions", "/chat/completions", chat("up/other")},
		{"/v1/chat/completions", "/chat/completions", chat("gpt-4o-mini")},
		{"/v1/completions", "/completions", `{"model":"up/other","prompt":"hi"}`},
		{"/v1/responses", "/responses", `{"model":"up/other","input":"hi"}`},
		{"/v1/embeddings", "/embeddings", `{"model":"up/other","input":"hi"}`},
		{"/v1/images/generations", "/images/generations", `{"model":"up/other","prompt":"a cat"}`},
		{"/v1/audio/speech", "/audio/speech", `{"model":"up/other","input":"hi","voice":"alloy"}`},
		{"/v1/moderations", "/moderations", `{"model":"up/other","input":"hi"}`},
	} {
		resp, b := do2(t, "POST", url+c.path, testKey, c.body, nil)
		e := wantOpenAIError(t, c.path, resp, b, http.StatusBadRequest, "invalid_request_error", "400")
		model := strings.SplitN(strings.SplitN(c.body, `"model":"`, 2)[1], `"`, 2)[0]
		want := c.route + ": Invalid model name passed in model=" + model + ". Call `/v1/models` to view available models for your key."
		if e.Message != want {
			t.Errorf("%s: message %q, want %q", c.path, e.Message, want)
		}
		if e.Param == nil || *e.Param != "model" {
			t.Errorf("%s: param %v, want model", c.path, e.Param)
		}
	}
	// A request's fallback the config does not serve is refused as well.
	resp, b := do2(t, "POST", url+"/v1/chat/completions", testKey, `{"model":"smart","fallbacks":["up/other"],"messages":[{"role":"user","content":"hi"}]}`, nil)
	wantOpenAIError(t, "fallbacks", resp, b, http.StatusBadRequest, "invalid_request_error", "400")
	// Anthropic's and Google's surfaces refuse it too, each in its own envelope.
	resp, b = do2(t, "POST", url+"/v1/messages", testKey, `{"model":"up/other","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`, nil)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "Invalid model name passed in model=up/other") {
		t.Errorf("messages: %d %s", resp.StatusCode, b)
	}
	resp, b = do2(t, "POST", url+"/v1beta/models/up/other:generateContent", testKey, `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`, nil)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), `"/v1beta/models/up/other:generateContent: Invalid model name passed in model=up/other.`) {
		t.Errorf("gemini: %d %s", resp.StatusCode, b)
	}
	// GET /v1/models/{model} answers as the request path does.
	for m, want := range map[string]int{"up/other": 404, "up/listed": 200, "smart": 200, "wild-y": 200} {
		if resp, b := do2(t, "GET", url+"/v1/models/"+m, testKey, "", nil); resp.StatusCode != want {
			t.Errorf("GET /v1/models/%s: %d %s, want %d", m, resp.StatusCode, b, want)
		}
	}
	// What a key may name is what is served.
	for body, want := range map[string]int{
		`{"models":["up/other"]}`:                  http.StatusBadRequest,
		`{"models":["smart","up/ok","up/listed"]}`: http.StatusOK,
		`{"models":["wild-z","fast"]}`:             http.StatusOK,
		`{"models":["up/*"]}`:                      http.StatusOK, // a pattern, as LiteLLM's keys take
		`{"models":["gpt-4o-mini"]}`:               http.StatusBadRequest,
	} {
		resp, b := do2(t, "POST", url+"/key/generate", testKey, body, nil)
		if resp.StatusCode != want {
			t.Errorf("/key/generate %s: %d %s, want %d", body, resp.StatusCode, b, want)
		}
	}
	resp, b = do2(t, "POST", url+"/team/new", testKey, `{"models":["up/other"]}`, nil)
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("/team/new up/other: %d %s, want 400", resp.StatusCode, b)
	}
}

// Without a LiteLLM config (ListConfigured false) any model of a configured provider is
// served, as before.
func TestWithoutListConfiguredEveryProviderModelIsServed(t *testing.T) {
	url, _ := listConfiguredServer(t, false)
	resp, b := do2(t, "POST", url+"/v1/chat/completions", testKey, `{"model":"up/other","messages":[{"role":"user","content":"hi"}]}`, nil)
	if resp.StatusCode != http.StatusOK {
		t.Errorf("chat up/other: %d %s", resp.StatusCode, b)
	}
	resp, b = do2(t, "POST", url+"/key/generate", testKey, `{"models":["up/other"]}`, nil)
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/key/generate up/other: %d %s", resp.StatusCode, b)
	}
}

// The keyless ollama preset needs no key, but a server whose environment says nothing of
// it (no OLLAMA_BASE_URL, no OLLAMA_API_KEY) may run no ollama: GET /v1/models and
// /model/info leave its catalogued models out then, and list them once OLLAMA_BASE_URL
// names it; either way a request naming one is served.
func TestUnnamedKeylessProviderIsNotListed(t *testing.T) {
	for _, named := range []bool{false, true} {
		env := map[string]string{}
		if named {
			env["OLLAMA_BASE_URL"] = "http://127.0.0.1:1"
		}
		hs, _, _ := completionsServerWith(t, func(o *completions.Options) {
			o.Providers = providers.FromEnv(func(k string) string { return env[k] }, providers.Options{})
		})
		resp, b := do2(t, "GET", hs.URL+"/v1/models", testKey, "", nil)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET /v1/models: %d %s", resp.StatusCode, b)
		}
		var list struct {
			Data []struct {
				ID string `json:"id"`
			} `json:"data"`
		}
		if err := json.Unmarshal(b, &list); err != nil {
			t.Fatal(err)
		}
		var ollama []string
		for _, m := range list.Data {
			if strings.HasPrefix(m.ID, "ollama/") {
				ollama = append(ollama, m.ID)
			}
		}
		if named != (len(ollama) > 0) {
			t.Errorf("OLLAMA_BASE_URL set %v: /v1/models lists %d ollama models", named, len(ollama))
		}
		r := do2Info(t, hs.URL)
		if named != strings.Contains(r, `"ollama/`) {
			t.Errorf("OLLAMA_BASE_URL set %v: /model/info lists ollama models: %v", named, strings.Contains(r, `"ollama/`))
		}
		if resp, b := do2(t, "GET", hs.URL+"/v1/models/ollama/llama3", testKey, "", nil); resp.StatusCode != http.StatusOK {
			t.Errorf("OLLAMA_BASE_URL set %v: GET /v1/models/ollama/llama3: %d %s, want 200 (served)", named, resp.StatusCode, b)
		}
	}
}

// do2Info is GET /model/info's body.
func do2Info(t *testing.T, url string) string {
	t.Helper()
	resp, b := do2(t, "GET", url+"/model/info", testKey, "", nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /model/info: %d %s", resp.StatusCode, b)
	}
	return string(b)
}

// realtimeNamesCatalog is the default catalogue with one more OpenAI realtime model,
// openai/voice-1, whose name no model family the gateway knows covers (as a catalogue
// update may bring), priced as gpt-realtime.
type realtimeNamesCatalog struct{ *providers.Catalog }

func (c realtimeNamesCatalog) RealtimeModels(provider string) []string {
	out := c.Catalog.RealtimeModels(provider)
	if provider == "openai" {
		out = append(out, "openai/voice-1")
	}
	return out
}

func (c realtimeNamesCatalog) LookupRealtime(model string) (providers.RealtimePrice, bool) {
	if model == "openai/voice-1" {
		model = "openai/gpt-realtime"
	}
	return c.Catalog.LookupRealtime(model)
}

// Under a LiteLLM config, a key's models may name a realtime model the config serves by
// its bare name (voice-1 of a group's member openai/voice-1), which a realtime session
// asks for by that name; a realtime model the config does not serve is refused.
func TestListConfiguredKeyNamesServedRealtimeModel(t *testing.T) {
	hs, _, _ := completionsServerWith(t, func(o *completions.Options) {
		o.Providers = providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: "http://127.0.0.1:1/v1", APIKey: "sk-o"}))
		o.Prices = realtimeNamesCatalog{providers.DefaultCatalog()}
		o.ModelGroups = map[string]completions.ModelGroup{"voice": {Models: []string{"openai/voice-1"}}}
		o.ListConfigured, o.Listed = true, []string{}
	})
	for body, want := range map[string]int{
		`{"models":["voice-1"]}`:      http.StatusOK,
		`{"models":["voice"]}`:        http.StatusOK,
		`{"models":["voice-2"]}`:      http.StatusBadRequest,
		`{"models":["gpt-realtime"]}`: http.StatusBadRequest, // a realtime model, not the config's
	} {
		resp, b := do2(t, "POST", hs.URL+"/key/generate", testKey, body, nil)
		if resp.StatusCode != want {
			t.Errorf("/key/generate %s: %d %s, want %d", body, resp.StatusCode, b, want)
		}
	}
}
