package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
)

// fakeOpenAIUpstream is a scripted OpenAI-format upstream for tests: model "ok" answers
// "Hello from <model>" (streamed word by word when asked), "down" answers 503, "cut" streams
// two words and drops the connection, "nosuch" is OpenAI's 404 model_not_found, "toolong"
// its 400 context_length_exceeded, "busy" its 429 with Retry-After 7 and "unsafe" its 400
// content_policy_violation.
type fakeOpenAIUpstream struct {
	mu       sync.Mutex
	messages [][]map[string]string
}

func (u *fakeOpenAIUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Model    string              `json:"model"`
		Stream   bool                `json:"stream"`
		Messages []map[string]string `json:"messages"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || r.URL.Path != "/v1/chat/completions" {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	u.mu.Lock()
	u.messages = append(u.messages, body.Messages)
	u.mu.Unlock()
	words := []string{"Hello", " from", " " + body.Model}
	switch body.Model {
	case "down":
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, `{"error":{"message":"overloaded","type":"server_error"}}`)
		return
	case "nosuch":
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"error":{"message":"The model 'nosuch' does not exist or you do not have access to it.","type":"invalid_request_error","param":null,"code":"model_not_found"}}`)
		return
	case "badvalue":
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"error":{"message":"Invalid value for 'temperature': must be at most 2.","type":"invalid_request_error","param":"temperature","code":"invalid_value"}}`)
		return
	case "toolong":
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 210000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`)
		return
	case "busy":
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", "7")
		w.WriteHeader(http.StatusTooManyRequests)
		io.WriteString(w, `{"error":{"message":"Rate limit reached for requests","type":"requests","param":null,"code":"rate_limit_exceeded"}}`)
		return
	case "unsafe":
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"error":{"message":"Your request was rejected as a result of our safety system.","type":"invalid_request_error","param":null,"code":"content_policy_violation"}}`)
		return
	case "filtered": // generated, then blocked by the output filter: billed all the same
		if body.Stream {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"filtered\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"content_filter\"}]}\n\n")
			io.WriteString(w, "data: [DONE]\n\n")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"c1","object":"chat.completion","model":"filtered","choices":[{"index":0,"message":{"role":"assistant","content":null},"finish_reason":"content_filter"}],"usage":{"prompt_tokens":11,"completion_tokens":5,"total_tokens":16}}`)
		return
	case "cut":
		words = words[:2]
	case "slow": // answers after 300 ms
		select {
		case <-time.After(300 * time.Millisecond):
		case <-r.Context().Done():
			return
		}
	}
	if !body.Stream {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}],"usage":{"prompt_tokens":7,"completion_tokens":3,"total_tokens":10}}`, strings.Join(words, ""))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	for _, wd := range words {
		fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":%q}}]}\n\n", wd)
		w.(http.Flusher).Flush()
	}
	if body.Model == "cut" {
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.Close()
		return
	}
	io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n")
	io.WriteString(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":3,\"total_tokens\":10}}\n\n")
	io.WriteString(w, "data: [DONE]\n\n")
}

func (u *fakeOpenAIUpstream) last() []map[string]string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.messages[len(u.messages)-1]
}

const completionsOtherKey = "other-key-456"

func completionsServer(t testing.TB) (*httptest.Server, *Server, *fakeOpenAIUpstream) {
	return completionsServerWith(t, nil)
}

// completionsServerWith is completionsServer with tweak applied to the gateway's options
// (nil: none).
func completionsServerWith(t testing.TB, tweak func(*completions.Options)) (*httptest.Server, *Server, *fakeOpenAIUpstream) {
	t.Helper()
	up := &fakeOpenAIUpstream{}
	ups := httptest.NewServer(up)
	t.Cleanup(ups.Close)
	reg := providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "up", BaseURL: ups.URL + "/v1", APIKey: "sk-up"}),
		providers.NewOpenAI(providers.Config{Name: "nokey", BaseURL: ups.URL + "/v1", KeyEnv: "NOKEY_API_KEY"})) // not configured
	st := newTestStore(t)
	o := completions.Options{Providers: reg, Prices: providers.DefaultCatalog(), Store: st,
		Backoff: completions.Backoff{Initial: time.Millisecond, Max: 2 * time.Millisecond}}
	if tweak != nil {
		tweak(&o)
	}
	g, err := completions.New(o)
	if err != nil {
		t.Fatal(err)
	}
	s := testServer(t, Config{Store: st, APIKeys: []string{testKey, completionsOtherKey}}, nil)
	if err := Completions(g)(s); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	return hs, s, up
}

func post(t *testing.T, url, key, body string) (*http.Response, []byte) {
	t.Helper()
	return sendJSON(t, "POST", url, key, body)
}

// sendJSON sends body to url with method, as key when not empty, and returns the answer.
func sendJSON(t *testing.T, method, url, key, body string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func decodeMap(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("body %s: %v", b, err)
	}
	return m
}

func TestCompletionsEndpoint(t *testing.T) {
	hs, _, up := completionsServer(t)
	url := hs.URL + "/api/v1/completions"

	resp, b := post(t, url, "", `{"models":["up/ok"],"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`)
	if resp.StatusCode != 401 || decodeMap(t, b)["error"] != "Unauthorized" {
		t.Fatalf("no key: %d %s", resp.StatusCode, b)
	}

	for body, want := range map[string]string{
		`{"models":[],"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`:                               "models",
		`{"models":["gpt-4o"],"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`:                       "models[0]",
		`{"models":["nope/x"],"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`:                       "unknown provider",
		`{"models":["up/ok"],"messages":[]}`:                                                                               "messages",
		`{"models":["up/ok"],"messages":[{"role":"robot","content":[{"type":"text","text":"hi"}]}]}`:                       "messages[0].role",
		`{"models":["up/ok"],"messages":[{"role":"user","content":[{"type":"image","text":"hi"}]}]}`:                       "messages[0].content[0].type",
		`{"models":["up/ok"],"temperature":1.2,"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`:      "temperature",
		`{"models":["up/ok"],"maxTokens":-5,"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`:         "maxTokens",
		`{"models":["up/ok"],"maxRetries":-1,"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`:        "maxRetries",
		`{"models":["up/ok"],"conversationId":"123","messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`: "conversationId",
		`{"models":["up/ok"],"search":true,"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`:          "does not support search",
		`{"models":["up/ok"],"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}],"bogus":1}`:              "bogus",
		`{"models":"up/ok","messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`:                          "models",
		`{"models":["up/ok"],"temperature":1e400,"messages":[{"role":"user","content":"hi"}]}`:                             `field "temperature" is out of range`,
		`{"models":["up/ok"],"maxTokens":1e30,"messages":[{"role":"user","content":"hi"}]}`:                                `field "maxTokens"`,
		// Inside a message the decoding is as strict as around it, and errors carry the path.
		`{"models":["up/ok"],"messages":[{"role":"user","content":5}]}`:                                            `messages[0].content: must be an array of content blocks or a string, got number`,
		`{"models":["up/ok"],"messages":[{"role":"user","content":[5]}]}`:                                          `messages[0].content[0]: must be an object with type and text, got number`,
		`{"models":["up/ok"],"messages":[5]}`:                                                                      `messages[0]: must be an object`,
		`{"models":["up/ok"],"messages":[{"role":1,"content":"hi"}]}`:                                              `messages[0].role: must be a string, got number`,
		`{"models":["up/ok"],"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text"}]}]}`: `messages[0].content[1].text: is required`,
		`{"models":["up/ok"],"messages":[{"role":"user","content":[{"type":"text","text":null}]}]}`:                `messages[0].content[0].text: is required`,
		`{"models":["up/ok"],"messages":[{"role":"user","content":[{"type":"text","text":5}]}]}`:                   `messages[0].content[0].text: must be a string, got number`,
		`{"models":["up/ok"],"messages":[{"role":"user","foo":1,"content":"hi"}]}`:                                 `messages[0].foo: unknown field`,
		`{"models":["up/ok"],"messages":[{"ROLE":"user","content":"hi"}]}`:                                         `messages[0].ROLE: unknown field`,
		`{"models":["up/ok"],"messages":[{"role":"user","content":[{"type":"text","text":"hi","TEXT":"x"}]}]}`:     `messages[0].content[0].TEXT: unknown field`,
	} {
		resp, b := post(t, url, testKey, body)
		m := decodeMap(t, b)
		if resp.StatusCode != 422 || m["error"] != "Validation Error" || !strings.Contains(m["message"].(string), want) {
			t.Errorf("%s: %d %s, want 422 naming %q", body, resp.StatusCode, b, want)
		}
	}

	resp, b = post(t, url, testKey, `{"models":["up/down","up/ok"],"maxRetries":0,"messages":[{"role":"user","content":[{"type":"text","text":"What is Go?\nExplain."}]}]}`)
	if resp.StatusCode != 200 {
		t.Fatalf("completion: %d %s", resp.StatusCode, b)
	}
	var cr completions.Response
	if err := json.Unmarshal(b, &cr); err != nil {
		t.Fatal(err)
	}
	if cr.Provider != "up" || cr.Model != "ok" || cr.Text() != "Hello from ok" || cr.Usage.TotalTokens != 10 ||
		cr.ConversationTitle != "What is Go? Explain." || len(cr.Attempts) != 2 || cr.Attempts[0].Kind != "overloaded" {
		t.Fatalf("response = %s", b)
	}

	// The conversation continues for its owner and is invisible to other keys.
	next := fmt.Sprintf(`{"models":["up/ok"],"conversationId":%q,"messages":[{"role":"user","content":[{"type":"text","text":"More?"}]}]}`, cr.ConversationID)
	resp, b = post(t, url, completionsOtherKey, next)
	if m := decodeMap(t, b); resp.StatusCode != 404 || m["error"] != "Not Found" || strings.HasPrefix(m["message"].(string), "completions:") ||
		!strings.Contains(m["message"].(string), "conversation not found: "+cr.ConversationID) {
		t.Fatalf("other key: %d %s", resp.StatusCode, b)
	}
	resp, b = post(t, url, testKey, next)
	if resp.StatusCode != 200 {
		t.Fatalf("continue: %d %s", resp.StatusCode, b)
	}
	if got := up.last(); len(got) != 3 || got[0]["content"] != "What is Go?\nExplain." || got[1]["content"] != "Hello from ok" || got[2]["content"] != "More?" {
		t.Fatalf("history sent upstream = %v", got)
	}

	// Every model failing is a 502 listing the attempts.
	resp, b = post(t, url, testKey, `{"models":["up/down"],"maxRetries":1,"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`)
	m := decodeMap(t, b)
	if resp.StatusCode != 502 || m["error"] != "Bad Gateway" || len(m["attempts"].([]any)) != 2 || !strings.Contains(m["message"].(string), "up/down") {
		t.Fatalf("all failed: %d %s", resp.StatusCode, b)
	}
}

// readSSE returns the events of a stream as (event name, data) pairs.
func readSSE(t *testing.T, r io.Reader) [][2]string {
	t.Helper()
	var out [][2]string
	var name, data string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			out = append(out, [2]string{name, data})
			name, data = "", ""
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data = strings.TrimPrefix(line, "data: ")
		}
	}
	return out
}

func TestCompletionsStreamEndpoint(t *testing.T) {
	hs, _, _ := completionsServer(t)
	url := hs.URL + "/api/v1/completions"
	resp, b := post(t, url, testKey, `{"models":["up/down"],"fallback_models":["up/ok"],"maxRetries":0,"stream":true,"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	evs := readSSE(t, strings.NewReader(string(b)))
	if len(evs) != 5 || evs[4][1] != "[DONE]" {
		t.Fatalf("events = %q", evs)
	}
	var text strings.Builder
	for _, e := range evs[:3] {
		var c completions.Chunk
		if err := json.Unmarshal([]byte(e[1]), &c); err != nil || c.Type != "text" || c.Provider != "up" || c.Model != "ok" {
			t.Fatalf("chunk %s: %v", e[1], err)
		}
		text.WriteString(c.Text)
	}
	final := decodeMap(t, []byte(evs[3][1]))
	if text.String() != "Hello from ok" || final["type"] != "text" || final["text"] != "" || final["final"] != true || final["message"].(map[string]any)["content"].([]any)[0].(map[string]any)["text"] != "Hello from ok" {
		t.Fatalf("text %q final %v", text.String(), final)
	}

	// A stream cut after its first fragment ends with an error event and no [DONE].
	resp, b = post(t, url, testKey, `{"models":["up/cut"],"fallback_models":["up/ok"],"stream":true,"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`)
	evs = readSSE(t, strings.NewReader(string(b)))
	last := evs[len(evs)-1]
	if resp.StatusCode != 200 || last[0] != "error" || strings.Contains(string(b), "[DONE]") || decodeMap(t, []byte(last[1]))["error"] != "Stream Error" {
		t.Fatalf("cut stream: %s", b)
	}

	// Failing before any fragment is an ordinary JSON error.
	resp, b = post(t, url, testKey, `{"models":["up/down"],"maxRetries":0,"stream":true,"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`)
	if resp.StatusCode != 502 || decodeMap(t, b)["error"] != "Bad Gateway" {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
}

func TestOpenAICompatibleEndpoint(t *testing.T) {
	hs, _, up := completionsServer(t)
	url := hs.URL + "/v1/chat/completions"
	resp, b := post(t, url, testKey, `{"model":"up/ok","messages":[{"role":"system","content":"Be nice."},{"role":"user","content":"hi"}],"temperature":0.7,"top_p":1,"user":"x","max_tokens":50}`)
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	m := decodeMap(t, b)
	choice := m["choices"].([]any)[0].(map[string]any)
	if m["object"] != "chat.completion" || m["model"] != "up/ok" || choice["message"].(map[string]any)["content"] != "Hello from ok" ||
		m["usage"].(map[string]any)["total_tokens"] != 10.0 {
		t.Fatalf("completion = %s", b)
	}
	if got := up.last(); len(got) != 2 || got[0]["role"] != "system" {
		t.Fatalf("sent = %v", got)
	}

	resp, b = post(t, url, testKey, `{"model":"up/down","fallback_models":["up/ok"],"max_retries":0,"stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`)
	evs := readSSE(t, strings.NewReader(string(b)))
	if resp.StatusCode != 200 || evs[len(evs)-1][1] != "[DONE]" {
		t.Fatalf("stream: %d %s", resp.StatusCode, b)
	}
	var text strings.Builder
	var usage *completions.OpenAIUsage
	for _, e := range evs[:len(evs)-1] {
		var c completions.OpenAIChunk
		if err := json.Unmarshal([]byte(e[1]), &c); err != nil || c.Object != "chat.completion.chunk" {
			t.Fatalf("chunk %s: %v", e[1], err)
		}
		for _, ch := range c.Choices {
			text.WriteString(ch.Delta.Content)
		}
		if c.Usage != nil {
			usage = c.Usage
		}
	}
	if text.String() != "Hello from ok" || usage == nil || usage.TotalTokens != 10 {
		t.Fatalf("text %q usage %+v", text.String(), usage)
	}

	// A bare name nothing here serves: 404 model_not_found, as OpenAI answers a model it
	// does not have; a malformed request: 400 naming the field.
	resp, b = post(t, url, testKey, `{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}`)
	var eb completions.OpenAIErrorBody
	if err := json.Unmarshal(b, &eb); err != nil || resp.StatusCode != 404 || eb.Error.Code == nil || *eb.Error.Code != "model_not_found" || eb.Error.Param == nil || *eb.Error.Param != "model" {
		t.Fatalf("unknown model: %d %s", resp.StatusCode, b)
	}
	resp, b = post(t, url, testKey, `{"model":"up/ok","temperature":5,"messages":[{"role":"user","content":"hi"}]}`)
	if err := json.Unmarshal(b, &eb); err != nil || resp.StatusCode != 400 || eb.Error.Type != "invalid_request_error" || eb.Error.Param == nil || *eb.Error.Param != "temperature" {
		t.Fatalf("invalid: %d %s", resp.StatusCode, b)
	}
	resp, b = post(t, url, testKey, `{"model":"up/down","max_retries":0,"messages":[{"role":"user","content":"hi"}]}`)
	if err := json.Unmarshal(b, &eb); err != nil || resp.StatusCode != 502 || eb.Error.Type != "api_error" || resp.Header.Get("X-Should-Retry") != "false" {
		t.Fatalf("all failed: %d %s", resp.StatusCode, b)
	}
	if resp, _ := post(t, url, "", `{"model":"up/ok","messages":[{"role":"user","content":"hi"}]}`); resp.StatusCode != 401 {
		t.Fatalf("no key: %d", resp.StatusCode)
	}
}

func TestCompletionsScopedKeyBudget(t *testing.T) {
	hs, s, _ := completionsServer(t)
	budget := completions.NewBudget(completions.BudgetLimits{AllowedModels: []string{"up/ok"}, MaxCalls: 1})
	revoke := s.Auth().AddTemporaryKey("job-key", "job-1", completions.Scope{Budget: budget, Tag: "job-1"})
	defer revoke()
	url := hs.URL + "/v1/chat/completions"
	resp, b := post(t, url, "job-key", `{"model":"up/down","messages":[{"role":"user","content":"hi"}]}`)
	if resp.StatusCode != 401 {
		t.Fatalf("model outside the allow-list: %d %s", resp.StatusCode, b)
	}
	if resp, b := post(t, url, "job-key", `{"model":"up/ok","messages":[{"role":"user","content":"hi"}]}`); resp.StatusCode != 200 {
		t.Fatalf("allowed: %d %s", resp.StatusCode, b)
	}
	resp, b = post(t, url, "job-key", `{"model":"up/ok","messages":[{"role":"user","content":"hi"}]}`)
	if resp.StatusCode != 429 || !strings.Contains(string(b), "rate_limit_error") {
		t.Fatalf("over budget: %d %s", resp.StatusCode, b)
	}
	if u := budget.Used(context.Background()); u.Calls != 1 || u.Tokens != 10 {
		t.Fatalf("used = %+v", u)
	}
}

func TestCompletionsClientDisconnectCancelsUpstream(t *testing.T) {
	released := make(chan struct{}, 10)
	stop := make(chan struct{})
	ups := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body) // a consumed body lets the server notice the client leaving
		select {
		case <-r.Context().Done():
			released <- struct{}{}
		case <-stop: // the test gave up; never block its cleanup
		}
	}))
	defer ups.Close()
	defer close(stop)
	reg := providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "up", BaseURL: ups.URL + "/v1", APIKey: "k"}))
	st := newTestStore(t)
	g, err := completions.New(completions.Options{Providers: reg, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	s := testServer(t, Config{Store: st}, nil)
	if err := Completions(g)(s); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	defer hs.Close()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", hs.URL+"/api/v1/completions",
		strings.NewReader(`{"models":["up/slow"],"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`))
	req.Header.Set("Authorization", "Bearer "+testKey)
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	if _, err := http.DefaultClient.Do(req); err == nil {
		t.Fatal("request should have been cancelled")
	}
	select {
	case <-released:
	case <-time.After(10 * time.Second):
		t.Fatal("the upstream call was not cancelled when the client went away")
	}
}

func TestCompletionsInOpenAPI(t *testing.T) {
	hs, _, _ := completionsServer(t)
	resp, err := http.Get(hs.URL + "/api/v1/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	doc := string(b)
	for _, want := range []string{`"/api/v1/completions"`, `"/v1/chat/completions"`, `"fallback_models"`, `"conversationId"`, `"maxRetries"`, `"max_completion_tokens"`, `"text/event-stream"`} {
		if !strings.Contains(doc, want) {
			t.Errorf("OpenAPI document lacks %s", want)
		}
	}
}
