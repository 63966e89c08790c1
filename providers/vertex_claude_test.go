package providers_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// claudeCall is one request the fake Vertex AI received.
type claudeCall struct {
	method, path, auth, beta, version string
	body                              map[string]any
}

// fakeVertexClaude is Vertex AI's publishers/anthropic endpoint: it records each request and
// answers with status, contentType and body.
type fakeVertexClaude struct {
	srv   *httptest.Server
	mu    sync.Mutex
	calls []claudeCall

	status            int
	contentType, body string
}

func newFakeVertexClaude(t *testing.T, status int, contentType, body string) *fakeVertexClaude {
	f := &fakeVertexClaude{status: status, contentType: contentType, body: body}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		c := claudeCall{method: r.Method, path: r.URL.Path, auth: r.Header.Get("Authorization"),
			beta: r.Header.Get("Anthropic-Beta"), version: r.Header.Get("Anthropic-Version")}
		if err := json.Unmarshal(raw, &c.body); err != nil {
			t.Errorf("body %q: %v", raw, err)
		}
		f.mu.Lock()
		f.calls = append(f.calls, c)
		f.mu.Unlock()
		w.Header().Set("Content-Type", f.contentType)
		w.WriteHeader(f.status)
		io.WriteString(w, f.body)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeVertexClaude) recorded() []claudeCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

func fixture(t *testing.T, name string) string {
	b, err := os.ReadFile("testdata/anthropic/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// vertexClaude is a Vertex adapter for project p in us-east5 at f.
func vertexClaude(t *testing.T, f *fakeVertexClaude) *providers.Vertex {
	v, err := providers.NewVertex(providers.VertexConfig{Config: providers.Config{BaseURL: f.srv.URL},
		Project: "p", Location: "us-east5", AccessToken: "ya29.fixed"})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

var vcWeatherTool = providers.Tool{Name: "get_weather", Description: "Weather of a place",
	Parameters: json.RawMessage(`{"type":"object","properties":{"location":{"type":"string"}},"required":["location"]}`)}

// A whole answer: rawPredict under publishers/anthropic with the model (its @date kept) in
// the URL, the Bearer, Anthropic's body without model and with anthropic_version, and the
// answer (text, a tool call, usage) read as the Anthropic adapter reads it.
func TestVertexClaudeComplete(t *testing.T) {
	f := newFakeVertexClaude(t, 200, "application/json", fixture(t, "docs-tool_use_response.json"))
	v := vertexClaude(t, f)
	req := &providers.Request{Model: "claude-sonnet-4@20250514", MaxTokens: 500, Tools: []providers.Tool{vcWeatherTool},
		Messages: []providers.Message{{Role: "system", Content: "Be brief."}, {Role: "user", Content: "Weather in SF?"}}}
	if err := providers.Check(v, req.Model, req); err != nil {
		t.Fatal(err)
	}
	resp, err := v.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.FinishReason != "tool_calls" || len(resp.ToolCalls) != 1 || resp.ToolCalls[0].Name != "get_weather" ||
		!strings.Contains(resp.ToolCalls[0].Arguments, "San Francisco") || !strings.Contains(resp.Text, "San Francisco") {
		t.Errorf("response %+v", resp)
	}
	if resp.Usage.PromptTokens != 384 || resp.Usage.CompletionTokens != 92 {
		t.Errorf("usage %+v", resp.Usage)
	}
	calls := f.recorded()
	if len(calls) != 1 {
		t.Fatalf("%d calls", len(calls))
	}
	c := calls[0]
	if want := "/v1/projects/p/locations/us-east5/publishers/anthropic/models/claude-sonnet-4@20250514:rawPredict"; c.method != "POST" || c.path != want {
		t.Errorf("%s %s, want POST %s", c.method, c.path, want)
	}
	if c.auth != "Bearer ya29.fixed" {
		t.Errorf("Authorization %q", c.auth)
	}
	b := c.body
	if _, ok := b["model"]; ok {
		t.Errorf("body has a model: %v", b["model"])
	}
	if b["anthropic_version"] != providers.VertexAnthropicVersion || providers.VertexAnthropicVersion != "vertex-2023-10-16" {
		t.Errorf("anthropic_version %v", b["anthropic_version"])
	}
	if b["system"] != "Be brief." || b["max_tokens"] != 500.0 || b["stream"] != nil || b["anthropic_beta"] != nil {
		t.Errorf("body %v", b)
	}
	msgs, _ := b["messages"].([]any)
	tools, _ := b["tools"].([]any)
	if len(msgs) != 1 || !strings.Contains(toJSON(msgs[0]), `"Weather in SF?"`) || len(tools) != 1 || !strings.Contains(toJSON(tools[0]), `"input_schema"`) {
		t.Errorf("messages %v, tools %v", msgs, tools)
	}
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// A streamed answer: streamRawPredict, "stream": true in the body, Anthropic's SSE events
// read into text, tool-call deltas, the finish reason and usage.
func TestVertexClaudeStream(t *testing.T) {
	f := newFakeVertexClaude(t, 200, "text/event-stream", fixture(t, "py-tool_use_response.sse"))
	v := vertexClaude(t, f)
	s, err := v.Stream(context.Background(), &providers.Request{Model: "claude-sonnet-4-5@20250929", Tools: []providers.Tool{vcWeatherTool},
		Messages: []providers.Message{{Role: "user", Content: "Weather in Paris?"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var text, args strings.Builder
	var finish string
	var usage *providers.Usage
	names := 0
	for {
		ch, err := s.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		text.WriteString(ch.Text)
		for _, d := range ch.ToolCalls {
			args.WriteString(d.Arguments)
			if d.Name == "get_weather" {
				names++
			}
		}
		if ch.FinishReason != "" {
			finish, usage = ch.FinishReason, ch.Usage
		}
	}
	if !strings.Contains(text.String(), "weather in Paris") || names != 1 || args.String() != `{"location": "Paris"}` || finish != "tool_calls" {
		t.Errorf("text %q, %d calls, args %q, finish %q", text.String(), names, args.String(), finish)
	}
	if usage == nil || usage.PromptTokens != 377 || usage.CompletionTokens == 0 {
		t.Errorf("usage %+v", usage)
	}
	c := f.recorded()[0]
	if want := "/v1/projects/p/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict"; c.path != want {
		t.Errorf("path %s, want %s", c.path, want)
	}
	if c.body["stream"] != true || c.body["anthropic_version"] != "vertex-2023-10-16" || c.body["model"] != nil || c.auth != "Bearer ya29.fixed" {
		t.Errorf("body %v, auth %q", c.body, c.auth)
	}
}

// hostRecorder answers every request with a Claude answer and records its URL: the
// adapter's default hosts, which a test cannot reach.
type hostRecorder struct {
	mu   sync.Mutex
	urls []string
}

func (h *hostRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	h.mu.Lock()
	h.urls = append(h.urls, r.URL.String())
	h.mu.Unlock()
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}}, Request: r,
		Body: io.NopCloser(strings.NewReader(`{"type":"message","role":"assistant","model":"claude-opus-4-1-20250805","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":3,"output_tokens":1}}`))}, nil
}

// The location picks the host: {location}-aiplatform.googleapis.com, and
// aiplatform.googleapis.com for global, as Anthropic's SDK has them.
func TestVertexClaudeHosts(t *testing.T) {
	for loc, want := range map[string]string{
		"global":       "https://aiplatform.googleapis.com/v1/projects/my-proj/locations/global/publishers/anthropic/models/claude-opus-4-1@20250805:rawPredict",
		"europe-west1": "https://europe-west1-aiplatform.googleapis.com/v1/projects/my-proj/locations/europe-west1/publishers/anthropic/models/claude-opus-4-1@20250805:rawPredict",
		"us-east5":     "https://us-east5-aiplatform.googleapis.com/v1/projects/my-proj/locations/us-east5/publishers/anthropic/models/claude-opus-4-1@20250805:rawPredict",
	} {
		rec := &hostRecorder{}
		v, err := providers.NewVertex(providers.VertexConfig{Config: providers.Config{HTTPClient: &http.Client{Transport: rec}},
			Project: "my-proj", Location: loc, AccessToken: "ya29.fixed"})
		if err != nil {
			t.Fatal(err)
		}
		resp, err := v.Complete(context.Background(), vertexHello("claude-opus-4-1@20250805"))
		if err != nil || resp.Text != "ok" {
			t.Fatalf("%s: %v %+v", loc, err, resp)
		}
		if len(rec.urls) != 1 || rec.urls[0] != want {
			t.Errorf("%s: %v, want %s", loc, rec.urls, want)
		}
	}
}

// Vertex AI's errors, in Google's shape (also as a one-element array) or Anthropic's, map
// to the kinds the router acts on, with their message.
func TestVertexClaudeErrors(t *testing.T) {
	for _, tc := range []struct {
		status int
		body   string
		kind   providers.ErrorKind
		msg    string
	}{
		{401, `{"error":{"code":401,"message":"Request had invalid authentication credentials.","status":"UNAUTHENTICATED"}}`, providers.KindAuth, "invalid authentication"},
		{403, `{"error":{"code":403,"message":"Permission 'aiplatform.endpoints.predict' denied","status":"PERMISSION_DENIED"}}`, providers.KindAuth, "aiplatform.endpoints.predict"},
		{429, `{"error":{"code":429,"message":"Quota exceeded for aiplatform.googleapis.com/online_prediction_requests_per_base_model","status":"RESOURCE_EXHAUSTED"}}`, providers.KindRateLimited, "Quota exceeded"},
		{429, `[{"error":{"code":429,"message":"Resource exhausted, please try again later.","status":"RESOURCE_EXHAUSTED"}}]`, providers.KindRateLimited, "Resource exhausted"},
		{529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, providers.KindOverloaded, "Overloaded"},
		{404, `{"error":{"code":404,"message":"Publisher Model projects/p/locations/us-east5/publishers/anthropic/models/claude-x was not found","status":"NOT_FOUND"}}`, providers.KindModelNotFound, "was not found"},
		{400, `{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: must be at most 64000"}}`, providers.KindBadRequest, "max_tokens"},
	} {
		f := newFakeVertexClaude(t, tc.status, "application/json", tc.body)
		v := vertexClaude(t, f)
		_, err := v.Complete(context.Background(), vertexHello("claude-sonnet-4@20250514"))
		var pe *providers.Error
		if !errors.As(err, &pe) || pe.Kind != tc.kind || pe.StatusCode != tc.status || !strings.Contains(pe.Message, tc.msg) {
			t.Errorf("%d %s: %v (%+v)", tc.status, tc.body, err, pe)
		}
		_, err = v.Stream(context.Background(), vertexHello("claude-sonnet-4@20250514"))
		if providers.KindOf(err) != tc.kind {
			t.Errorf("stream %d: %v", tc.status, err)
		}
	}
	// An error event mid-stream, in Anthropic's shape.
	f := newFakeVertexClaude(t, 200, "text/event-stream", "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":5}}}\n\n"+
		"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n")
	s, err := vertexClaude(t, f).Stream(context.Background(), vertexHello("claude-sonnet-4@20250514"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for err == nil {
		_, err = s.Recv()
	}
	if providers.KindOf(err) != providers.KindOverloaded {
		t.Errorf("mid-stream error: %v", err)
	}
}

// The anthropic-beta values the adapter needs (one-hour cache breakpoints, interleaved
// thinking) go both as the header and as the body's anthropic_beta; prompt caching's
// cache_control and thinking carry over.
func TestVertexClaudeBetas(t *testing.T) {
	f := newFakeVertexClaude(t, 200, "application/json", fixture(t, "docs-tool_use_response.json"))
	v := vertexClaude(t, f)
	req := &providers.Request{Model: "claude-opus-4-1@20250805", MaxTokens: 8000, PromptCache: true, PromptCacheTTL: "1h",
		Thinking: &providers.Thinking{BudgetTokens: 2000, Interleaved: true}, Tools: []providers.Tool{vcWeatherTool},
		Messages: []providers.Message{{Role: "system", Content: "Long instructions."}, {Role: "user", Content: "hi"}}}
	if _, err := v.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	c := f.recorded()[0]
	want := []string{providers.AnthropicInterleavedThinkingBeta, providers.AnthropicExtendedCacheTTLBeta}
	if c.beta != strings.Join(want, ",") {
		t.Errorf("anthropic-beta header %q", c.beta)
	}
	if got := toJSON(c.body["anthropic_beta"]); got != toJSON(want) {
		t.Errorf("anthropic_beta %s", got)
	}
	if th := toJSON(c.body["thinking"]); th != `{"budget_tokens":2000,"type":"enabled"}` {
		t.Errorf("thinking %s", th)
	}
	if !strings.Contains(toJSON(c.body["system"]), `"cache_control":{"ttl":"1h","type":"ephemeral"}`) {
		t.Errorf("system %s", toJSON(c.body["system"]))
	}
}

// Without a project, Claude on Vertex is not configured, like Gemini: nothing is sent.
func TestVertexClaudeNotConfigured(t *testing.T) {
	f := newFakeVertexClaude(t, 200, "application/json", "{}")
	v, err := providers.NewVertex(providers.VertexConfig{Config: providers.Config{BaseURL: f.srv.URL}, AccessToken: "ya29.fixed"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = v.Complete(context.Background(), vertexHello("claude-sonnet-4@20250514"))
	if !errors.Is(err, providers.ErrNotConfigured) || !strings.Contains(err.Error(), "VERTEXAI_PROJECT") || len(f.recorded()) != 0 {
		t.Errorf("err %v, %d calls", err, len(f.recorded()))
	}
}

// Llama and the other partner models are still refused before any call, by Complete too.
func TestVertexClaudeOthersRefused(t *testing.T) {
	f := newFakeVertexClaude(t, 200, "application/json", "{}")
	_, err := vertexClaude(t, f).Complete(context.Background(), vertexHello("meta/llama-3.1-405b-instruct-maas"))
	if providers.KindOf(err) != providers.KindBadRequest || !strings.Contains(err.Error(), "llama") || len(f.recorded()) != 0 {
		t.Errorf("err %v, %d calls", err, len(f.recorded()))
	}
}

// LiteLLM's names of Claude on Vertex AI price from the catalogue's vertex_ai entries,
// with or without @date; Claude 3.5 Sonnet v2 at Claude 3.5 Sonnet's rates.
func TestVertexClaudePrices(t *testing.T) {
	cat := providers.DefaultCatalog()
	for model, want := range map[string][2]float64{
		"vertex_ai/claude-sonnet-4@20250514":      {3e-6, 15e-6},
		"vertex_ai/claude-opus-4-1@20250805":      {15e-6, 75e-6},
		"vertex_ai/claude-3-5-haiku@20241022":     {1e-6, 5e-6},
		"vertex_ai/claude-haiku-4-5@20251001":     {1e-6, 5e-6},
		"vertex_ai/claude-sonnet-4-6":             {3e-6, 15e-6},
		"vertex_ai/claude-3-5-sonnet-v2@20241022": {3e-6, 15e-6},
		"vertex_ai/claude-3-5-sonnet-v2":          {3e-6, 15e-6},
	} {
		p, ok := cat.Lookup(model)
		if !ok || !p.Known || p.InputPerToken != want[0] || p.OutputPerToken != want[1] || !strings.HasPrefix(p.Provider, "vertex_ai") {
			t.Errorf("%s: %v %+v", model, ok, p)
		}
	}
}
