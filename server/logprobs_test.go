package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openai/openai-go"
	"github.com/openai/openai-go/option"
	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
)

// fakeLogprobsUpstream is a scripted OpenAI-format upstream: it answers "Yes!" (tokens
// "Yes" and "!"), with each token's log probability and top_logprobs alternatives when the
// request asks (logprobs: true), whole or streamed a token per event; it records each
// request body.
type fakeLogprobsUpstream struct {
	mu     sync.Mutex
	bodies []map[string]any
}

// fakeLogprobsTokens are the answer's tokens as OpenAI's logprobs.content gives them.
var fakeLogprobsTokens = []map[string]any{
	{"token": "Yes", "logprob": -0.25, "bytes": []int{89, 101, 115}, "top_logprobs": []map[string]any{
		{"token": "Yes", "logprob": -0.25, "bytes": []int{89, 101, 115}}, {"token": "No", "logprob": -1.5, "bytes": []int{78, 111}}}},
	{"token": "!", "logprob": -0.75, "bytes": []int{33}, "top_logprobs": []map[string]any{
		{"token": "!", "logprob": -0.75, "bytes": []int{33}}, {"token": ".", "logprob": -0.9, "bytes": []int{46}}}},
}

func (u *fakeLogprobsUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, `{"error":{"message":"bad body"}}`, http.StatusBadRequest)
		return
	}
	u.mu.Lock()
	u.bodies = append(u.bodies, body)
	u.mu.Unlock()
	asked := body["logprobs"] == true
	top := 0
	if n, ok := body["top_logprobs"].(float64); ok {
		top = int(n)
	}
	tokens := make([]map[string]any, len(fakeLogprobsTokens))
	for i, t := range fakeLogprobsTokens {
		c := map[string]any{}
		for k, v := range t {
			c[k] = v
		}
		c["top_logprobs"] = t["top_logprobs"].([]map[string]any)[:top]
		tokens[i] = c
	}
	logprobs := func(tokens []map[string]any) any {
		if !asked {
			return nil
		}
		return map[string]any{"content": tokens, "refusal": nil}
	}
	if body["stream"] == true {
		w.Header().Set("Content-Type", "text/event-stream")
		ev := func(v any) {
			b, _ := json.Marshal(v)
			fmt.Fprintf(w, "data: %s\n\n", b)
		}
		for i, t := range tokens {
			ev(map[string]any{"id": "c", "object": "chat.completion.chunk", "created": 1, "model": body["model"],
				"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": t["token"]}, "logprobs": logprobs(tokens[i : i+1]), "finish_reason": nil}}})
		}
		ev(map[string]any{"id": "c", "object": "chat.completion.chunk", "created": 1, "model": body["model"],
			"choices": []any{map[string]any{"index": 0, "delta": map[string]any{}, "logprobs": nil, "finish_reason": "stop"}}})
		ev(map[string]any{"id": "c", "object": "chat.completion.chunk", "created": 1, "model": body["model"], "choices": []any{},
			"usage": map[string]any{"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}})
		fmt.Fprint(w, "data: [DONE]\n\n")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": body["model"],
		"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": "Yes!", "refusal": nil},
			"logprobs": logprobs(tokens), "finish_reason": "stop"}},
		"usage": map[string]any{"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}})
}

func (u *fakeLogprobsUpstream) calls() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.bodies)
}

func (u *fakeLogprobsUpstream) last() map[string]any {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.bodies[len(u.bodies)-1]
}

// logprobsServer serves a gateway with "oa" (an OpenAI-compatible server: the fake above),
// "openai" (OpenAI's own API, at the same fake) and "an" (Anthropic, whose fake upstream
// only counts calls), the group "mixed" (an's Claude, then oa's model), and a memory
// response cache when cached.
func logprobsServer(t *testing.T, cached bool) (*httptest.Server, *fakeLogprobsUpstream, *atomic.Int64) {
	t.Helper()
	up := &fakeLogprobsUpstream{}
	ups := httptest.NewServer(up)
	t.Cleanup(ups.Close)
	var anthropicCalls atomic.Int64
	ans := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		anthropicCalls.Add(1)
		http.Error(w, `{"type":"error","error":{"type":"invalid_request_error","message":"not expected"}}`, http.StatusBadRequest)
	}))
	t.Cleanup(ans.Close)
	reg := providers.NewRegistry(
		providers.NewOpenAI(providers.Config{Name: "oa", BaseURL: ups.URL + "/v1", APIKey: "sk-oa"}),
		providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: ups.URL + "/v1", APIKey: "sk-openai"}),
		providers.NewAnthropic(providers.Config{Name: "an", BaseURL: ans.URL, APIKey: "sk-an"}))
	st := newTestStore(t)
	o := completions.Options{Providers: reg, Prices: providers.DefaultCatalog(), Store: st,
		Backoff:     completions.Backoff{Initial: time.Millisecond, Max: 2 * time.Millisecond},
		ModelGroups: map[string]completions.ModelGroup{"mixed": {Models: []string{"an/claude-sonnet-4-20250514", "oa/gpt-4o-mini"}}}}
	if cached {
		o.Cache = completions.CacheOptions{Driver: &completions.MemoryCache{}}
	}
	g, err := completions.New(o)
	if err != nil {
		t.Fatal(err)
	}
	s := testServer(t, Config{Store: st, APIKeys: []string{testKey}}, nil)
	if err := Completions(g)(s); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	return hs, up, &anthropicCalls
}

// chatLogprobs is the logprobs member of a chat answer's first choice.
type chatLogprobs struct {
	Content []providers.TokenLogprob `json:"content"`
	Refusal []providers.TokenLogprob `json:"refusal"`
}

func TestChatCompletionsLogprobs(t *testing.T) {
	hs, up, _ := logprobsServer(t, false)
	resp, b := post(t, hs.URL+"/v1/chat/completions", testKey,
		`{"model":"oa/gpt-4o-mini","messages":[{"role":"user","content":"Is it?"}],"logprobs":true,"top_logprobs":2}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	if body := up.last(); body["logprobs"] != true || body["top_logprobs"] != 2.0 {
		t.Fatalf("upstream got logprobs %v top_logprobs %v", body["logprobs"], body["top_logprobs"])
	}
	var answer struct {
		Choices []struct {
			Logprobs map[string]json.RawMessage `json:"logprobs"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(b, &answer); err != nil || len(answer.Choices) != 1 {
		t.Fatalf("%s: %v", b, err)
	}
	lp := answer.Choices[0].Logprobs
	if string(lp["refusal"]) != "null" {
		t.Fatalf("logprobs.refusal %s, want null (OpenAI's shape)", lp["refusal"])
	}
	var content []providers.TokenLogprob
	if err := json.Unmarshal(lp["content"], &content); err != nil {
		t.Fatal(err)
	}
	want := []providers.TokenLogprob{
		{Token: "Yes", Logprob: -0.25, Bytes: []int{89, 101, 115}, TopLogprobs: []providers.TopLogprob{{Token: "Yes", Logprob: -0.25, Bytes: []int{89, 101, 115}}, {Token: "No", Logprob: -1.5, Bytes: []int{78, 111}}}},
		{Token: "!", Logprob: -0.75, Bytes: []int{33}, TopLogprobs: []providers.TopLogprob{{Token: "!", Logprob: -0.75, Bytes: []int{33}}, {Token: ".", Logprob: -0.9, Bytes: []int{46}}}},
	}
	if !reflect.DeepEqual(content, want) {
		t.Fatalf("logprobs.content %+v\nwant %+v", content, want)
	}

	// Not asked: null, and nothing asked upstream.
	_, b = post(t, hs.URL+"/v1/chat/completions", testKey, `{"model":"oa/gpt-4o-mini","messages":[{"role":"user","content":"Is it?"}]}`)
	if !strings.Contains(string(b), `"logprobs":null`) {
		t.Fatalf("an answer not asked for log probabilities: %s", b)
	}
	if _, ok := up.last()["logprobs"]; ok {
		t.Fatalf("logprobs sent upstream unasked: %v", up.last())
	}
}

func TestChatCompletionsLogprobsStream(t *testing.T) {
	hs, _, _ := logprobsServer(t, false)
	resp, b := post(t, hs.URL+"/v1/chat/completions", testKey,
		`{"model":"oa/gpt-4o-mini","messages":[{"role":"user","content":"Is it?"}],"logprobs":true,"top_logprobs":1,"stream":true}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	var text strings.Builder
	var tokens []string
	for _, ev := range sseData(t, b) {
		choices, _ := ev["choices"].([]any)
		if len(choices) == 0 {
			continue
		}
		ch := choices[0].(map[string]any)
		delta, _ := ch["delta"].(map[string]any)
		piece, _ := delta["content"].(string)
		text.WriteString(piece)
		lp, _ := ch["logprobs"].(map[string]any)
		if lp == nil {
			continue
		}
		content, _ := lp["content"].([]any)
		var spelled strings.Builder
		for _, c := range content {
			tok := c.(map[string]any)
			spelled.WriteString(tok["token"].(string))
			tokens = append(tokens, tok["token"].(string))
			if top, _ := tok["top_logprobs"].([]any); len(top) != 1 {
				t.Fatalf("token %v: top_logprobs %v, want 1", tok["token"], tok["top_logprobs"])
			}
		}
		if spelled.String() != piece {
			t.Fatalf("a chunk's tokens %q spell %q, its content is %q", content, spelled.String(), piece)
		}
	}
	if text.String() != "Yes!" || strings.Join(tokens, "|") != "Yes|!" {
		t.Fatalf("text %q tokens %q", text.String(), tokens)
	}
}

// A model whose adapter gives no log probabilities is not asked: alone it is a 400 naming
// logprobs; in a group, the models that give them answer.
func TestChatCompletionsLogprobsUnfitModels(t *testing.T) {
	hs, up, anthropicCalls := logprobsServer(t, false)
	for _, model := range []string{"an/claude-sonnet-4-20250514", "openai/o3-mini", "openai/gpt-5"} {
		resp, b := post(t, hs.URL+"/v1/chat/completions", testKey,
			`{"model":"`+model+`","messages":[{"role":"user","content":"Is it?"}],"logprobs":true}`)
		if resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("%s: %d %s", model, resp.StatusCode, b)
		}
		var e completions.OpenAIErrorBody
		if err := json.Unmarshal(b, &e); err != nil || e.Error.Param == nil || *e.Error.Param != "logprobs" {
			t.Fatalf("%s: %s, want an error naming logprobs", model, b)
		}
	}
	if up.calls() != 0 || anthropicCalls.Load() != 0 {
		t.Fatalf("unfit models were called: openai-format %d, anthropic %d", up.calls(), anthropicCalls.Load())
	}
	resp, b := post(t, hs.URL+"/v1/chat/completions", testKey,
		`{"model":"mixed","messages":[{"role":"user","content":"Is it?"}],"logprobs":true}`)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `"token":"Yes"`) {
		t.Fatalf("group: %d %s", resp.StatusCode, b)
	}
	if anthropicCalls.Load() != 0 || up.calls() != 1 {
		t.Fatalf("group: anthropic called %d times, openai-format %d (want 0 and 1)", anthropicCalls.Load(), up.calls())
	}
	// Without logprobs the group's first model is tried.
	post(t, hs.URL+"/v1/chat/completions", testKey, `{"model":"mixed","messages":[{"role":"user","content":"Is it?"}],"max_retries":0}`)
	if anthropicCalls.Load() == 0 {
		t.Fatal("without logprobs the group's Claude was not tried")
	}
}

func TestChatCompletionsLogprobsValidation(t *testing.T) {
	hs, up, _ := logprobsServer(t, false)
	for _, tc := range []struct{ extra, param string }{
		{`"logprobs":true,"top_logprobs":21`, "top_logprobs"},
		{`"logprobs":true,"top_logprobs":-1`, "top_logprobs"},
		{`"top_logprobs":2`, "top_logprobs"},
		{`"logprobs":"yes"`, "logprobs"},
		{`"logprobs":true,"top_logprobs":"2"`, "top_logprobs"},
	} {
		resp, b := post(t, hs.URL+"/v1/chat/completions", testKey,
			`{"model":"oa/gpt-4o-mini","messages":[{"role":"user","content":"Is it?"}],`+tc.extra+`}`)
		var e completions.OpenAIErrorBody
		if resp.StatusCode != http.StatusBadRequest || json.Unmarshal(b, &e) != nil || e.Error.Param == nil || *e.Error.Param != tc.param {
			t.Errorf("%s: %d %s, want a 400 naming %s", tc.extra, resp.StatusCode, b, tc.param)
		}
	}
	if up.calls() != 0 {
		t.Fatalf("invalid requests reached the upstream %d times", up.calls())
	}
	// false and 0 are the defaults, as OpenAI takes them.
	resp, b := post(t, hs.URL+"/v1/chat/completions", testKey,
		`{"model":"an/claude-sonnet-4-20250514","messages":[{"role":"user","content":"Is it?"}],"logprobs":false,"top_logprobs":0,"max_retries":0}`)
	if resp.StatusCode == http.StatusBadRequest && strings.Contains(string(b), "logprobs") {
		t.Fatalf("logprobs false refused: %s", b)
	}
}

func TestTextCompletionsLogprobs(t *testing.T) {
	hs, up, _ := logprobsServer(t, false)
	type legacy struct {
		Choices []struct {
			Text     string                          `json:"text"`
			Logprobs *completions.OpenAITextLogprobs `json:"logprobs"`
		} `json:"choices"`
	}
	resp, b := post(t, hs.URL+"/v1/completions", testKey, `{"model":"oa/gpt-4o-mini","prompt":"Is it? ","logprobs":2,"echo":true}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	if body := up.last(); body["logprobs"] != true || body["top_logprobs"] != 2.0 {
		t.Fatalf("upstream got logprobs %v top_logprobs %v", body["logprobs"], body["top_logprobs"])
	}
	var a legacy
	if err := json.Unmarshal(b, &a); err != nil || len(a.Choices) != 1 || a.Choices[0].Logprobs == nil {
		t.Fatalf("%s: %v", b, err)
	}
	want := &completions.OpenAITextLogprobs{Tokens: []string{"Yes", "!"}, TokenLogprobs: []float64{-0.25, -0.75},
		TopLogprobs: []map[string]float64{{"Yes": -0.25, "No": -1.5}, {"!": -0.75, ".": -0.9}}, TextOffset: []int{7, 10}}
	if a.Choices[0].Text != "Is it? Yes!" || !reflect.DeepEqual(a.Choices[0].Logprobs, want) {
		t.Fatalf("choice %q logprobs %+v, want %+v", a.Choices[0].Text, a.Choices[0].Logprobs, want)
	}

	// Streamed: each chunk's tokens, offsets running on.
	resp, b = post(t, hs.URL+"/v1/completions", testKey, `{"model":"oa/gpt-4o-mini","prompt":"Is it?","logprobs":0,"stream":true}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	var offsets []float64
	for _, ev := range sseData(t, b) {
		choices, _ := ev["choices"].([]any)
		if len(choices) == 0 {
			continue
		}
		if lp, _ := choices[0].(map[string]any)["logprobs"].(map[string]any); lp != nil {
			for _, o := range lp["text_offset"].([]any) {
				offsets = append(offsets, o.(float64))
			}
		}
	}
	if !reflect.DeepEqual(offsets, []float64{0, 3}) {
		t.Fatalf("streamed text_offset %v, want [0 3]", offsets)
	}

	resp, b = post(t, hs.URL+"/v1/completions", testKey, `{"model":"oa/gpt-4o-mini","prompt":"Is it?","logprobs":6}`)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), `"param":"logprobs"`) {
		t.Fatalf("logprobs 6: %d %s", resp.StatusCode, b)
	}
}

func TestResponsesLogprobs(t *testing.T) {
	hs, up, _ := logprobsServer(t, false)
	for _, stream := range []bool{false, true} {
		resp, b := post(t, hs.URL+"/v1/responses", testKey, fmt.Sprintf(
			`{"model":"oa/gpt-4o-mini","input":"Is it?","include":["message.output_text.logprobs"],"top_logprobs":2,"store":false,"stream":%v}`, stream))
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%d %s", resp.StatusCode, b)
		}
		if body := up.last(); body["logprobs"] != true || body["top_logprobs"] != 2.0 {
			t.Fatalf("upstream got logprobs %v top_logprobs %v", body["logprobs"], body["top_logprobs"])
		}
		obj := b
		if stream {
			var deltas int
			for _, ev := range sseData(t, b) {
				if ev["type"] == "response.output_text.delta" {
					if lp, _ := ev["logprobs"].([]any); len(lp) == 1 {
						deltas++
					}
				}
				if ev["type"] == "response.completed" {
					obj, _ = json.Marshal(ev["response"])
				}
			}
			if deltas != 2 {
				t.Fatalf("%d output_text.delta events with a token's log probability, want 2: %s", deltas, b)
			}
		}
		var r struct {
			Output []struct {
				Content []completions.ResponseOutputPart `json:"content"`
			} `json:"output"`
		}
		if err := json.Unmarshal(obj, &r); err != nil || len(r.Output) != 1 || len(r.Output[0].Content) != 1 {
			t.Fatalf("%s: %v", obj, err)
		}
		lp := r.Output[0].Content[0].Logprobs
		if len(lp) != 2 || lp[0].Token != "Yes" || len(lp[0].TopLogprobs) != 2 || lp[1].Token != "!" {
			t.Fatalf("stream %v: output_text logprobs %+v", stream, lp)
		}
	}
	// Without the include none are asked.
	post(t, hs.URL+"/v1/responses", testKey, `{"model":"oa/gpt-4o-mini","input":"Is it?","store":false}`)
	if _, ok := up.last()["logprobs"]; ok {
		t.Fatalf("logprobs asked without the include: %v", up.last())
	}
}

// The response cache keeps a request for log probabilities apart: an answer kept without
// them never answers it, nor one kept with them a request without; a cached answer with
// them gives them again, whole and streamed.
func TestLogprobsResponseCache(t *testing.T) {
	hs, up, _ := logprobsServer(t, true)
	plain := `{"model":"oa/gpt-4o-mini","messages":[{"role":"user","content":"Is it?"}]}`
	asking := `{"model":"oa/gpt-4o-mini","messages":[{"role":"user","content":"Is it?"}],"logprobs":true,"top_logprobs":2}`
	// cachedOnce posts body until it is answered from the cache (the answer is kept in the
	// background), and returns that answer.
	cachedOnce := func(body string) []byte {
		t.Helper()
		for range 100 {
			resp, b := post(t, hs.URL+"/v1/chat/completions", testKey, body)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%d %s", resp.StatusCode, b)
			}
			if resp.Header.Get("X-Switchyard-Cache") == "hit" {
				return b
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Fatalf("%s was never answered from the cache", body)
		return nil
	}
	b := cachedOnce(plain)
	if !strings.Contains(string(b), `"logprobs":null`) {
		t.Fatalf("cached plain answer: %s", b)
	}
	before := up.calls()
	resp, b := post(t, hs.URL+"/v1/chat/completions", testKey, asking)
	if resp.StatusCode != http.StatusOK || up.calls() != before+1 || !strings.Contains(string(b), `"token":"Yes"`) {
		t.Fatalf("a logprobs request answered from the plain answer's entry (upstream calls %d → %d): %s", before, up.calls(), b)
	}
	b = cachedOnce(asking)
	var answer struct {
		Choices []struct {
			Logprobs *chatLogprobs `json:"logprobs"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(b, &answer); err != nil || answer.Choices[0].Logprobs == nil || len(answer.Choices[0].Logprobs.Content) != 2 ||
		len(answer.Choices[0].Logprobs.Content[0].TopLogprobs) != 2 {
		t.Fatalf("cached logprobs answer: %s", b)
	}
	// Streamed from the cache: a chunk per token, each with its log probability.
	streamed := strings.Replace(asking, `"top_logprobs":2`, `"top_logprobs":2,"stream":true`, 1)
	before = up.calls()
	resp, b = post(t, hs.URL+"/v1/chat/completions", testKey, streamed)
	if up.calls() != before || resp.Header.Get("X-Switchyard-Cache") != "hit" {
		t.Fatalf("the stream was not served from the whole answer's entry: cache %q", resp.Header.Get("X-Switchyard-Cache"))
	}
	var tokens []string
	for _, ev := range sseData(t, b) {
		choices, _ := ev["choices"].([]any)
		if len(choices) == 0 {
			continue
		}
		if lp, _ := choices[0].(map[string]any)["logprobs"].(map[string]any); lp != nil {
			for _, c := range lp["content"].([]any) {
				tokens = append(tokens, c.(map[string]any)["token"].(string))
			}
		}
	}
	if strings.Join(tokens, "|") != "Yes|!" {
		t.Fatalf("streamed from the cache: tokens %q: %s", tokens, b)
	}
	// The plain request still gets its own entry, without log probabilities.
	before = up.calls()
	_, b = post(t, hs.URL+"/v1/chat/completions", testKey, plain)
	if up.calls() != before || !strings.Contains(string(b), `"logprobs":null`) {
		t.Fatalf("plain request after a logprobs one (upstream calls %d → %d): %s", before, up.calls(), b)
	}
}

// The OpenAI Go SDK reads choices[0].logprobs.content of an answer and of a stream.
func TestLogprobsOpenAIGoSDK(t *testing.T) {
	hs, _, _ := logprobsServer(t, false)
	client := openai.NewClient(option.WithBaseURL(hs.URL+"/v1/"), option.WithAPIKey(testKey), option.WithMaxRetries(0))
	params := openai.ChatCompletionNewParams{Model: "oa/gpt-4o-mini", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Is it?")},
		Logprobs: openai.Bool(true), TopLogprobs: openai.Int(2)}
	resp, err := client.Chat.Completions.New(t.Context(), params)
	if err != nil {
		t.Fatal(err)
	}
	content := resp.Choices[0].Logprobs.Content
	if len(content) != 2 || content[0].Token != "Yes" || content[0].Logprob != -0.25 || len(content[0].TopLogprobs) != 2 ||
		content[0].TopLogprobs[1].Token != "No" || !reflect.DeepEqual(content[0].Bytes, []int64{89, 101, 115}) {
		t.Fatalf("choices[0].logprobs.content %+v", content)
	}
	stream := client.Chat.Completions.NewStreaming(t.Context(), params)
	var tokens []string
	for stream.Next() {
		ck := stream.Current()
		if len(ck.Choices) > 0 {
			for _, tok := range ck.Choices[0].Logprobs.Content {
				tokens = append(tokens, tok.Token)
			}
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if strings.Join(tokens, "|") != "Yes|!" {
		t.Fatalf("streamed tokens %q", tokens)
	}
}
