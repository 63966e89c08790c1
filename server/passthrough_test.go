package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	anthropicoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go"
	oaioption "github.com/openai/openai-go/option"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/usagelog"
)

// passThroughCall is what the scripted upstream got.
type passThroughCall struct {
	method, path, query string
	header              http.Header
	body                string
}

// scriptedProviders is a scripted upstream speaking Anthropic's, Gemini's and OpenAI's
// APIs (a fake for tests): each answers with fixed usage, streamed when asked; the model
// request with "hold" in its body streams its first event and then waits for the caller to go away.
type scriptedProviders struct {
	mu        sync.Mutex
	calls     []passThroughCall
	cancelled chan struct{} // closed when the held stream's request ended
}

func (u *scriptedProviders) last() passThroughCall {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.calls) == 0 {
		return passThroughCall{}
	}
	return u.calls[len(u.calls)-1]
}

func (u *scriptedProviders) count() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.calls)
}

func (u *scriptedProviders) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	u.mu.Lock()
	u.calls = append(u.calls, passThroughCall{method: r.Method, path: r.URL.Path, query: r.URL.RawQuery, header: r.Header.Clone(), body: string(b)})
	u.mu.Unlock()
	var req struct {
		Model  string `json:"model"`
		Stream bool   `json:"stream"`
	}
	json.Unmarshal(b, &req)
	sse := func(events ...string) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("X-Request-Id", "upstream-id")
		for _, e := range events {
			io.WriteString(w, e+"\n\n")
			w.(http.Flusher).Flush()
		}
	}
	switch {
	case r.URL.Path == "/v1/messages" && strings.Contains(string(b), "hold"):
		sse(`event: message_start` + "\n" + `data: {"type":"message_start","message":{"model":"claude-haiku-4-5-20251001","usage":{"input_tokens":10,"output_tokens":1}}}`)
		<-r.Context().Done()
		close(u.cancelled)
	case r.URL.Path == "/v1/messages" && req.Model == "claude-haiku-4-5-20251001" && strings.Contains(string(b), "overloaded"):
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(529)
		io.WriteString(w, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
	case r.URL.Path == "/v1/messages" && req.Stream:
		sse(`event: message_start`+"\n"+`data: {"type":"message_start","message":{"id":"msg_1","model":"claude-haiku-4-5-20251001","usage":{"input_tokens":10,"output_tokens":1}}}`,
			`event: content_block_start`+"\n"+`data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
			`event: content_block_delta`+"\n"+`data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}`,
			`event: content_block_stop`+"\n"+`data: {"type":"content_block_stop","index":0}`,
			`event: message_delta`+"\n"+`data: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":5}}`,
			`event: message_stop`+"\n"+`data: {"type":"message_stop"}`)
	case r.URL.Path == "/v1/messages":
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-haiku-4-5-20251001","content":[{"type":"text","text":"Hi"}],"stop_reason":"end_turn","usage":{"input_tokens":10,"output_tokens":5}}`)
	case strings.HasSuffix(r.URL.Path, ":streamGenerateContent"):
		sse(`data: {"candidates":[{"content":{"role":"model","parts":[{"text":"H"}]}}],"usageMetadata":{"promptTokenCount":8,"candidatesTokenCount":1},"modelVersion":"gemini-2.0-flash"}`,
			`data: {"candidates":[{"content":{"role":"model","parts":[{"text":"i"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":8,"candidatesTokenCount":4},"modelVersion":"gemini-2.0-flash"}`)
	case strings.HasSuffix(r.URL.Path, ":generateContent"):
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"candidates":[{"content":{"role":"model","parts":[{"text":"Hi"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":8,"candidatesTokenCount":4,"totalTokenCount":12},"modelVersion":"gemini-2.0-flash"}`)
	case r.URL.Path == "/v1/chat/completions" && req.Stream && strings.Contains(string(b), "no usage"):
		// OpenAI's default: a stream without stream_options.include_usage reports no usage.
		sse(`data: {"id":"c1","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`,
			`data: {"id":"c1","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"Hello"}}]}`,
			`data: {"id":"c1","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":" there, how are you today?"}}]}`,
			`data: {"id":"c1","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":""}}]}}]}`,
			`data: {"id":"c1","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]}}]}`,
			`data: {"id":"c1","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"Paris\"}"}}]}}]}`,
			`data: {"id":"c1","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
			`data: [DONE]`)
	case r.URL.Path == "/v1/chat/completions" && strings.Contains(string(b), "no usage"):
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"c1","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"Hello there, how are you today?"},"finish_reason":"stop"}]}`)
	case r.URL.Path == "/v1/chat/completions" && req.Stream:
		sse(`data: {"id":"c1","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"Hi"}}],"usage":null}`,
			`data: {"id":"c1","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[],"usage":{"prompt_tokens":7,"completion_tokens":3,"total_tokens":10}}`,
			`data: [DONE]`)
	case r.URL.Path == "/v1/chat/completions":
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Request-Id", "upstream-id")
		io.WriteString(w, `{"id":"c1","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"Hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":7,"completion_tokens":3,"total_tokens":10}}`)
	default:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(404)
		io.WriteString(w, `{"error":"no such path"}`)
	}
}

// passThroughServer is a server whose anthropic, gemini and openai providers are a
// scripted upstream with the server's own keys; extra providers are registered too.
func passThroughServer(t *testing.T, extra ...providers.Provider) (*httptest.Server, *Server, *scriptedProviders) {
	t.Helper()
	up := &scriptedProviders{cancelled: make(chan struct{})}
	ups := httptest.NewServer(up)
	t.Cleanup(ups.Close)
	reg := providers.NewRegistry(
		providers.NewAnthropic(providers.Config{Name: "anthropic", BaseURL: ups.URL, APIKey: "server-anthropic-key"}),
		providers.NewGemini(providers.Config{Name: "gemini", BaseURL: ups.URL, APIKey: "server-gemini-key"}),
		providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: ups.URL + "/v1", APIKey: "server-openai-key"}))
	for _, p := range extra {
		reg.Register(p)
	}
	hs, s := passThroughServerOver(t, reg)
	return hs, s, up
}

// passThroughServerOver is a server with the gateway and the usage report over the
// providers of reg, its bodies bounded to 4 KiB.
func passThroughServerOver(t *testing.T, reg *providers.Registry) (*httptest.Server, *Server) {
	t.Helper()
	st := newTestStore(t)
	rec := usagelog.New(usagelog.Options{})
	g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog(), Store: st, Observer: rec})
	if err != nil {
		t.Fatal(err)
	}
	s := testServer(t, Config{Store: st, MaxBodyBytes: 4096}, nil)
	for _, o := range []Option{Completions(g), Usage(rec)} {
		if err := o(s); err != nil {
			t.Fatal(err)
		}
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	return hs, s
}

// sendPassThrough sends body to path with headers and returns the answer read whole.
func sendPassThrough(t *testing.T, method, url, body string, header map[string]string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// TestPassThroughForwardsAndBills: each provider's pass-through, streamed and not, reaches
// the upstream with the body unchanged, the server's credential and none of the caller's,
// the provider's own headers kept; the answer comes back unchanged; the usage it reports is
// billed to the virtual key and recorded in the request history at the catalogue's price.
func TestPassThroughForwardsAndBills(t *testing.T) {
	hs, s, up := passThroughServer(t)
	vk := issue(t, s, `{"name":"sdk","models":["anthropic/claude-haiku-4-5-20251001","gemini/gemini-2.0-flash","openai/gpt-4o-mini"],"max_budget_usd":5}`)
	cat := providers.DefaultCatalog()
	price := func(model string, in, out int) float64 {
		return cat.Cost(model, providers.Usage{PromptTokens: in, CompletionTokens: out}).TotalUSD
	}
	anthropicBody := `{"model":"claude-haiku-4-5-20251001","max_tokens":16,"messages":[{"role":"user","content":"hi"}]}`
	anthropicStream := `{"model":"claude-haiku-4-5-20251001","max_tokens":16,"stream":true,"messages":[{"role":"user","content":"hi"}]}`
	geminiBody := `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`
	openaiBody := `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`
	openaiStream := `{"model":"gpt-4o-mini","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`
	cases := []struct {
		name, path, body string
		header           map[string]string
		upPath, upQuery  string
		credHeader, cred string
		callerHeaders    []string // caller credentials that must not reach the upstream
		want             string   // in the answer
		cost             float64
		stream           bool
	}{
		{"anthropic", "/anthropic/v1/messages", anthropicBody,
			map[string]string{"x-api-key": vk.Key, "anthropic-version": "2023-06-01", "anthropic-beta": "prompt-caching-2024-07-31", "Connection": "X-Hop", "X-Hop": "1"},
			"/v1/messages", "", "X-Api-Key", "server-anthropic-key", nil, `"usage":{"input_tokens":10,"output_tokens":5}`, price("anthropic/claude-haiku-4-5-20251001", 10, 5), false},
		{"anthropic stream", "/anthropic/v1/messages", anthropicStream,
			map[string]string{"Authorization": "Bearer " + vk.Key, "anthropic-version": "2023-06-01"},
			"/v1/messages", "", "X-Api-Key", "server-anthropic-key", []string{"Authorization"}, `"type":"message_stop"`, price("anthropic/claude-haiku-4-5-20251001", 10, 5), true},
		{"gemini", "/gemini/v1beta/models/gemini-2.0-flash:generateContent", geminiBody,
			map[string]string{"x-goog-api-key": vk.Key},
			"/v1beta/models/gemini-2.0-flash:generateContent", "", "X-Goog-Api-Key", "server-gemini-key", nil, `"usageMetadata"`, price("gemini/gemini-2.0-flash", 8, 4), false},
		{"gemini stream", "/gemini/v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse&key=" + vk.Key, geminiBody, nil,
			"/v1beta/models/gemini-2.0-flash:streamGenerateContent", "alt=sse", "X-Goog-Api-Key", "server-gemini-key", []string{"Authorization"}, `"candidatesTokenCount":4`, price("gemini/gemini-2.0-flash", 8, 4), true},
		{"openai", "/openai/v1/chat/completions", openaiBody,
			map[string]string{"Authorization": "Bearer " + vk.Key, "OpenAI-Beta": "assistants=v2"},
			"/v1/chat/completions", "", "Authorization", "Bearer server-openai-key", nil, `"total_tokens":10`, price("openai/gpt-4o-mini", 7, 3), false},
		{"openai stream", "/openai/v1/chat/completions", openaiStream,
			map[string]string{"Authorization": "Bearer " + vk.Key},
			"/v1/chat/completions", "", "Authorization", "Bearer server-openai-key", nil, `data: [DONE]`, price("openai/gpt-4o-mini", 7, 3), true},
	}
	spent := 0.0
	for _, c := range cases {
		resp, answer := sendPassThrough(t, "POST", hs.URL+c.path, c.body, c.header)
		if resp.StatusCode != 200 || !strings.Contains(answer, c.want) {
			t.Fatalf("%s: %d %s", c.name, resp.StatusCode, answer)
		}
		if c.stream != strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			t.Errorf("%s: Content-Type %q", c.name, resp.Header.Get("Content-Type"))
		}
		if got := resp.Header.Get("X-Request-Id"); got == "upstream-id" || got == "" {
			t.Errorf("%s: X-Request-Id %q, want the server's own", c.name, got)
		}
		got := up.last()
		if got.path != c.upPath || got.query != c.upQuery || got.body != c.body {
			t.Errorf("%s: upstream got %s ?%s %s", c.name, got.path, got.query, got.body)
		}
		if v := got.header.Get(c.credHeader); v != c.cred {
			t.Errorf("%s: upstream %s = %q, want the server's credential", c.name, c.credHeader, v)
		}
		for k, vs := range got.header {
			for _, v := range vs {
				if strings.Contains(v, vk.Key) {
					t.Errorf("%s: the caller's key reached the upstream in %s", c.name, k)
				}
			}
		}
		for _, h := range c.callerHeaders {
			if got.header.Get(h) != "" {
				t.Errorf("%s: upstream got the caller's %s", c.name, h)
			}
		}
		for k, v := range c.header {
			switch strings.ToLower(k) {
			case "anthropic-version", "anthropic-beta", "openai-beta":
				if got.header.Get(k) != v {
					t.Errorf("%s: upstream %s = %q, want %q", c.name, k, got.header.Get(k), v)
				}
			case "connection", "x-hop":
				if got.header.Get("X-Hop") != "" {
					t.Errorf("%s: a header named by Connection reached the upstream", c.name)
				}
			}
		}
		spent += c.cost
		info := keyInfoOf(t, s, testKey, "/api/v1/keys/"+vk.ID)
		if math.Abs(info.Spend.CostUSD-spent) > 1e-12 || c.cost <= 0 {
			t.Errorf("%s: key spend %v, want %v", c.name, info.Spend.CostUSD, spent)
		}
	}
	r := do(t, s, "GET", "/api/v1/usage/requests", vk.Key, "")
	var usage struct {
		Data []usagelog.Request `json:"data"`
	}
	if err := json.Unmarshal([]byte(r.raw), &usage); err != nil || r.status != 200 {
		t.Fatalf("usage: %d %s", r.status, r.raw)
	}
	if len(usage.Data) != len(cases) {
		t.Fatalf("%d requests recorded, want %d: %s", len(usage.Data), len(cases), r.raw)
	}
	for _, q := range usage.Data {
		if q.Operation != completions.OperationPassThrough || q.Outcome != "ok" || !q.PriceKnown || q.CostUSD <= 0 || q.PromptTokens == 0 {
			t.Errorf("recorded %+v", q)
		}
	}
}

// TestPassThroughRefusals: a model outside the key's list (body or Gemini's path), a
// request naming no model from a key held to models, a spent or blocked key and a provider
// not configured are refused in the provider's envelope before any upstream call; an
// upstream's error status comes back unchanged.
func TestPassThroughRefusals(t *testing.T) {
	hs, s, up := passThroughServer(t)
	vk := issue(t, s, `{"name":"narrow","models":["anthropic/claude-haiku-4-5-20251001"]}`)
	blocked := issue(t, s, `{"name":"blocked","models":["anthropic/claude-haiku-4-5-20251001"]}`)
	if r := do(t, s, "PATCH", "/api/v1/keys/"+blocked.ID, testKey, `{"blocked":true}`); r.status != 200 {
		t.Fatalf("blocking: %d %s", r.status, r.raw)
	}
	spent := issue(t, s, `{"name":"spent","max_budget_usd":0.0000001}`)
	cases := []struct {
		name, path, key, body string
		header                string
		status                int
		want                  string
	}{
		{"anthropic model not allowed", "/anthropic/v1/messages", vk.Key, `{"model":"claude-sonnet-4-20250514","max_tokens":5,"messages":[]}`, "x-api-key", 401, `"authentication_error"`},
		{"gemini path model not allowed", "/gemini/v1beta/models/gemini-2.0-flash:generateContent", vk.Key, `{}`, "x-goog-api-key", 403, `"PERMISSION_DENIED"`},
		{"openai model not allowed", "/openai/v1/chat/completions", vk.Key, `{"model":"gpt-4o-mini","messages":[]}`, "Authorization", 401, `"key_model_access_denied"`},
		{"no model from a restricted key", "/openai/v1/files", vk.Key, ``, "Authorization", 401, `name a model`},
		{"blocked key", "/openai/v1/chat/completions", blocked.Key, `{"model":"gpt-4o-mini","messages":[]}`, "Authorization", 401, ``},
		{"wrong key", "/anthropic/v1/messages", "sy-nope", `{"model":"claude-haiku-4-5-20251001"}`, "x-api-key", 401, `"authentication_error"`},
		{"body over the limit", "/anthropic/v1/messages", vk.Key, `{"model":"claude-haiku-4-5-20251001","pad":"` + strings.Repeat("x", 5000) + `"}`, "x-api-key", 413, `"type":"error"`},
	}
	for _, c := range cases {
		h := map[string]string{c.header: c.key}
		if c.header == "Authorization" {
			h[c.header] = "Bearer " + c.key
		}
		before := up.count()
		resp, b := sendPassThrough(t, "POST", hs.URL+c.path, c.body, h)
		if resp.StatusCode != c.status || !strings.Contains(b, c.want) {
			t.Errorf("%s: %d %s, want %d with %s", c.name, resp.StatusCode, b, c.status, c.want)
		}
		if up.count() != before {
			t.Errorf("%s: the upstream was called", c.name)
		}
	}
	// A blocked key is refused (its model is allowed: the block refuses it).
	resp, b := sendPassThrough(t, "POST", hs.URL+"/anthropic/v1/messages", `{"model":"claude-haiku-4-5-20251001","max_tokens":5,"messages":[]}`, map[string]string{"x-api-key": blocked.Key})
	if resp.StatusCode != 401 || !strings.Contains(b, "Key is blocked") || !strings.Contains(b, `"type":"error"`) {
		t.Errorf("blocked key: %d %s", resp.StatusCode, b)
	}
	// A key whose budget is spent: its first request goes (nothing spent yet), the next is refused.
	body := `{"model":"claude-haiku-4-5-20251001","max_tokens":5,"messages":[]}`
	if resp, b := sendPassThrough(t, "POST", hs.URL+"/anthropic/v1/messages", body, map[string]string{"x-api-key": spent.Key}); resp.StatusCode != 200 {
		t.Fatalf("first request of the budget key: %d %s", resp.StatusCode, b)
	}
	before := up.count()
	resp, b = sendPassThrough(t, "POST", hs.URL+"/anthropic/v1/messages", body, map[string]string{"x-api-key": spent.Key})
	if resp.StatusCode != 429 || !strings.Contains(b, "rate_limit_error") || up.count() != before {
		t.Errorf("spent budget: %d %s", resp.StatusCode, b)
	}
	// The upstream's own error comes back as it is, status and body.
	resp, b = sendPassThrough(t, "POST", hs.URL+"/anthropic/v1/messages", `{"model":"claude-haiku-4-5-20251001","max_tokens":5,"messages":[{"role":"user","content":"overloaded"}]}`, map[string]string{"x-api-key": vk.Key})
	if resp.StatusCode != 529 || b != `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}` {
		t.Errorf("upstream error: %d %s", resp.StatusCode, b)
	}
}

// TestPassThroughUnconfiguredProvider: a provider without a key is a 503 naming it and
// what it needs; a provider not registered at all 404.
func TestPassThroughUnconfiguredProvider(t *testing.T) {
	up := &scriptedProviders{cancelled: make(chan struct{})}
	ups := httptest.NewServer(up)
	t.Cleanup(ups.Close)
	reg := providers.NewRegistry(providers.NewAnthropic(providers.Config{Name: "anthropic", BaseURL: ups.URL, KeyEnv: "ANTHROPIC_API_KEY"}))
	st := newTestStore(t)
	g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog(), Store: st})
	if err != nil {
		t.Fatal(err)
	}
	s := testServer(t, Config{Store: st}, nil)
	if err := Completions(g)(s); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	resp, b := sendPassThrough(t, "POST", hs.URL+"/anthropic/v1/messages", `{"model":"claude-haiku-4-5-20251001"}`, map[string]string{"x-api-key": testKey})
	if resp.StatusCode != 503 || !strings.Contains(b, `provider \"anthropic\"`) || !strings.Contains(b, "ANTHROPIC_API_KEY") || !strings.Contains(b, `"type":"error"`) {
		t.Errorf("unconfigured anthropic: %d %s", resp.StatusCode, b)
	}
	resp, b = sendPassThrough(t, "POST", hs.URL+"/gemini/v1beta/models/gemini-2.0-flash:generateContent", `{}`, map[string]string{"x-goog-api-key": testKey})
	if resp.StatusCode != 404 || !strings.Contains(b, `provider \"gemini\"`) || !strings.Contains(b, `"NOT_FOUND"`) {
		t.Errorf("unregistered gemini: %d %s", resp.StatusCode, b)
	}
	if up.count() != 0 {
		t.Errorf("the upstream was called")
	}
}

// TestPassThroughClientCancel: a client that goes away mid-stream cancels the upstream
// call, and the usage the stream had reported is billed and recorded as cancelled.
func TestPassThroughClientCancel(t *testing.T) {
	hs, s, up := passThroughServer(t)
	vk := issue(t, s, `{"name":"cancel","models":["anthropic/claude-haiku-4-5-20251001"]}`)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", hs.URL+"/anthropic/v1/messages",
		strings.NewReader(`{"model":"claude-haiku-4-5-20251001","max_tokens":5,"stream":true,"messages":[{"role":"user","content":"hold"}]}`))
	req.Header.Set("x-api-key", vk.Key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "event: message_start") {
		t.Fatalf("first event: %q %v", line, err)
	}
	cancel()
	resp.Body.Close()
	select {
	case <-up.cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("the upstream call was not cancelled when the client went away")
	}
	// The record is written once the handler ends, after the upstream's cancellation.
	var last usagelog.Request
	for range 200 {
		r := do(t, s, "GET", "/api/v1/usage/requests", vk.Key, "")
		var usage struct {
			Data []usagelog.Request `json:"data"`
		}
		json.Unmarshal([]byte(r.raw), &usage)
		if len(usage.Data) == 1 {
			last = usage.Data[0]
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if last.Outcome != "cancelled" || last.Operation != completions.OperationPassThrough || last.PromptTokens != 10 {
		t.Errorf("recorded %+v", last)
	}
	info := keyInfoOf(t, s, testKey, "/api/v1/keys/"+vk.ID)
	if info.Spend.Tokens != 11 {
		t.Errorf("key spend %+v, want the 11 tokens reported", info.Spend)
	}
}

// TestPassThroughOfficialSDKs: OpenAI's Go SDK pointed at /openai/v1 and Anthropic's at
// /anthropic, each with a virtual key, get the upstream's answers (whole and streamed),
// which reached it with the server's credential; a model outside the key's list is the
// SDK's 401 (LiteLLM's key_model_access_denied).
func TestPassThroughOfficialSDKs(t *testing.T) {
	hs, s, up := passThroughServer(t)
	vk := issue(t, s, `{"name":"sdk","models":["openai/gpt-4o-mini","anthropic/claude-haiku-4-5-20251001"]}`)
	ctx := context.Background()
	oc := openai.NewClient(oaioption.WithBaseURL(hs.URL+"/openai/v1"), oaioption.WithAPIKey(vk.Key), oaioption.WithMaxRetries(0))
	params := openai.ChatCompletionNewParams{Model: "gpt-4o-mini", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}}
	cc, err := oc.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if len(cc.Choices) != 1 || cc.Choices[0].Message.Content != "Hi" || cc.Usage.TotalTokens != 10 {
		t.Errorf("SDK answer %+v", cc)
	}
	if got := up.last(); got.header.Get("Authorization") != "Bearer server-openai-key" || got.path != "/v1/chat/completions" {
		t.Errorf("upstream got %s %v", got.path, got.header)
	}
	params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	st := oc.Chat.Completions.NewStreaming(ctx, params)
	var acc openai.ChatCompletionAccumulator
	for st.Next() {
		acc.AddChunk(st.Current())
	}
	if err := st.Err(); err != nil || len(acc.Choices) != 1 || acc.Choices[0].Message.Content != "Hi" || acc.Usage.TotalTokens != 10 {
		t.Errorf("SDK stream %+v %v", acc.ChatCompletion, err)
	}
	_, err = oc.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "gpt-4o", Messages: params.Messages})
	var oe *openai.Error
	if !errors.As(err, &oe) || oe.StatusCode != 401 {
		t.Errorf("SDK with a model outside the key's list: %v", err)
	}

	ac := anthropic.NewClient(anthropicoption.WithBaseURL(hs.URL+"/anthropic"), anthropicoption.WithAPIKey(vk.Key), anthropicoption.WithMaxRetries(0))
	mp := anthropic.MessageNewParams{Model: "claude-haiku-4-5-20251001", MaxTokens: 16,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))}}
	msg, err := ac.Messages.New(ctx, mp)
	if err != nil {
		t.Fatal(err)
	}
	if len(msg.Content) != 1 || msg.Content[0].Text != "Hi" || msg.Usage.InputTokens != 10 || msg.Usage.OutputTokens != 5 {
		t.Errorf("Anthropic SDK answer %+v", msg)
	}
	if got := up.last(); got.header.Get("X-Api-Key") != "server-anthropic-key" || got.header.Get("Anthropic-Version") == "" {
		t.Errorf("upstream got %v", got.header)
	}
	as := ac.Messages.NewStreaming(ctx, mp)
	var am anthropic.Message
	for as.Next() {
		if err := am.Accumulate(as.Current()); err != nil {
			t.Fatal(err)
		}
	}
	if err := as.Err(); err != nil || len(am.Content) != 1 || am.Content[0].Text != "Hi" || am.Usage.OutputTokens != 5 {
		t.Errorf("Anthropic SDK stream %+v %v", am, err)
	}
	info := keyInfoOf(t, s, testKey, "/api/v1/keys/"+vk.ID)
	if info.Spend.Requests != 4 || info.Spend.Tokens != 2*10+2*15 {
		t.Errorf("key spend %+v, want 4 requests of 50 tokens", info.Spend)
	}
}

// TestPassThroughMoreSpecificRoutesWin: a route registered under /openai/ with a method
// or without (Azure-style deployments) does not conflict with the pass-through's
// method-less pattern and is served instead of it.
func TestPassThroughMoreSpecificRoutesWin(t *testing.T) {
	hs, s, up := passThroughServer(t)
	for _, rt := range []Route{
		{Method: "POST", Path: "/openai/deployments/{deployment}/probe", Summary: "test route", Tags: []string{"test"}},
		{Method: "GET", AnyMethod: true, Path: "/openai/deployments/{deployment}/models", Summary: "test route", Tags: []string{"test"}},
	} {
		s.Handle(rt, func(w http.ResponseWriter, r *http.Request) error {
			writeJSON(w, http.StatusOK, map[string]string{"deployment": r.PathValue("deployment")})
			return nil
		})
	}
	for _, path := range []string{"/openai/deployments/d1/probe", "/openai/deployments/d1/models"} {
		resp, b := sendPassThrough(t, "POST", hs.URL+path, `{}`, map[string]string{"Authorization": "Bearer " + testKey})
		if resp.StatusCode != 200 || !strings.Contains(b, `"deployment":"d1"`) {
			t.Errorf("%s: %d %s", path, resp.StatusCode, b)
		}
	}
	if up.count() != 0 {
		t.Errorf("the more specific routes were forwarded")
	}
}
