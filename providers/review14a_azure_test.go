package providers_test

import (
	"context"
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// review14aCapture is an Azure resource that answers chat (whole and streamed),
// embeddings, transcription and speech, and keeps what each request carried.
type review14aCapture struct {
	srv  *httptest.Server
	mu   sync.Mutex
	reqs []review14aReq
}

type review14aReq struct {
	uri, apiKey, auth string
	body              map[string]any // JSON bodies
	parts             []string       // multipart field names, in order
}

func newReview14aCapture(t *testing.T) *review14aCapture {
	c := &review14aCapture{}
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := review14aReq{uri: r.URL.RequestURI(), apiKey: r.Header.Get("Api-Key"), auth: r.Header.Get("Authorization")}
		if mt, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "multipart/form-data" {
			mr := multipart.NewReader(r.Body, params["boundary"])
			for {
				p, err := mr.NextPart()
				if err != nil {
					break
				}
				rec.parts = append(rec.parts, p.FormName())
			}
		} else {
			b, _ := io.ReadAll(r.Body)
			_ = json.Unmarshal(b, &rec.body)
		}
		c.mu.Lock()
		c.reqs = append(c.reqs, rec)
		c.mu.Unlock()
		switch {
		case strings.HasSuffix(r.URL.Path, "/embeddings"):
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.1]}],"model":"m","usage":{"prompt_tokens":1,"total_tokens":1}}`)
		case strings.HasSuffix(r.URL.Path, "/audio/transcriptions"):
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"text":"hello"}`)
		case strings.HasSuffix(r.URL.Path, "/audio/speech"):
			w.Header().Set("Content-Type", "audio/mpeg")
			io.WriteString(w, "ID3")
		case rec.body["stream"] == true:
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"}}]}\n\ndata: [DONE]\n\n")
		default:
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)
		}
	}))
	t.Cleanup(c.srv.Close)
	return c
}

func (c *review14aCapture) all() []review14aReq {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]review14aReq(nil), c.reqs...)
}

// TestReview14aAzureWireMatchesOfficialSDKs (passes): the same five requests sent through
// github.com/openai/openai-go v1.12.0's azure package (azure.WithEndpoint(endpoint,
// "2024-10-21"), azure.WithAPIKey) and through the npm openai 5.23.2 AzureOpenAI client,
// each pointed at an httptest server, were recorded by the reviewer (scratch programs
// outside this repository, as neither SDK's azure part is a dependency here); what they
// sent is written out below, and the adapter sends the same URL, api-version, api-key and
// body fields. (npm's embeddings add encoding_format "base64", which it decodes itself;
// its multipart orders model before file, the Go SDK file before model.)
func TestReview14aAzureWireMatchesOfficialSDKs(t *testing.T) {
	c := newReview14aCapture(t)
	ctx := context.Background()
	az := providers.NewAzure(providers.AzureConfig{Config: providers.Config{BaseURL: c.srv.URL + "/", APIKey: "az-key"}, APIVersion: "2024-10-21"})
	req := &providers.Request{Model: "prod-4o", Messages: []providers.Message{{Role: "user", Content: "hi"}}, MaxTokens: 50}
	if _, err := az.Complete(ctx, req); err != nil {
		t.Fatal(err)
	}
	s, err := az.Stream(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := s.Recv(); err != nil {
			break
		}
	}
	s.Close()
	if _, err := az.Embed(ctx, &providers.EmbeddingRequest{Model: "embed-small", Input: []string{"hi"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := az.Transcribe(ctx, &providers.TranscriptionRequest{Model: "whisper", File: []byte("RIFF"), Filename: "a.wav"}); err != nil {
		t.Fatal(err)
	}
	sp, err := az.Speak(ctx, &providers.SpeechRequest{Model: "tts", Input: "hi", Voice: "alloy"})
	if err != nil {
		t.Fatal(err)
	}
	sp.Body.Close()

	q := "?api-version=2024-10-21"
	msgs := []any{map[string]any{"role": "user", "content": "hi"}}
	// As openai-go's azure package and npm's AzureOpenAI sent them.
	want := []review14aReq{
		{uri: "/openai/deployments/prod-4o/chat/completions" + q, apiKey: "az-key",
			body: map[string]any{"model": "prod-4o", "messages": msgs, "max_completion_tokens": 50.0}},
		{uri: "/openai/deployments/prod-4o/chat/completions" + q, apiKey: "az-key",
			body: map[string]any{"model": "prod-4o", "messages": msgs, "max_completion_tokens": 50.0, "stream": true,
				"stream_options": map[string]any{"include_usage": true}}},
		{uri: "/openai/deployments/embed-small/embeddings" + q, apiKey: "az-key",
			body: map[string]any{"model": "embed-small", "input": []any{"hi"}}},
		{uri: "/openai/deployments/whisper/audio/transcriptions" + q, apiKey: "az-key", parts: []string{"model", "file"}},
		{uri: "/openai/deployments/tts/audio/speech" + q, apiKey: "az-key",
			body: map[string]any{"model": "tts", "input": "hi", "voice": "alloy"}},
	}
	got := c.all()
	if len(got) != len(want) {
		t.Fatalf("%d requests, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.uri != w.uri || g.apiKey != w.apiKey || g.auth != "" {
			t.Errorf("request %d: %s api-key %q Authorization %q; the SDKs: %s api-key %q", i, g.uri, g.apiKey, g.auth, w.uri, w.apiKey)
		}
		if w.parts != nil {
			if !reflect.DeepEqual(sortedCopy(g.parts), sortedCopy(w.parts)) {
				t.Errorf("request %d: multipart fields %v, the SDKs %v", i, g.parts, w.parts)
			}
			continue
		}
		if !reflect.DeepEqual(g.body, w.body) {
			t.Errorf("request %d: body %v\nthe SDKs: %v", i, g.body, w.body)
		}
	}
	// npm's AzureOpenAI with azureADTokenProvider sent "Authorization: Bearer <token>" and no
	// api-key; openai-go's WithTokenCredential does the same through azcore's bearer policy.
	ad := providers.NewAzure(providers.AzureConfig{Config: providers.Config{BaseURL: c.srv.URL}, ADToken: "entra-token"})
	if _, err := ad.Complete(ctx, req); err != nil {
		t.Fatal(err)
	}
	if g := c.all()[len(c.all())-1]; g.auth != "Bearer entra-token" || g.apiKey != "" {
		t.Errorf("Entra ID: Authorization %q api-key %q", g.auth, g.apiKey)
	}
}

func sortedCopy(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

// TestReview14aAzurePortalTargetURIAsBase: Azure AI Foundry shows each deployment's
// "Target URI" (https://{res}.openai.azure.com/openai/deployments/{dep}/chat/completions?api-version=…),
// and that is what people paste as the endpoint. NewAzure trims only a trailing "/openai"
// or "/openai/v1" (azure.go:94-96), so every call goes to the pasted deployment whatever
// the model asked ("azure/prod" is answered by gpt-4o and priced as prod), with the
// configured api-version glued onto the pasted one's query. Either the endpoint is cut
// back to the resource, or the provider is refused/not configured saying which variable
// is wrong; it must not call another deployment than the one asked for.
func TestReview14aAzurePortalTargetURIAsBase(t *testing.T) {
	c := newReview14aCapture(t)
	pasted := c.srv.URL + "/openai/deployments/gpt-4o/chat/completions?api-version=2025-01-01-preview"
	p, err := providers.FromEnv(envOf(map[string]string{"AZURE_API_KEY": "k", "AZURE_API_BASE": pasted}), providers.Options{}).Lookup("azure")
	if err != nil {
		t.Fatal(err)
	}
	if !providers.IsConfigured(p) {
		return // refused: fine, as long as it says why (checked by the call's error)
	}
	if _, err := p.Complete(context.Background(), azureHello("prod")); err != nil {
		if strings.Contains(err.Error(), "AZURE_API_BASE") {
			return
		}
		t.Fatalf("call failed without naming AZURE_API_BASE: %v", err)
	}
	got := c.all()[0].uri
	if !strings.HasPrefix(got, "/openai/deployments/prod/chat/completions?") || strings.Count(got, "api-version=") != 1 {
		t.Errorf("AZURE_API_BASE = the portal's Target URI; a call for deployment prod went to %s", got)
	}
}

// TestReview14aAzureFileADTokenEnvOverridesEnvKey: README says an "azure" entry of
// --providers-config "overrides what the environment set". An entry that chooses Entra ID
// (ad_token_env) on a server that also has AZURE_API_KEY keeps sending the environment's
// api-key: NewAzure uses the token only when no key is set (azure.go:81) and
// configureAzure leaves the environment's key in place (registry.go configureAzure).
func TestReview14aAzureFileADTokenEnvOverridesEnvKey(t *testing.T) {
	c := newReview14aCapture(t)
	fc, err := providers.ParseConfig([]byte(`{"providers":[{"name":"azure","ad_token_env":"MY_ENTRA_TOKEN"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	env := envOf(map[string]string{"AZURE_API_KEY": "env-key", "AZURE_API_BASE": c.srv.URL, "MY_ENTRA_TOKEN": "entra"})
	reg := providers.FromEnv(env, providers.Options{})
	if err := reg.Configure(fc, env, providers.Options{}); err != nil {
		t.Fatal(err)
	}
	p, _ := reg.Lookup("azure")
	if _, err := p.Complete(context.Background(), azureHello("prod")); err != nil {
		t.Fatal(err)
	}
	if g := c.all()[0]; g.auth != "Bearer entra" || g.apiKey != "" {
		t.Errorf("file entry ad_token_env over env AZURE_API_KEY: sent api-key %q, Authorization %q; want the file's Entra ID token", g.apiKey, g.auth)
	}
}

// TestReview14aAzureDefaultVersionServesReasoningModels: Azure refuses its reasoning
// models on api-versions before 2024-12-01-preview with a 400 "Model {modelName} is enabled
// only for api versions 2024-12-01-preview and later" (reported against o1 and o3-mini in
// microsoft/semantic-kernel#12268, Azure/azure-sdk-for-net#47809, microsoft/genaiscript#1121;
// o3-pro needs 2025-03-01-preview, Aider-AI/aider#4303). DefaultAzureAPIVersion is
// 2024-10-21 (azure.go:11), so with no AZURE_API_VERSION every deployment of an o-series
// model — the README's own example {"reasoner": "o3-mini"}, whose temperature handling the
// adapter takes care of — is sent where Azure refuses it. A default that serves them (v1,
// or a dated version from 2024-12-01-preview on for reasoning deployments) is needed.
func TestReview14aAzureDefaultVersionServesReasoningModels(t *testing.T) {
	c := newReview14aCapture(t)
	fc, err := providers.ParseConfig([]byte(`{"providers":[{"name":"azure","base_models":{"reasoner":"o3-mini"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	env := envOf(map[string]string{"AZURE_API_KEY": "k", "AZURE_API_BASE": c.srv.URL})
	reg := providers.FromEnv(env, providers.Options{})
	if err := reg.Configure(fc, env, providers.Options{}); err != nil {
		t.Fatal(err)
	}
	p, _ := reg.Lookup("azure")
	for _, dep := range []string{"reasoner", "o3-mini", "o1"} {
		if _, err := p.Complete(context.Background(), azureHello(dep)); err != nil {
			t.Fatal(err)
		}
		all := c.all()
		uri := all[len(all)-1].uri
		v := ""
		if i := strings.Index(uri, "api-version="); i >= 0 {
			v = uri[i+len("api-version="):]
		}
		if !strings.HasPrefix(uri, "/openai/v1/") && v < "2024-12-01-preview" {
			t.Errorf("deployment %s of an o-series model, default settings: sent to %s, which Azure refuses for reasoning models", dep, uri)
		}
	}
}
