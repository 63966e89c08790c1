package server

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/completions"
)

// openAIError decodes OpenAI's envelope and checks the headers every gateway failure carries.
func wantOpenAIError(t *testing.T, what string, resp *http.Response, b []byte, status int, typ, code string) completions.OpenAIErrorObject {
	t.Helper()
	var eb struct {
		Error *completions.OpenAIErrorObject `json:"error"`
	}
	if err := json.Unmarshal(b, &eb); err != nil || eb.Error == nil {
		t.Fatalf("%s: body %s is not OpenAI's error envelope (%v)", what, b, err)
	}
	e := *eb.Error
	gotCode := ""
	if e.Code != nil {
		gotCode = *e.Code
	}
	if resp.StatusCode != status || e.Type != typ || gotCode != code || e.Message == "" {
		t.Errorf("%s: %d type %q code %q message %q; want %d %q %q", what, resp.StatusCode, e.Type, gotCode, e.Message, status, typ, code)
	}
	// (An upstream rate limit leaves the retry to the SDK; its test checks that.)
	if status != 500 && code != "rate_limit_exceeded" && resp.Header.Get("X-Should-Retry") != "false" {
		t.Errorf("%s: x-should-retry %q, want false", what, resp.Header.Get("X-Should-Retry"))
	}
	if !strings.Contains(string(b), `"param":`) {
		t.Errorf("%s: param missing (OpenAI sends it, null when unknown): %s", what, b)
	}
	return e
}

func do2(t *testing.T, method, url, key, body string, header map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var sb strings.Builder
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<22)
	for sc.Scan() {
		sb.WriteString(sc.Text())
		sb.WriteByte('\n')
	}
	return resp, []byte(sb.String())
}

// TestOpenAIFailuresUseOpenAIsEnvelope: every failure under /v1/ — auth, unknown route,
// method, body size, validation, unknown model, the gateway's final failure — comes in
// OpenAI's envelope with OpenAI's statuses, so the SDKs raise their typed errors and do not
// retry what the gateway already retried.
func TestOpenAIFailuresUseOpenAIsEnvelope(t *testing.T) {
	hs, _, _ := completionsServer(t)
	chat := hs.URL + "/v1/chat/completions"
	ok := `{"model":"up/ok","messages":[{"role":"user","content":"hi"}]}`

	resp, b := do2(t, "POST", chat, "", ok, nil)
	wantOpenAIError(t, "no key", resp, b, 401, "invalid_request_error", "invalid_api_key")
	resp, b = do2(t, "POST", chat, "wrong-key", ok, nil)
	wantOpenAIError(t, "wrong key", resp, b, 401, "invalid_request_error", "invalid_api_key")
	resp, b = do2(t, "POST", hs.URL+"/v1/nothing/here", testKey, ok, nil)
	wantOpenAIError(t, "unknown route", resp, b, 404, "invalid_request_error", "unknown_url")
	resp, b = do2(t, "GET", chat, testKey, "", nil)
	wantOpenAIError(t, "wrong method", resp, b, 405, "invalid_request_error", "method_not_allowed")
	if resp.Header.Get("Allow") == "" {
		t.Error("405 without Allow")
	}
	resp, b = do2(t, "POST", chat, testKey, `{"model":"up/ok","messages":[{"role":"user","content":"`+strings.Repeat("x", 11<<20)+`"}]}`, nil)
	wantOpenAIError(t, "body too large", resp, b, 413, "invalid_request_error", "request_too_large")
	resp, b = do2(t, "POST", chat, testKey, `{"model":"up/ok","messages":[],"temperature":9}`, nil)
	e := wantOpenAIError(t, "validation", resp, b, 400, "invalid_request_error", "")
	if e.Param == nil {
		t.Errorf("validation error names no param: %s", b)
	}
	// A wrong type is named in param too, as OpenAI does.
	resp, b = do2(t, "POST", chat, testKey, `{"model":"up/ok","messages":[{"role":"user","content":"hi"}],"temperature":"x"}`, nil)
	e = wantOpenAIError(t, "wrong type", resp, b, 400, "invalid_request_error", "")
	if e.Param == nil || *e.Param != "temperature" {
		t.Errorf("type error param = %v, want temperature: %s", e.Param, b)
	}
	resp, b = do2(t, "POST", chat, testKey, `{"model":"up/ok","messages":[{"role":"user","content":"hi"}]`, nil)
	wantOpenAIError(t, "malformed JSON", resp, b, 400, "invalid_request_error", "")
	resp, b = do2(t, "POST", chat, testKey, `{"model":"up/nosuch","max_retries":3,"messages":[{"role":"user","content":"hi"}]}`, nil)
	e = wantOpenAIError(t, "unknown model", resp, b, 404, "invalid_request_error", "model_not_found")
	if !strings.Contains(e.Message, "nosuch") {
		t.Errorf("unknown model message %q", e.Message)
	}
	resp, b = do2(t, "POST", chat, testKey, `{"model":"up/down","max_retries":0,"messages":[{"role":"user","content":"hi"}]}`, nil)
	wantOpenAIError(t, "all failed", resp, b, 502, "api_error", "upstream_error")
	// Every upstream failing the same way is answered as OpenAI would: SDKs raise
	// BadRequestError for a prompt too long, RateLimitError (retrying after Retry-After)
	// for a rate limit, NotFoundError for a provider without a key here.
	for _, stream := range []string{"false", "true"} {
		resp, b = do2(t, "POST", chat, testKey, `{"model":"up/toolong","stream":`+stream+`,"messages":[{"role":"user","content":"hi"}]}`, nil)
		wantOpenAIError(t, "context too long", resp, b, 400, "invalid_request_error", "context_length_exceeded")
		resp, b = do2(t, "POST", chat, testKey, `{"model":"up/busy","stream":`+stream+`,"max_retries":0,"messages":[{"role":"user","content":"hi"}]}`, nil)
		wantOpenAIError(t, "rate limited", resp, b, 429, "rate_limit_error", "rate_limit_exceeded")
		if resp.Header.Get("Retry-After") != "7" || resp.Header.Get("X-Should-Retry") == "false" {
			t.Errorf("rate limited: Retry-After %q, x-should-retry %q; want 7 and the SDK free to retry", resp.Header.Get("Retry-After"), resp.Header.Get("X-Should-Retry"))
		}
	}
	// An upstream's 400 reaches the SDK with its param and its own code.
	resp, b = do2(t, "POST", chat, testKey, `{"model":"up/badvalue","messages":[{"role":"user","content":"hi"}]}`, nil)
	if e := wantOpenAIError(t, "upstream 400 with a code", resp, b, 400, "invalid_request_error", "invalid_value"); e.Param == nil || *e.Param != "temperature" {
		t.Errorf("upstream 400: param %v, want temperature", e.Param)
	}
	resp, b = do2(t, "POST", chat, testKey, `{"model":"nokey/gpt-4o","messages":[{"role":"user","content":"hi"}]}`, nil)
	wantOpenAIError(t, "provider without a key", resp, b, 404, "invalid_request_error", "model_not_found")
	resp, b = do2(t, "POST", hs.URL+"/v1/responses", testKey, `{"model":"up/toolong","input":"hi"}`, nil)
	wantOpenAIError(t, "responses: context too long", resp, b, 400, "invalid_request_error", "context_length_exceeded")
	resp, b = do2(t, "POST", chat, testKey, `{"model":"up/toolong","fallback_models":["up/down"],"max_retries":0,"messages":[{"role":"user","content":"hi"}]}`, nil)
	wantOpenAIError(t, "mixed failures", resp, b, 502, "api_error", "upstream_error")

	// The native endpoint and model selection keep Switchyard's own body.
	resp, b = do2(t, "POST", hs.URL+"/api/v1/completions", "", `{}`, nil)
	if m := decodeMap(t, b); resp.StatusCode != 401 || m["error"] != KindUnauthorized {
		t.Errorf("native 401: %d %s", resp.StatusCode, b)
	}
	resp, b = do2(t, "POST", hs.URL+"/v1/modelSelect", "", `{}`, nil)
	if m := decodeMap(t, b); resp.StatusCode != 401 || m["error"] != KindUnauthorized {
		t.Errorf("/v1/modelSelect 401: %d %s", resp.StatusCode, b)
	}
}

// TestContentFilterAnswers: a provider's content-policy rejection is a 200 answer with
// finish_reason content_filter on the OpenAI surface (whole and streamed), an explicit
// 400 on the native endpoint, and the fallback model is never asked.
func TestContentFilterAnswers(t *testing.T) {
	hs, _, up := completionsServer(t)
	body := `{"model":"up/unsafe","fallback_models":["up/ok"],"messages":[{"role":"user","content":"bad"}]}`
	resp, b := do2(t, "POST", hs.URL+"/v1/chat/completions", testKey, body, nil)
	var c completions.OpenAIChatCompletion
	if err := json.Unmarshal(b, &c); err != nil || resp.StatusCode != 200 || len(c.Choices) != 1 || c.Choices[0].FinishReason != "content_filter" {
		t.Fatalf("content filter: %d %s", resp.StatusCode, b)
	}
	if c.Choices[0].Message.Role != "assistant" || c.Model != "up/unsafe" {
		t.Errorf("completion %s", b)
	}
	stream := `{"model":"up/unsafe","fallback_models":["up/ok"],"stream":true,"messages":[{"role":"user","content":"bad"}]}`
	resp, b = do2(t, "POST", hs.URL+"/v1/chat/completions", testKey, stream, nil)
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"finish_reason":"content_filter"`) || !strings.HasSuffix(strings.TrimSpace(string(b)), "data: [DONE]") {
		t.Fatalf("streamed content filter: %d %s", resp.StatusCode, b)
	}
	native := `{"models":["up/unsafe","up/ok"],"messages":[{"role":"user","content":[{"type":"text","text":"bad"}]}]}`
	resp, b = do2(t, "POST", hs.URL+"/api/v1/completions", testKey, native, nil)
	if m := decodeMap(t, b); resp.StatusCode != 400 || m["error"] != KindContentFiltered || m["attempts"] == nil {
		t.Fatalf("native content filter: %d %s", resp.StatusCode, b)
	}
	up.mu.Lock()
	if n := len(up.messages); n != 3 {
		t.Errorf("upstream called %d times, want 3 (one per request, the fallback never)", n)
	}
	up.mu.Unlock()

	// A refusal is still billed: the usage the upstream reported with the blocked answer,
	// else the prompt estimated; every refused answer has its own id.
	usage := func(u *completions.OpenAIUsage) (int, int, bool) {
		if u == nil {
			return 0, 0, false
		}
		return u.PromptTokens, u.CompletionTokens, u.Estimated
	}
	filtered := `{"model":"up/filtered","messages":[{"role":"user","content":"bad"}]}`
	var c1, c2 completions.OpenAIChatCompletion
	_, b = do2(t, "POST", hs.URL+"/v1/chat/completions", testKey, filtered, nil)
	_ = json.Unmarshal(b, &c1)
	_, b = do2(t, "POST", hs.URL+"/v1/chat/completions", testKey, filtered, nil)
	_ = json.Unmarshal(b, &c2)
	if p, q, est := usage(c1.Usage); p != 11 || q != 5 || est || c1.ID == c2.ID {
		t.Errorf("filtered answer: usage %d/%d estimated %v, ids %q %q: %s", p, q, est, c1.ID, c2.ID, b)
	}
	if p, _, est := usage(c.Usage); p == 0 || !est {
		t.Errorf("rejected prompt: usage %+v, want an estimated prompt count", c.Usage)
	}
	resp, b = do2(t, "POST", hs.URL+"/v1/chat/completions", testKey,
		`{"model":"up/filtered","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"bad"}]}`, nil)
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"choices":[],"usage":{"prompt_tokens":`) || !strings.Contains(string(b), `"estimated":true`) {
		t.Errorf("streamed filtered answer with include_usage: %d %s", resp.StatusCode, b)
	}
}

func TestOpenAIModels(t *testing.T) {
	hs, _, _ := completionsServer(t)
	resp, b := do2(t, "GET", hs.URL+"/v1/models", testKey, "", nil)
	var list struct {
		Object string `json:"object"`
		Data   []struct {
			ID, Object, OwnedBy string
			Created             int64
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &list); err != nil || resp.StatusCode != 200 || list.Object != "list" || list.Data == nil {
		t.Fatalf("models: %d %s", resp.StatusCode, b)
	}
	// The test registry has one custom provider ("up") that the catalogue does not cover:
	// nothing to enumerate, but its models are served.
	resp, b = do2(t, "GET", hs.URL+"/v1/models/up/anything", testKey, "", nil)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil || resp.StatusCode != 200 || m["id"] != "up/anything" || m["object"] != "model" || m["owned_by"] != "up" {
		t.Fatalf("model: %d %s", resp.StatusCode, b)
	}
	resp, b = do2(t, "GET", hs.URL+"/v1/models/openai/gpt-4o", testKey, "", nil)
	wantOpenAIError(t, "provider without a key", resp, b, 404, "invalid_request_error", "model_not_found")
	resp, b = do2(t, "GET", hs.URL+"/v1/models", "", "", nil)
	wantOpenAIError(t, "models without a key", resp, b, 401, "invalid_request_error", "invalid_api_key")
}
