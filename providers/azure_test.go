package providers_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// azureRecorder is an Azure resource that answers every operation and records what it was
// sent.
type azureRecorder struct {
	srv  *httptest.Server
	mu   sync.Mutex
	reqs []recorded
}

type recorded struct {
	uri    string
	header http.Header
	body   map[string]any
}

func newAzureRecorder(t *testing.T) *azureRecorder {
	a := &azureRecorder{}
	a.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var body map[string]any
		_ = json.Unmarshal(b, &body)
		a.mu.Lock()
		a.reqs = append(a.reqs, recorded{uri: r.URL.RequestURI(), header: r.Header.Clone(), body: body})
		a.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.HasSuffix(r.URL.Path, "/embeddings"):
			io.WriteString(w, `{"data":[{"index":0,"embedding":[0.1,0.2]}],"model":"text-embedding-3-small","usage":{"prompt_tokens":2,"total_tokens":2}}`)
		case strings.HasSuffix(r.URL.Path, "/audio/transcriptions"):
			io.WriteString(w, `{"text":"hello"}`)
		case strings.HasSuffix(r.URL.Path, "/audio/speech"):
			w.Header().Set("Content-Type", "audio/mpeg")
			io.WriteString(w, "ID3")
		case strings.HasSuffix(r.URL.Path, "/responses"):
			io.WriteString(w, `{"id":"resp_1","object":"response","status":"completed","model":"codex-mini","output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"ok"}]}],"usage":{"input_tokens":1,"output_tokens":1}}`)
		default:
			io.WriteString(w, `{"choices":[{"message":{"content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1}}`)
		}
	}))
	t.Cleanup(a.srv.Close)
	return a
}

func (a *azureRecorder) last(t *testing.T) recorded {
	t.Helper()
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.reqs) == 0 {
		t.Fatal("Azure was sent nothing")
	}
	return a.reqs[len(a.reqs)-1]
}

func azureHello(model string) *providers.Request {
	return &providers.Request{Model: model, Messages: []providers.Message{{Role: "user", Content: "hi"}}, MaxTokens: 50}
}

// Every operation the OpenAI adapter sends goes to the deployment's URL with the
// api-version, the key in api-key; the v1 API takes the deployment in the body.
func TestAzureURLs(t *testing.T) {
	ctx := context.Background()
	a := newAzureRecorder(t)
	az := providers.NewAzure(providers.AzureConfig{Config: providers.Config{BaseURL: a.srv.URL + "/openai/", APIKey: "az-key", HTTPClient: a.srv.Client()}})
	if az.Name() != "azure" || az.APIVersion() != providers.DefaultAzureAPIVersion || !az.Configured() {
		t.Fatalf("name %q, version %q, configured %v", az.Name(), az.APIVersion(), az.Configured())
	}
	q := "?api-version=" + providers.DefaultAzureAPIVersion
	if _, err := az.Complete(ctx, azureHello("prod-4o")); err != nil {
		t.Fatal(err)
	}
	got := a.last(t)
	if got.uri != "/openai/deployments/prod-4o/chat/completions"+q {
		t.Errorf("chat URI = %s", got.uri)
	}
	if got.header.Get("Api-Key") != "az-key" || got.header.Get("Authorization") != "" {
		t.Errorf("auth headers: api-key %q, Authorization %q", got.header.Get("Api-Key"), got.header.Get("Authorization"))
	}
	if got.body["max_completion_tokens"] != 50.0 || got.body["max_tokens"] != nil {
		t.Errorf("output bound sent as %v", got.body)
	}
	if _, err := az.Embed(ctx, &providers.EmbeddingRequest{Model: "embed-small", Input: []string{"hi"}}); err != nil {
		t.Fatal(err)
	}
	if got := a.last(t); got.uri != "/openai/deployments/embed-small/embeddings"+q {
		t.Errorf("embeddings URI = %s", got.uri)
	}
	if _, err := az.Transcribe(ctx, &providers.TranscriptionRequest{Model: "whisper", File: []byte("RIFF"), Filename: "a.wav"}); err != nil {
		t.Fatal(err)
	}
	if got := a.last(t); got.uri != "/openai/deployments/whisper/audio/transcriptions"+q || got.header.Get("Api-Key") != "az-key" {
		t.Errorf("transcription URI = %s, api-key %q", got.uri, got.header.Get("Api-Key"))
	}
	sp, err := az.Speak(ctx, &providers.SpeechRequest{Model: "tts", Input: "hi", Voice: "alloy"})
	if err != nil {
		t.Fatal(err)
	}
	sp.Body.Close()
	if got := a.last(t); got.uri != "/openai/deployments/tts/audio/speech"+q {
		t.Errorf("speech URI = %s", got.uri)
	}
	// A model only the Responses API serves stays on chat completions with deployment URLs
	// (they have no Responses API); the v1 API sends it to /openai/v1/responses.
	if _, err := az.Complete(ctx, azureHello("codex-mini")); err != nil {
		t.Fatal(err)
	}
	if got := a.last(t); !strings.HasSuffix(strings.Split(got.uri, "?")[0], "/chat/completions") {
		t.Errorf("codex-mini on deployment URLs went to %s", got.uri)
	}

	v1 := providers.NewAzure(providers.AzureConfig{Config: providers.Config{Name: "azure-eu", BaseURL: a.srv.URL, HTTPClient: a.srv.Client()},
		APIVersion: "v1", ADToken: "entra-token"})
	if v1.APIVersion() != "v1" {
		t.Errorf("APIVersion = %q", v1.APIVersion())
	}
	if _, err := v1.Complete(ctx, azureHello("prod-4o")); err != nil {
		t.Fatal(err)
	}
	got = a.last(t)
	if got.uri != "/openai/v1/chat/completions" || got.body["model"] != "prod-4o" {
		t.Errorf("v1 URI = %s, model %v", got.uri, got.body["model"])
	}
	if got.header.Get("Authorization") != "Bearer entra-token" || got.header.Get("Api-Key") != "" {
		t.Errorf("Entra ID auth: Authorization %q, api-key %q", got.header.Get("Authorization"), got.header.Get("Api-Key"))
	}
	if _, err := v1.Complete(ctx, azureHello("codex-mini")); err != nil {
		t.Fatal(err)
	}
	if got := a.last(t); got.uri != "/openai/v1/responses" || got.body["model"] != "codex-mini" {
		t.Errorf("v1 Responses URI = %s, model %v", got.uri, got.body["model"])
	}
	if _, err := v1.Embed(ctx, &providers.EmbeddingRequest{Model: "embed-small", Input: []string{"hi"}}); err != nil {
		t.Fatal(err)
	}
	if got := a.last(t); got.uri != "/openai/v1/embeddings" {
		t.Errorf("v1 embeddings URI = %s", got.uri)
	}
	// Azure's Responses API has no web search: no deployment offers one.
	if az.SupportsSearch("gpt-4o") || v1.SupportsSearch("gpt-5") {
		t.Error("an Azure deployment claims web search")
	}
}

// A deployment's base model decides what OpenAI's reasoning models need: a deployment of
// o3-mini, whatever its name, gets no temperature and takes Thinking as reasoning_effort.
func TestAzureBaseModelFamily(t *testing.T) {
	a := newAzureRecorder(t)
	az := providers.NewAzure(providers.AzureConfig{Config: providers.Config{BaseURL: a.srv.URL, APIKey: "k", HTTPClient: a.srv.Client()},
		BaseModels: map[string]string{"reasoner": "o3-mini-2025-01-31", "chat": "azure/gpt-4o"}})
	temp := 0.3
	req := azureHello("reasoner")
	req.Temperature, req.Thinking = &temp, &providers.Thinking{Effort: "high"}
	if _, err := az.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	got := a.last(t)
	if got.body["temperature"] != nil || got.body["reasoning_effort"] != "high" {
		t.Errorf("o3-mini deployment sent temperature %v, reasoning_effort %v", got.body["temperature"], got.body["reasoning_effort"])
	}
	req.Model = "chat"
	if _, err := az.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if got := a.last(t); got.body["temperature"] != 0.3 || got.body["reasoning_effort"] != nil {
		t.Errorf("gpt-4o deployment sent temperature %v, reasoning_effort %v", got.body["temperature"], got.body["reasoning_effort"])
	}
	for dep, want := range map[string]string{"reasoner": "azure/o3-mini-2025-01-31", "chat": "azure/gpt-4o", "gpt-4o-mini": "azure/gpt-4o-mini", "my-thing": "azure/my-thing"} {
		if got, ok := az.BaseModel(dep); !ok || got != want {
			t.Errorf("BaseModel(%s) = %q, %v; want %q", dep, got, ok, want)
		}
	}
	if got := providers.PriceModel(az, "reasoner"); got != "azure/o3-mini-2025-01-31" {
		t.Errorf("PriceModel = %q", got)
	}
}

// Prices: a mapped deployment is priced as its base model, one named after its model by
// its name, and any other is unknown, never made up.
func TestAzurePricing(t *testing.T) {
	az := providers.NewAzure(providers.AzureConfig{Config: providers.Config{BaseURL: "https://x.openai.azure.com", APIKey: "k"},
		BaseModels: map[string]string{"prod": "gpt-4o-2024-08-06"}})
	cat := providers.DefaultCatalog()
	u := providers.Usage{PromptTokens: 1000, CompletionTokens: 100}
	mapped := cat.Cost(providers.PriceModel(az, "prod"), u)
	direct := cat.Cost("azure/gpt-4o-2024-08-06", u)
	if !mapped.Known || mapped.TotalUSD <= 0 || mapped != direct {
		t.Errorf("mapped deployment cost %+v, want %+v", mapped, direct)
	}
	if c := cat.Cost(providers.PriceModel(az, "gpt-4o"), u); !c.Known {
		t.Errorf("deployment named gpt-4o unpriced: %+v", c)
	}
	if c := cat.Cost(providers.PriceModel(az, "team-bot-7"), u); c.Known || c.TotalUSD != 0 {
		t.Errorf("unknown deployment priced: %+v", c)
	}
}

// Azure's errors: a 429's Retry-After (or retry-after-ms) is honoured; a prompt its filter
// blocked is KindContentFilter; a resource without an endpoint or key is not configured,
// naming what to set.
func TestAzureErrors(t *testing.T) {
	for _, h := range []struct{ name, value string }{{"Retry-After", "6"}, {"Retry-After-Ms", "6000"}} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set(h.name, h.value)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, `{"error":{"code":"429","message":"Requests to the ChatCompletions_Create Operation have exceeded token rate limit. Please retry after 6 seconds."}}`)
		}))
		az := providers.NewAzure(providers.AzureConfig{Config: providers.Config{BaseURL: srv.URL, APIKey: "k", HTTPClient: srv.Client()}})
		_, err := az.Complete(context.Background(), azureHello("prod-4o"))
		srv.Close()
		var pe *providers.Error
		if !errors.As(err, &pe) || pe.Kind != providers.KindRateLimited || pe.RetryAfter != 6*time.Second {
			t.Errorf("%s: err = %v (retry after %v)", h.name, err, pe.RetryAfter)
		}
	}

	for _, c := range []struct {
		cfg  providers.AzureConfig
		want string
	}{
		{providers.AzureConfig{Config: providers.Config{APIKey: "k"}}, "AZURE_API_BASE"},
		{providers.AzureConfig{Config: providers.Config{BaseURL: "https://x.openai.azure.com"}}, "AZURE_API_KEY"},
	} {
		az := providers.NewAzure(c.cfg)
		_, err := az.Complete(context.Background(), azureHello("d"))
		if az.Configured() || !errors.Is(err, providers.ErrNotConfigured) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("configured %v, err %v; want not configured naming %s", az.Configured(), err, c.want)
		}
	}
}

// The environment: LiteLLM's variables win over the official SDK's, which are used when
// LiteLLM's are unset; AZURE_AD_TOKEN authenticates without a key.
func TestAzureFromEnv(t *testing.T) {
	a := newAzureRecorder(t)
	call := func(env map[string]string) recorded {
		t.Helper()
		reg := providers.FromEnv(envOf(env), providers.Options{HTTPClient: a.srv.Client()})
		p, err := reg.Lookup("azure")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Complete(context.Background(), azureHello("dep")); err != nil {
			t.Fatal(err)
		}
		return a.last(t)
	}
	got := call(map[string]string{
		"AZURE_API_KEY": "litellm-key", "AZURE_OPENAI_API_KEY": "sdk-key",
		"AZURE_API_BASE": a.srv.URL, "AZURE_OPENAI_ENDPOINT": "http://127.0.0.1:1",
		"AZURE_API_VERSION": "2025-04-01-preview", "OPENAI_API_VERSION": "2024-06-01",
	})
	if got.header.Get("Api-Key") != "litellm-key" || got.uri != "/openai/deployments/dep/chat/completions?api-version=2025-04-01-preview" {
		t.Errorf("LiteLLM's variables: api-key %q, URI %s", got.header.Get("Api-Key"), got.uri)
	}
	got = call(map[string]string{"AZURE_OPENAI_API_KEY": "sdk-key", "AZURE_OPENAI_ENDPOINT": a.srv.URL, "OPENAI_API_VERSION": "v1"})
	if got.header.Get("Api-Key") != "sdk-key" || got.uri != "/openai/v1/chat/completions" {
		t.Errorf("SDK's variables: api-key %q, URI %s", got.header.Get("Api-Key"), got.uri)
	}
	got = call(map[string]string{"AZURE_AD_TOKEN": "entra", "AZURE_API_BASE": a.srv.URL})
	if got.header.Get("Authorization") != "Bearer entra" || got.uri != "/openai/deployments/dep/chat/completions?api-version="+providers.DefaultAzureAPIVersion {
		t.Errorf("Entra ID token: Authorization %q, URI %s", got.header.Get("Authorization"), got.uri)
	}
	reg := providers.FromEnv(envOf(map[string]string{"AZURE_API_KEY": "k"}), providers.Options{})
	if p, _ := reg.Lookup("azure"); providers.IsConfigured(p) {
		t.Error("azure without an endpoint is configured")
	}
}

// The configuration file: the azure preset takes base_models and an api_version over the
// environment's; further resources have format azure; misplaced or malformed fields are
// refused by name.
func TestAzureConfigFile(t *testing.T) {
	a := newAzureRecorder(t)
	fc, err := providers.ParseConfig([]byte(`{"providers": [
		{"name": "azure", "api_version": "2025-04-01-preview", "base_models": {"prod": "gpt-4o-2024-08-06"}},
		{"name": "azure-eu", "format": "azure", "base_url": "` + a.srv.URL + `", "api_key_env": "EU_KEY", "api_version": "v1"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	env := envOf(map[string]string{"AZURE_API_KEY": "k", "AZURE_API_BASE": a.srv.URL, "EU_KEY": "eu-key"})
	reg := providers.FromEnv(env, providers.Options{HTTPClient: a.srv.Client()})
	if err := reg.Configure(fc, env, providers.Options{HTTPClient: a.srv.Client()}); err != nil {
		t.Fatal(err)
	}
	p, _ := reg.Lookup("azure")
	if _, err := p.Complete(context.Background(), azureHello("prod")); err != nil {
		t.Fatal(err)
	}
	if got := a.last(t); got.uri != "/openai/deployments/prod/chat/completions?api-version=2025-04-01-preview" || got.header.Get("Api-Key") != "k" {
		t.Errorf("azure preset: URI %s, api-key %q", got.uri, got.header.Get("Api-Key"))
	}
	if m := providers.PriceModel(p, "prod"); m != "azure/gpt-4o-2024-08-06" {
		t.Errorf("base model = %q", m)
	}
	eu, _ := reg.Lookup("azure-eu")
	if _, err := eu.Complete(context.Background(), azureHello("prod")); err != nil {
		t.Fatal(err)
	}
	if got := a.last(t); got.uri != "/openai/v1/chat/completions" || got.header.Get("Api-Key") != "eu-key" {
		t.Errorf("azure-eu: URI %s, api-key %q", got.uri, got.header.Get("Api-Key"))
	}

	for _, c := range []struct{ doc, field string }{
		{`{"name": "azure", "api_version": "latest"}`, "providers[0].api_version"},
		{`{"name": "openai", "api_version": "v1"}`, "providers[0].api_version"},
		{`{"name": "x", "format": "azure"}`, "providers[0].base_url"},
		{`{"name": "azure", "base_models": {"prod": ""}}`, "providers[0].base_models"},
		{`{"name": "azure", "project": "p"}`, "providers[0].project"},
		{`{"name": "azure", "format": "openai"}`, "providers[0].format"},
	} {
		_, err := providers.ParseConfig([]byte(`{"providers": [` + c.doc + `]}`))
		var ce *providers.ConfigError
		if !errors.As(err, &ce) || ce.Field != c.field {
			t.Errorf("%s: err = %v, want one naming %s", c.doc, err, c.field)
		}
	}
}
