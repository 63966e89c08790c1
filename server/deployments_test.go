package server

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/openai/openai-go"
	"github.com/openai/openai-go/option"

	"github.com/switchyard-ai/switchyard/completions"
)

// deploymentsServer is completionsServer with the model group "chat" (up/ok), which Azure
// clients name as their deployment.
func deploymentsServer(t *testing.T) (*httptest.Server, *Server, *fakeOpenAIUpstream) {
	t.Helper()
	return completionsServerWith(t, func(o *completions.Options) {
		o.ModelGroups = map[string]completions.ModelGroup{"chat": {Models: []string{"up/ok"}}}
	})
}

// TestAzureDeploymentChat: the deployment in the path is the model, whatever the body's
// model says or without one; api-version is ignored, present or not; the key comes as
// api-key; LiteLLM's /engines/{model}/ form and a provider/model deployment (its slash
// escaped) answer alike.
func TestAzureDeploymentChat(t *testing.T) {
	hs, _, up := deploymentsServer(t)
	for _, tc := range []struct{ what, path, body string }{
		{"deployment overrides the body's model", "/openai/deployments/chat/chat/completions?api-version=2024-10-21", `{"model":"up/down","messages":[{"role":"user","content":"hi"}]}`},
		{"no model in the body", "/openai/deployments/chat/chat/completions?api-version=preview", `{"messages":[{"role":"user","content":"hi"}]}`},
		{"no api-version", "/openai/deployments/chat/chat/completions", `{"messages":[{"role":"user","content":"hi"}]}`},
		{"escaped provider/model", "/openai/deployments/up%2Fok/chat/completions?api-version=2024-10-21", `{"messages":[{"role":"user","content":"hi"}]}`},
		{"engines", "/engines/chat/chat/completions", `{"model":"whatever","messages":[{"role":"user","content":"hi"}]}`},
	} {
		resp, b := do2(t, "POST", hs.URL+tc.path, "", tc.body, map[string]string{"api-key": testKey})
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", tc.what, resp.StatusCode, b)
		}
		var c completions.OpenAIChatCompletion
		if err := json.Unmarshal(b, &c); err != nil || len(c.Choices) != 1 || c.Choices[0].Message.Content == nil || *c.Choices[0].Message.Content != "Hello from ok" {
			t.Fatalf("%s: %s (%v)", tc.what, b, err)
		}
		if got := up.last(); len(got) != 1 || got[0]["content"] != "hi" {
			t.Fatalf("%s: upstream got %v", tc.what, got)
		}
	}

	// The legacy text completions under both forms.
	for _, path := range []string{"/openai/deployments/chat/completions?api-version=2024-10-21", "/engines/chat/completions"} {
		resp, b := do2(t, "POST", hs.URL+path, "", `{"prompt":"Say hi"}`, map[string]string{"api-key": testKey})
		if resp.StatusCode != 200 || !strings.Contains(string(b), `"text_completion"`) || !strings.Contains(string(b), "Hello from ok") {
			t.Fatalf("%s: %d %s", path, resp.StatusCode, b)
		}
	}

	// No key: 401 in OpenAI's envelope, saying api-key is taken.
	resp, b := do2(t, "POST", hs.URL+"/openai/deployments/chat/chat/completions?api-version=2024-10-21", "", `{"messages":[{"role":"user","content":"hi"}]}`, nil)
	if e := wantOpenAIError(t, "no key", resp, b, 401, "invalid_request_error", "invalid_api_key"); !strings.Contains(e.Message, "api-key") {
		t.Errorf("no key: %s", b)
	}
	resp, b = do2(t, "POST", hs.URL+"/openai/deployments/chat/chat/completions", "", `{"messages":[{"role":"user","content":"hi"}]}`, map[string]string{"api-key": "wrong"})
	wantOpenAIError(t, "wrong api-key", resp, b, 401, "invalid_request_error", "invalid_api_key")
}

// TestAzureDeploymentRefusals: an unknown deployment is OpenAI's 404 model_not_found
// naming it; one the key may not call is the refusal /v1 gives that model; a bad body is
// the /v1 route's 400 naming the field.
func TestAzureDeploymentRefusals(t *testing.T) {
	hs, s, _ := deploymentsServer(t)
	hdr := map[string]string{"api-key": testKey}
	resp, b := do2(t, "POST", hs.URL+"/openai/deployments/my-gpt4o/chat/completions?api-version=2024-10-21", "", `{"model":"chat","messages":[{"role":"user","content":"hi"}]}`, hdr)
	if e := wantOpenAIError(t, "unknown deployment", resp, b, 404, "invalid_request_error", "model_not_found"); !strings.Contains(e.Message, "my-gpt4o") {
		t.Errorf("unknown deployment: %s", b)
	}

	budget := completions.NewBudget(completions.BudgetLimits{AllowedModels: []string{"up/ok"}})
	revoke := s.Auth().AddTemporaryKey("azure-job-key", "job-1", completions.Scope{Budget: budget, Tag: "job-1"})
	defer revoke()
	v1Resp, v1Body := do2(t, "POST", hs.URL+"/v1/chat/completions", "azure-job-key", `{"model":"up/down","messages":[{"role":"user","content":"hi"}]}`, nil)
	resp, b = do2(t, "POST", hs.URL+"/openai/deployments/up%2Fdown/chat/completions?api-version=2024-10-21", "", `{"model":"up/ok","messages":[{"role":"user","content":"hi"}]}`, map[string]string{"api-key": "azure-job-key"})
	v1Err := wantOpenAIError(t, "/v1 refusal", v1Resp, v1Body, 401, v1ErrType(t, v1Body), "401")
	if e := wantOpenAIError(t, "deployment not allowed", resp, b, 401, v1Err.Type, "401"); e.Message != v1Err.Message {
		t.Errorf("deployment refusal %q, /v1's %q", e.Message, v1Err.Message)
	}
	// The allowed one passes with the same key.
	if resp, b := do2(t, "POST", hs.URL+"/openai/deployments/up%2Fok/chat/completions", "", `{"messages":[{"role":"user","content":"hi"}]}`, map[string]string{"api-key": "azure-job-key"}); resp.StatusCode != 200 {
		t.Fatalf("allowed deployment: %d %s", resp.StatusCode, b)
	}

	resp, b = do2(t, "POST", hs.URL+"/openai/deployments/chat/chat/completions", "", `{"temperature":5,"messages":[{"role":"user","content":"hi"}]}`, hdr)
	if e := wantOpenAIError(t, "bad temperature", resp, b, 400, "invalid_request_error", ""); e.Param == nil || *e.Param != "temperature" {
		t.Errorf("bad temperature: %s", b)
	}
	resp, b = do2(t, "POST", hs.URL+"/openai/deployments/chat/chat/completions", "", `{"messages":`, hdr)
	wantOpenAIError(t, "malformed", resp, b, 400, "invalid_request_error", "")
}

// v1ErrType is the type of the OpenAI error in b.
func v1ErrType(t *testing.T, b []byte) string {
	t.Helper()
	var eb completions.OpenAIErrorBody
	if err := json.Unmarshal(b, &eb); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return eb.Error.Type
}

// TestAzureDeploymentStream: a streamed request through the deployment route is OpenAI's
// stream of the path's model.
func TestAzureDeploymentStream(t *testing.T) {
	hs, _, _ := deploymentsServer(t)
	resp, b := do2(t, "POST", hs.URL+"/openai/deployments/chat/chat/completions?api-version=2024-10-21", "",
		`{"stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`, map[string]string{"api-key": testKey})
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("%d %q %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	evs := readSSE(t, strings.NewReader(string(b)))
	if len(evs) == 0 || evs[len(evs)-1][1] != "[DONE]" {
		t.Fatalf("stream: %s", b)
	}
	var text strings.Builder
	usage := false
	for _, e := range evs[:len(evs)-1] {
		var c completions.OpenAIChunk
		if err := json.Unmarshal([]byte(e[1]), &c); err != nil || c.Object != "chat.completion.chunk" {
			t.Fatalf("chunk %s: %v", e[1], err)
		}
		for _, ch := range c.Choices {
			text.WriteString(ch.Delta.Content)
		}
		usage = usage || c.Usage != nil
	}
	if text.String() != "Hello from ok" || !usage {
		t.Fatalf("text %q, usage chunk %v", text.String(), usage)
	}
}

// TestAzureSDKShape calls the deployment route as openai-go's azure package does:
// azure.WithEndpoint(endpoint, apiVersion) is the base URL {endpoint}/openai/, the
// api-version query parameter and a middleware moving the body's model into the path
// (/openai/deployments/{model}/chat/completions); azure.WithAPIKey is the Api-Key header.
// The azure package itself needs github.com/Azure/azure-sdk-for-go/sdk/azcore, which this
// module does not depend on, so its three options are spelled out here as it applies them.
func TestAzureSDKShape(t *testing.T) {
	hs, _, _ := deploymentsServer(t)
	t.Setenv("OPENAI_API_KEY", "")
	os.Unsetenv("OPENAI_API_KEY") // no Authorization header: the key goes in Api-Key only
	var paths []string
	azureDeployment := option.WithMiddleware(func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		if r.URL.Path == "/openai/chat/completions" || r.URL.Path == "/openai/completions" {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				return nil, err
			}
			r.Body = io.NopCloser(strings.NewReader(string(body)))
			var v struct {
				Model string `json:"model"`
			}
			if err := json.Unmarshal(body, &v); err != nil {
				return nil, err
			}
			r.URL.Path = strings.Replace(r.URL.Path, "/openai/", "/openai/deployments/"+url.PathEscape(v.Model)+"/", 1)
		}
		paths = append(paths, r.URL.Path)
		if r.Header.Get("Authorization") != "" {
			t.Errorf("Authorization sent: %q", r.Header.Get("Authorization"))
		}
		return next(r)
	})
	client := openai.NewClient(option.WithBaseURL(hs.URL+"/openai/"), option.WithQueryAdd("api-version", "2024-10-21"),
		azureDeployment, option.WithHeader("Api-Key", testKey), option.WithMaxRetries(0))
	ctx := context.Background()
	c, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "chat",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Choices) != 1 || c.Choices[0].Message.Content != "Hello from ok" {
		t.Fatalf("completion: %+v", c)
	}
	st := client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{Model: "chat",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}})
	var text strings.Builder
	for st.Next() {
		for _, ch := range st.Current().Choices {
			text.WriteString(ch.Delta.Content)
		}
	}
	if err := st.Err(); err != nil || text.String() != "Hello from ok" {
		t.Fatalf("stream %q: %v", text.String(), err)
	}
	_, err = client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "nowhere",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}})
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 404 || apiErr.Code != "model_not_found" || !strings.Contains(apiErr.Message, "nowhere") {
		t.Fatalf("unknown deployment: %v", err)
	}
	if len(paths) != 3 || paths[0] != "/openai/deployments/chat/chat/completions" {
		t.Fatalf("paths %v", paths)
	}
}

// TestAzureDeploymentAudio: Azure's SDKs send transcriptions (a multipart form) and speech
// under the deployment too; the path's model replaces the form's and the body's.
func TestAzureDeploymentAudio(t *testing.T) {
	hs, _, up := audioServer(t)
	body, ctype := audioForm(t, []byte("ID3audio"), "model", "tts-1")
	req, _ := http.NewRequest("POST", hs.URL+"/openai/deployments/whisper-1/audio/transcriptions?api-version=2024-10-21", body)
	req.Header.Set("Content-Type", ctype)
	req.Header.Set("Api-Key", testKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("X-Switchyard-Model") != "openai/whisper-1" {
		t.Fatalf("transcription: %d %s %s", resp.StatusCode, resp.Header.Get("X-Switchyard-Model"), b)
	}
	up.mu.Lock()
	sent := up.form["model"]
	up.mu.Unlock()
	if len(sent) != 1 || sent[0] != "whisper-1" {
		t.Fatalf("upstream form model %v", sent)
	}

	resp, b = do2(t, "POST", hs.URL+"/openai/deployments/tts-1/audio/speech?api-version=2024-10-21", "", `{"model":"whisper-1","input":"Hi","voice":"alloy"}`, map[string]string{"api-key": testKey})
	if resp.StatusCode != 200 || string(b) != "ID3Hi|end\n" || resp.Header.Get("X-Switchyard-Model") != "openai/tts-1" {
		t.Fatalf("speech: %d %s %q", resp.StatusCode, resp.Header.Get("X-Switchyard-Model"), b)
	}
}

// TestDeploymentRoutesInOpenAPI: the deployment and engine routes are documented as their
// /v1 routes are, with the path's wildcard, api-version and api-key; the token counter too.
func TestDeploymentRoutesInOpenAPI(t *testing.T) {
	hs, _, _ := deploymentsServer(t)
	resp, err := http.Get(hs.URL + "/api/v1/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	type param struct {
		Name string `json:"name"`
		In   string `json:"in"`
	}
	var doc struct {
		Paths map[string]map[string]struct {
			Parameters  []param `json:"parameters"`
			RequestBody struct {
				Content map[string]json.RawMessage `json:"content"`
			} `json:"requestBody"`
			Responses map[string]json.RawMessage `json:"responses"`
		} `json:"paths"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	for _, d := range deploymentRoutes {
		op, ok := doc.Paths[d.path]["post"]
		if !ok {
			t.Errorf("%s undocumented", d.path)
			continue
		}
		v1 := doc.Paths[d.v1]["post"]
		has := map[param]bool{}
		for _, p := range op.Parameters {
			has[p] = true
		}
		if !has[param{d.wildcard, "path"}] || !has[param{"api-version", "query"}] || !has[param{"api-key", "header"}] {
			t.Errorf("%s parameters %v", d.path, op.Parameters)
		}
		if len(op.RequestBody.Content) == 0 || mustJSON(t, op.RequestBody.Content) != mustJSON(t, v1.RequestBody.Content) {
			t.Errorf("%s body differs from %s's", d.path, d.v1)
		}
		if !strings.Contains(string(op.Responses["401"]), "OpenAIError") {
			t.Errorf("%s 401 not in OpenAI's envelope: %s", d.path, op.Responses["401"])
		}
	}
	tc, ok := doc.Paths[tokenCounterPath]["post"]
	if !ok || tc.RequestBody.Content["application/json"] == nil || !strings.Contains(string(tc.Responses["200"]), "total_tokens") {
		t.Errorf("token counter: %+v", tc)
	}
}
