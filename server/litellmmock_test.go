package server

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/usagelog"
)

// mockUpstream is a scripted OpenAI-format upstream that answers "from <model>", whole or
// streamed, and counts the calls per model.
type mockUpstream struct {
	mu    sync.Mutex
	calls map[string]int
}

func (u *mockUpstream) count(model string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.calls[model]
}

func (u *mockUpstream) total() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	n := 0
	for _, c := range u.calls {
		n += c
	}
	return n
}

func (u *mockUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Model  string `json:"model"`
		Stream bool   `json:"stream"`
	}
	json.NewDecoder(r.Body).Decode(&body)
	u.mu.Lock()
	u.calls[body.Model]++
	u.mu.Unlock()
	if !body.Stream {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"c1","object":"chat.completion","created":1,"model":%q,"choices":[{"index":0,"message":{"role":"assistant","content":"from %s"},"finish_reason":"stop"}],"usage":{"prompt_tokens":30,"completion_tokens":20,"total_tokens":50}}`, body.Model, body.Model)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprintf(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":%q,\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"from %s\"},\"finish_reason\":null}]}\n\n", body.Model, body.Model)
	fmt.Fprint(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":30,\"completion_tokens\":20,\"total_tokens\":50}}\n\ndata: [DONE]\n\n")
}

// mockServer serves a gateway over mockUpstream with priced models and the group "gpt"
// (openai/ok, openai/ok2) whose fallbacks are openai/other, its context window
// fallbacks openai/long and its content policy fallbacks openai/safe.
func mockServer(t *testing.T) (*httptest.Server, *Server, *mockUpstream, *usagelog.Recorder) {
	t.Helper()
	up := &mockUpstream{calls: map[string]int{}}
	ups := httptest.NewServer(up)
	t.Cleanup(ups.Close)
	entry := `{"input_cost_per_token": 0.001, "output_cost_per_token": 0.002, "litellm_provider": "openai", "mode": "chat"}`
	prices, err := providers.ParseCatalog([]byte(`{"ok": ` + entry + `, "ok2": ` + entry + `, "other": ` + entry + `, "long": ` + entry + `, "safe": ` + entry + `}`))
	if err != nil {
		t.Fatal(err)
	}
	st := newTestStore(t)
	rec := usagelog.New(usagelog.Options{})
	g, err := completions.New(completions.Options{Providers: providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: ups.URL + "/v1", APIKey: "sk-up"})),
		Prices: prices, Store: st, Backoff: completions.Backoff{Initial: time.Millisecond, Max: 2 * time.Millisecond}, Observer: rec,
		ModelGroups: map[string]completions.ModelGroup{"gpt": {Models: []string{"openai/ok", "openai/ok2"}, Fallbacks: []string{"openai/other"},
			ContextWindowFallbacks: []string{"openai/long"}, ContentPolicyFallbacks: []string{"openai/safe"}}}})
	if err != nil {
		t.Fatal(err)
	}
	s := testServer(t, Config{Store: st, APIKeys: []string{testKey}}, nil)
	for _, o := range []Option{Completions(g), Usage(rec)} {
		if err := o(s); err != nil {
			t.Fatal(err)
		}
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	return hs, s, up, rec
}

// mockChat is what the tests read of a chat completion.
type mockChat struct {
	Choices []struct {
		Message struct {
			Content string `json:"content"`
		} `json:"message"`
	} `json:"choices"`
	Usage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
}

// TestLiteLLMMockTestingFallbacks: mock_testing_fallbacks fails the group asked without
// calling any of its members, and its fallbacks answer for real (called and billed);
// mock_testing_context_fallbacks and mock_testing_content_policy_fallbacks take the
// group's context window and content policy fallbacks; streamed too; the failures are
// recorded as mock attempts; on a plain model, the request's fallbacks answer.
func TestLiteLLMMockTestingFallbacks(t *testing.T) {
	hs, _, up, rec := mockServer(t)
	for _, tc := range []struct{ name, extra, model, want string }{
		{"general", `"model":"gpt","mock_testing_fallbacks":true`, "gpt", "other"},
		{"context window", `"model":"gpt","mock_testing_context_fallbacks":true`, "gpt", "long"},
		{"content policy", `"model":"gpt","mock_testing_content_policy_fallbacks":true`, "gpt", "safe"},
		{"streamed", `"model":"gpt","stream":true,"mock_testing_fallbacks":true`, "gpt", "other"},
		{"request fallback_models", `"model":"openai/ok","fallback_models":["openai/other"],"mock_testing_fallbacks":true`, "openai/ok", "other"},
		{"LiteLLM's request fallbacks", `"model":"openai/ok","fallbacks":["openai/other"],"mock_testing_fallbacks":true`, "openai/ok", "other"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ok, ok2, want := up.count("ok"), up.count("ok2"), up.count(tc.want)
			resp, b := post(t, hs.URL+"/v1/chat/completions", testKey, `{`+tc.extra+`,"messages":[{"role":"user","content":"hi"}]}`)
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "from "+tc.want) {
				t.Fatalf("%d %s", resp.StatusCode, b)
			}
			if up.count("ok") != ok || up.count("ok2") != ok2 {
				t.Errorf("the mocked group's members were called: ok %d→%d, ok2 %d→%d", ok, up.count("ok"), ok2, up.count("ok2"))
			}
			if up.count(tc.want) != want+1 {
				t.Errorf("%s called %d times, want once", tc.want, up.count(tc.want)-want)
			}
			if h := resp.Header; !strings.Contains(tc.extra, "stream") &&
				(h.Get("X-Litellm-Attempted-Fallbacks") != "1" || h.Get("X-Litellm-Attempted-Retries") != "0") {
				t.Errorf("x-litellm-attempted-fallbacks %q, retries %q, want 1 and 0", h.Get("X-Litellm-Attempted-Fallbacks"), h.Get("X-Litellm-Attempted-Retries"))
			}
			recs := rec.Requests(ownerOf(sha256.Sum256([]byte(testKey))), 1, 0)
			if len(recs) != 1 {
				t.Fatalf("%d records", len(recs))
			}
			if recs[0].CostUSD == 0 {
				t.Errorf("the fallback's real answer cost nothing: %+v", recs[0])
			}
			atts := recs[0].Attempts
			if len(atts) < 2 || !atts[0].Mock || atts[0].Outcome != completions.OutcomeError || !strings.Contains(atts[0].Error, "mock") ||
				atts[len(atts)-1].Mock || atts[len(atts)-1].Model != "openai/"+tc.want {
				t.Errorf("attempts %+v", atts)
			}
		})
	}
	// The made-up failures are not the members': no circuit breaker opens on them.
	for range 10 {
		if resp, b := post(t, hs.URL+"/v1/chat/completions", testKey, `{"model":"gpt","mock_testing_fallbacks":true,"messages":[{"role":"user","content":"hi"}]}`); resp.StatusCode != http.StatusOK {
			t.Fatalf("%d %s", resp.StatusCode, b)
		}
	}
	if resp, b := post(t, hs.URL+"/v1/chat/completions", testKey, `{"model":"gpt","messages":[{"role":"user","content":"hi"}]}`); resp.StatusCode != http.StatusOK ||
		!strings.Contains(string(b), "from ok") {
		t.Errorf("gpt after mock failures: %d %s", resp.StatusCode, b)
	}
}

// TestLiteLLMMockResponse: mock_response answers with its text and calls no upstream,
// whole and streamed (in chunks), with its usage estimated and no cost, recorded as a
// mock; the key's model allow-list still applies; values of the wrong type, LiteLLM's
// mock error strings are a 400 naming the field.
func TestLiteLLMMockResponse(t *testing.T) {
	hs, s, up, rec := mockServer(t)
	const text = "It's simple to use and easy to get started, and long enough to come in more than one chunk of the stream."
	resp, b := post(t, hs.URL+"/v1/chat/completions", testKey, `{"model":"gpt","mock_response":"`+text+`","messages":[{"role":"user","content":"hi there"}]}`)
	var a mockChat
	if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &a) != nil || len(a.Choices) != 1 || a.Choices[0].Message.Content != text {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	if a.Usage.PromptTokens == 0 || a.Usage.CompletionTokens == 0 {
		t.Errorf("usage %+v, want it estimated", a.Usage)
	}
	if c := resp.Header.Get("X-Litellm-Response-Cost"); c != "0" {
		t.Errorf("x-litellm-response-cost %q, want 0", c)
	}
	recs := rec.Requests(ownerOf(sha256.Sum256([]byte(testKey))), 1, 0)
	if len(recs) != 1 || recs[0].CostUSD != 0 || !recs[0].UsageEstimated || len(recs[0].Attempts) != 1 || !recs[0].Attempts[0].Mock ||
		recs[0].Attempts[0].Outcome != completions.OutcomeOK {
		t.Errorf("usage history %+v", recs)
	}

	resp, b = post(t, hs.URL+"/v1/chat/completions", testKey, `{"model":"gpt","stream":true,"mock_response":"`+text+`","messages":[{"role":"user","content":"hi"}]}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("streamed: %d %s", resp.StatusCode, b)
	}
	var got strings.Builder
	chunks := 0
	for _, line := range strings.Split(string(b), "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var c struct {
			Choices []struct {
				Delta struct {
					Content string `json:"content"`
				} `json:"delta"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			t.Fatalf("chunk %s: %v", data, err)
		}
		if len(c.Choices) > 0 && c.Choices[0].Delta.Content != "" {
			chunks++
			got.WriteString(c.Choices[0].Delta.Content)
		}
	}
	if got.String() != text || chunks < 2 || !strings.Contains(string(b), "data: [DONE]") {
		t.Errorf("streamed %d chunks of %q: %s", chunks, got.String(), b)
	}
	if recs := rec.Requests(ownerOf(sha256.Sum256([]byte(testKey))), 1, 0); len(recs) != 1 || recs[0].CostUSD != 0 || !recs[0].Stream || len(recs[0].Attempts) != 1 || !recs[0].Attempts[0].Mock {
		t.Errorf("streamed usage history %+v", recs)
	}

	// Several choices, whole and streamed: each the text.
	resp, b = post(t, hs.URL+"/v1/chat/completions", testKey, `{"model":"gpt","n":2,"mock_response":"two","messages":[{"role":"user","content":"hi"}]}`)
	if a = (mockChat{}); resp.StatusCode != http.StatusOK || json.Unmarshal(b, &a) != nil || len(a.Choices) != 2 || a.Choices[0].Message.Content != "two" || a.Choices[1].Message.Content != "two" {
		t.Errorf("n=2: %d %s", resp.StatusCode, b)
	}
	resp, b = post(t, hs.URL+"/v1/chat/completions", testKey, `{"model":"gpt","n":2,"stream":true,"mock_response":"two","messages":[{"role":"user","content":"hi"}]}`)
	if resp.StatusCode != http.StatusOK || strings.Count(string(b), `"content":"two"`) != 2 {
		t.Errorf("n=2 streamed: %d %s", resp.StatusCode, b)
	}

	// A key allowed only openai/other is refused gpt, mock or not.
	k := litellmGenerate(t, s, `{"models":["openai/other"]}`)
	resp, b = post(t, hs.URL+"/v1/chat/completions", k.Key, `{"model":"gpt","mock_response":"x","messages":[{"role":"user","content":"hi"}]}`)
	if resp.StatusCode == http.StatusOK {
		t.Errorf("a key not allowed gpt got a mock answer: %s", b)
	}
	if resp, b = post(t, hs.URL+"/v1/chat/completions", k.Key, `{"model":"openai/other","mock_response":"x","messages":[{"role":"user","content":"hi"}]}`); resp.StatusCode != http.StatusOK {
		t.Errorf("a key allowed openai/other: %d %s", resp.StatusCode, b)
	}
	r := do(t, s, "GET", "/key/info?key="+k.Key, testKey, "")
	var info struct {
		Info litellmInfo `json:"info"`
	}
	if r.status != http.StatusOK || json.Unmarshal([]byte(r.raw), &info) != nil || info.Info.Spend != 0 || !strings.Contains(r.raw, `"spend"`) {
		t.Errorf("the key's spend after a mock: %d %s", r.status, r.raw)
	}

	for _, tc := range []struct{ extra, field string }{
		{`"mock_response":{"choices":[]}`, "mock_response"},
		{`"mock_response":"litellm.RateLimitError"`, "mock_response"},
		{`"mock_testing_fallbacks":"yes"`, "mock_testing_fallbacks"},
		{`"mock_testing_context_fallbacks":1`, "mock_testing_context_fallbacks"},
		{`"mock_timeout":"yes"`, "mock_timeout"},
		{`"mock_response":"x","mock_timeout":true`, "mock_response"},
		{`"mock_response":"x","mock_testing_fallbacks":true`, "mock_response"},
	} {
		resp, b := post(t, hs.URL+"/v1/chat/completions", testKey, `{"model":"gpt",`+tc.extra+`,"messages":[{"role":"user","content":"hi"}]}`)
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), tc.field) {
			t.Errorf("%s: %d %s", tc.extra, resp.StatusCode, b)
		}
	}
	if n := up.total(); n != 0 {
		t.Errorf("%d upstream calls, want none", n)
	}

	// A key over its budget gets no mock answer either.
	spent := litellmGenerate(t, s, `{"max_budget":0.01}`)
	if resp, b := post(t, hs.URL+"/v1/chat/completions", spent.Key, `{"model":"openai/other","messages":[{"role":"user","content":"hi"}]}`); resp.StatusCode != http.StatusOK {
		t.Fatalf("the real call over the budget: %d %s", resp.StatusCode, b)
	}
	if resp, b := post(t, hs.URL+"/v1/chat/completions", spent.Key, `{"model":"gpt","mock_response":"x","messages":[{"role":"user","content":"hi"}]}`); resp.StatusCode == http.StatusOK ||
		!strings.Contains(strings.ToLower(string(b)), "budget") {
		t.Errorf("a key over its budget: %d %s", resp.StatusCode, b)
	}
}

// TestLiteLLMMockOnMessages: Anthropic's /v1/messages takes LiteLLM's testing switches as
// chat does: mock_response answers in the Messages shape without calling the upstream,
// mock_testing_fallbacks fails the group asked so that its fallback answers, and so
// does mock_timeout after its wait.
func TestLiteLLMMockOnMessages(t *testing.T) {
	hs, _, up, _ := mockServer(t)
	resp, b := post(t, hs.URL+"/v1/messages", testKey, `{"model":"gpt","max_tokens":50,"mock_response":"canned answer","messages":[{"role":"user","content":"hi"}]}`)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `"text":"canned answer"`) || !strings.Contains(string(b), `"type":"message"`) {
		t.Fatalf("mock_response on /v1/messages: %d %s", resp.StatusCode, b)
	}
	if n := up.total(); n != 0 {
		t.Errorf("the upstream was called %d times", n)
	}
	resp, b = post(t, hs.URL+"/v1/messages", testKey, `{"model":"gpt","max_tokens":50,"mock_testing_fallbacks":true,"messages":[{"role":"user","content":"hi"}]}`)
	if resp.StatusCode != http.StatusOK || up.count("ok") != 0 || up.count("other") != 1 {
		t.Errorf("mock_testing_fallbacks on /v1/messages: %d %s; calls ok %d other %d, want only the fallback", resp.StatusCode, b, up.count("ok"), up.count("other"))
	}
	resp, b = post(t, hs.URL+"/v1/messages", testKey, `{"model":"gpt","max_tokens":50,"stream":true,"mock_timeout":true,"first_token_timeout":0.05,"messages":[{"role":"user","content":"hi"}]}`)
	if resp.StatusCode != http.StatusOK || up.count("ok") != 0 || up.count("other") != 2 || !strings.Contains(string(b), "from other") {
		t.Errorf("mock_timeout on /v1/messages: %d %s; calls ok %d other %d, want only the fallback", resp.StatusCode, b, up.count("ok"), up.count("other"))
	}
}

// TestLiteLLMMockTimeout: mock_timeout fails each model asked with a timeout after the
// wait a model that never answers would cost (a stream's first-token timeout here; a
// whole call's attempt timeout in completions' TestMockTimeout) without calling it, so
// the group's fallbacks answer for real; the attempts
// are mock timeouts that took that wait. Whose wait reaches the request's deadline ends
// the request as a silent model would: a timeout, no upstream call.
func TestLiteLLMMockTimeout(t *testing.T) {
	hs, _, up, rec := mockServer(t)
	for _, stream := range []bool{true} { // whole calls wait the attempt timeout (120 s here)
		other := up.count("other")
		resp, b := post(t, hs.URL+"/v1/chat/completions", testKey, fmt.Sprintf(`{"model":"gpt","stream":%t,"mock_timeout":true,"first_token_timeout":0.1,"messages":[{"role":"user","content":"hi"}]}`, stream))
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "from other") {
			t.Fatalf("stream %t: %d %s", stream, resp.StatusCode, b)
		}
		if up.count("ok") != 0 || up.count("ok2") != 0 || up.count("other") != other+1 {
			t.Errorf("stream %t: calls ok %d ok2 %d other +%d, want only the fallback once", stream, up.count("ok"), up.count("ok2"), up.count("other")-other)
		}
		recs := rec.Requests(ownerOf(sha256.Sum256([]byte(testKey))), 1, 0)
		if len(recs) != 1 || len(recs[0].Attempts) != 3 {
			t.Fatalf("stream %t: records %+v", stream, recs)
		}
		for _, a := range recs[0].Attempts[:2] {
			if !a.Mock || a.Kind != "timeout" || a.Outcome != completions.OutcomeError || a.LatencyMS < 100 || !strings.Contains(a.Error, "mock_timeout") {
				t.Errorf("stream %t: attempt %+v, want a mock timeout that waited the first-token timeout (100 ms)", stream, a)
			}
		}
	}

	calls := up.total()
	resp, b := post(t, hs.URL+"/v1/chat/completions", testKey, `{"model":"openai/ok","mock_timeout":true,"timeout":0.2,"messages":[{"role":"user","content":"hi"}]}`)
	if resp.StatusCode < 400 || !strings.Contains(string(b), "timeout") {
		t.Errorf("a mock timeout that reaches the request's deadline: %d %s, want a timeout error", resp.StatusCode, b)
	}
	if up.total() != calls {
		t.Errorf("the upstream was called %d times", up.total()-calls)
	}
}

// TestLiteLLMMockOnResponses: OpenAI's /v1/responses takes LiteLLM's testing switches as
// chat does: mock_response answers in the Responses shape, whole and streamed, without
// calling the upstream; mock_testing_fallbacks fails the group asked so that its
// fallback answers; a switch of the wrong type is a 400 naming it. Before, they were
// dropped and the real model was called (and billed).
func TestLiteLLMMockOnResponses(t *testing.T) {
	hs, _, up, _ := mockServer(t)
	resp, b := post(t, hs.URL+"/v1/responses", testKey, `{"model":"gpt","mock_response":"canned answer","input":"hi"}`)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `"text":"canned answer"`) || !strings.Contains(string(b), `"object":"response"`) {
		t.Fatalf("mock_response on /v1/responses: %d %s", resp.StatusCode, b)
	}
	resp, b = post(t, hs.URL+"/v1/responses", testKey, `{"model":"gpt","stream":true,"mock_response":"canned answer","input":"hi"}`)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "response.completed") || !strings.Contains(string(b), "canned answer") {
		t.Fatalf("streamed mock_response on /v1/responses: %d %s", resp.StatusCode, b)
	}
	if n := up.total(); n != 0 {
		t.Errorf("the upstream was called %d times", n)
	}
	resp, b = post(t, hs.URL+"/v1/responses", testKey, `{"model":"gpt","mock_testing_fallbacks":true,"input":"hi"}`)
	if resp.StatusCode != http.StatusOK || up.count("ok") != 0 || up.count("other") != 1 || !strings.Contains(string(b), "from other") {
		t.Errorf("mock_testing_fallbacks on /v1/responses: %d %s; calls ok %d other %d, want only the fallback", resp.StatusCode, b, up.count("ok"), up.count("other"))
	}
	resp, b = post(t, hs.URL+"/v1/responses", testKey, `{"model":"gpt","mock_testing_fallbacks":"yes","input":"hi"}`)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "mock_testing_fallbacks") {
		t.Errorf("a switch of the wrong type: %d %s, want a 400 naming it", resp.StatusCode, b)
	}
}

// TestLiteLLMMockOnTextCompletions: OpenAI's legacy /v1/completions takes LiteLLM's testing
// switches as chat does (LiteLLM documents mock_timeout for /chat/completions and
// /completions): mock_response is the choice's text without an upstream call;
// mock_testing_fallbacks and mock_timeout (streamed, its wait the first-token timeout) fail
// the group asked so that its fallback answers. Before, they were dropped and the real
// model was called (and billed).
func TestLiteLLMMockOnTextCompletions(t *testing.T) {
	hs, _, up, _ := mockServer(t)
	resp, b := post(t, hs.URL+"/v1/completions", testKey, `{"model":"gpt","prompt":"Say hi","mock_response":"canned answer"}`)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `"text":"canned answer"`) || !strings.Contains(string(b), `"object":"text_completion"`) {
		t.Fatalf("mock_response on /v1/completions: %d %s", resp.StatusCode, b)
	}
	if n := up.total(); n != 0 {
		t.Errorf("the upstream was called %d times", n)
	}
	resp, b = post(t, hs.URL+"/v1/completions", testKey, `{"model":"gpt","prompt":"Say hi","mock_testing_fallbacks":true}`)
	if resp.StatusCode != http.StatusOK || up.count("ok") != 0 || up.count("other") != 1 || !strings.Contains(string(b), "from other") {
		t.Errorf("mock_testing_fallbacks on /v1/completions: %d %s; calls ok %d other %d, want only the fallback", resp.StatusCode, b, up.count("ok"), up.count("other"))
	}
	resp, b = post(t, hs.URL+"/v1/completions", testKey, `{"model":"gpt","prompt":"Say hi","stream":true,"mock_timeout":true,"first_token_timeout":0.05}`)
	if resp.StatusCode != http.StatusOK || up.count("ok") != 0 || up.count("other") != 2 || !strings.Contains(string(b), "from other") {
		t.Errorf("mock_timeout on /v1/completions: %d %s; calls ok %d other %d, want only the fallback", resp.StatusCode, b, up.count("ok"), up.count("other"))
	}
}
