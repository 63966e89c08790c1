package providers_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// fakeLogprobsUpstream is a fake provider endpoint: it records each request body and
// answers with body (an SSE stream when it starts with "data:").
type fakeLogprobsUpstream struct {
	srv    *httptest.Server
	mu     sync.Mutex
	bodies []map[string]any
}

func newFakeLogprobsUpstream(t *testing.T, body string) *fakeLogprobsUpstream {
	u := &fakeLogprobsUpstream{}
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var m map[string]any
		_ = json.Unmarshal(raw, &m)
		u.mu.Lock()
		u.bodies = append(u.bodies, m)
		u.mu.Unlock()
		if strings.HasPrefix(body, "data:") {
			w.Header().Set("Content-Type", "text/event-stream")
		} else {
			w.Header().Set("Content-Type", "application/json")
		}
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(u.srv.Close)
	return u
}

func (u *fakeLogprobsUpstream) last(t *testing.T) map[string]any {
	t.Helper()
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.bodies) == 0 {
		t.Fatal("the upstream was not called")
	}
	return u.bodies[len(u.bodies)-1]
}

func logprobsRequest(model string, top int) *providers.Request {
	return &providers.Request{Model: model, Messages: []providers.Message{{Role: "user", Content: "Positive or negative?"}}, Logprobs: true, TopLogprobs: top}
}

// openAILogprobsAnswer is a chat.completion with log probabilities, as OpenAI's
// gpt-4o-mini answers logprobs: true, top_logprobs: 2.
const openAILogprobsAnswer = `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-4o-mini-2024-07-18",
"choices":[{"index":0,"message":{"role":"assistant","content":"Positive.","refusal":null},
"logprobs":{"content":[
 {"token":"Positive","logprob":-0.0001,"bytes":[80,111,115,105,116,105,118,101],"top_logprobs":[{"token":"Positive","logprob":-0.0001,"bytes":[80,111,115,105,116,105,118,101]},{"token":"Negative","logprob":-9.2,"bytes":[78,101,103,97,116,105,118,101]}]},
 {"token":".","logprob":-0.5,"bytes":[46],"top_logprobs":[{"token":".","logprob":-0.5,"bytes":[46]},{"token":"<|end|>","logprob":-1.0,"bytes":null}]}
],"refusal":null},"finish_reason":"stop"}],
"usage":{"prompt_tokens":9,"completion_tokens":2,"total_tokens":11}}`

func TestOpenAILogprobsAnswer(t *testing.T) {
	up := newFakeLogprobsUpstream(t, openAILogprobsAnswer)
	p := providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: up.srv.URL + "/v1", APIKey: testKey, HTTPClient: up.srv.Client()})
	resp, err := p.Complete(context.Background(), logprobsRequest("gpt-4o-mini", 2))
	if err != nil {
		t.Fatal(err)
	}
	body := up.last(t)
	if body["logprobs"] != true || body["top_logprobs"] != 2.0 {
		t.Fatalf("request logprobs %v top_logprobs %v, want true and 2", body["logprobs"], body["top_logprobs"])
	}
	lp := resp.Logprobs
	if lp == nil || len(lp.Content) != 2 || lp.Refusal != nil {
		t.Fatalf("logprobs %+v", lp)
	}
	want := providers.TokenLogprob{Token: "Positive", Logprob: -0.0001, Bytes: []int{80, 111, 115, 105, 116, 105, 118, 101},
		TopLogprobs: []providers.TopLogprob{{Token: "Positive", Logprob: -0.0001, Bytes: []int{80, 111, 115, 105, 116, 105, 118, 101}}, {Token: "Negative", Logprob: -9.2, Bytes: []int{78, 101, 103, 97, 116, 105, 118, 101}}}}
	if !reflect.DeepEqual(lp.Content[0], want) {
		t.Fatalf("first token %+v, want %+v", lp.Content[0], want)
	}
	if got := lp.Content[1].TopLogprobs[1]; got.Token != "<|end|>" || got.Bytes != nil {
		t.Fatalf("a token without bytes: %+v", got)
	}

	// Not asked: none is sent, none is read.
	resp, err = p.Complete(context.Background(), &providers.Request{Model: "gpt-4o-mini", Messages: []providers.Message{{Role: "user", Content: "Hi"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := up.last(t)["logprobs"]; ok || resp.Logprobs != nil {
		t.Fatalf("logprobs sent (%v) or read (%+v) unasked", up.last(t)["logprobs"], resp.Logprobs)
	}
}

// openAILogprobsStream is a chat.completion.chunk stream with log probabilities on each
// text event and on a refusal event.
const openAILogprobsStream = `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":{"content":[],"refusal":null},"finish_reason":null}]}

data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"Yes"},"logprobs":{"content":[{"token":"Yes","logprob":-0.25,"bytes":[89,101,115],"top_logprobs":[{"token":"Yes","logprob":-0.25,"bytes":[89,101,115]},{"token":"No","logprob":-1.5,"bytes":[78,111]}]}],"refusal":null},"finish_reason":null}]}

data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"!"},"logprobs":{"content":[{"token":"!","logprob":-0.75,"bytes":[33],"top_logprobs":[]}],"refusal":null},"finish_reason":null}]}

data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"refusal":"No"},"logprobs":{"content":null,"refusal":[{"token":"No","logprob":-0.1,"bytes":[78,111],"top_logprobs":[]}]},"finish_reason":null}]}

data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}]}

data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":3,"total_tokens":6}}

data: [DONE]

`

func TestOpenAILogprobsStream(t *testing.T) {
	up := newFakeLogprobsUpstream(t, openAILogprobsStream)
	p := providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: up.srv.URL + "/v1", APIKey: testKey, HTTPClient: up.srv.Client()})
	s, err := p.Stream(context.Background(), logprobsRequest("gpt-4o-mini", 2))
	if err != nil {
		t.Fatal(err)
	}
	chunks := collect(t, s)
	if body := up.last(t); body["logprobs"] != true || body["top_logprobs"] != 2.0 {
		t.Fatalf("request logprobs %v top_logprobs %v", body["logprobs"], body["top_logprobs"])
	}
	var content, refusal []providers.TokenLogprob
	for _, c := range chunks {
		if c.Logprobs == nil {
			continue
		}
		if c.Text == "" && len(c.Logprobs.Content) > 0 {
			t.Fatalf("content log probabilities on a chunk without text: %+v", c)
		}
		content = append(content, c.Logprobs.Content...)
		refusal = append(refusal, c.Logprobs.Refusal...)
	}
	if len(content) != 2 || content[0].Token != "Yes" || content[0].Logprob != -0.25 || len(content[0].TopLogprobs) != 2 ||
		content[1].Token != "!" || len(content[1].TopLogprobs) != 0 || content[1].TopLogprobs == nil {
		t.Fatalf("content log probabilities %+v", content)
	}
	if len(refusal) != 1 || refusal[0].Token != "No" {
		t.Fatalf("refusal log probabilities %+v", refusal)
	}
}

// geminiLogprobsAnswer is a generateContent answer with responseLogprobs and logprobs: 2.
const geminiLogprobsAnswer = `{"candidates":[{"content":{"parts":[{"text":"Oui é"}],"role":"model"},"finishReason":"STOP","avgLogprobs":-0.3,
"logprobsResult":{"topCandidates":[
 {"candidates":[{"token":"Oui","tokenId":7,"logProbability":-0.1},{"token":"Non","tokenId":8,"logProbability":-2.4}]},
 {"candidates":[{"token":" é","tokenId":9,"logProbability":-0.5}]}],
 "chosenCandidates":[{"token":"Oui","tokenId":7,"logProbability":-0.1},{"token":" é","tokenId":9,"logProbability":-0.5}]}}],
"usageMetadata":{"promptTokenCount":4,"candidatesTokenCount":2,"totalTokenCount":6},"modelVersion":"gemini-2.0-flash"}`

func TestGeminiLogprobsAnswer(t *testing.T) {
	up := newFakeLogprobsUpstream(t, geminiLogprobsAnswer)
	p := providers.NewGemini(providers.Config{BaseURL: up.srv.URL, APIKey: testKey, HTTPClient: up.srv.Client()})
	resp, err := p.Complete(context.Background(), logprobsRequest("gemini-2.0-flash", 2))
	if err != nil {
		t.Fatal(err)
	}
	gc, _ := up.last(t)["generationConfig"].(map[string]any)
	if gc["responseLogprobs"] != true || gc["logprobs"] != 2.0 {
		t.Fatalf("generationConfig %v, want responseLogprobs true and logprobs 2", gc)
	}
	want := &providers.Logprobs{Content: []providers.TokenLogprob{
		{Token: "Oui", Logprob: -0.1, Bytes: []int{'O', 'u', 'i'}, TopLogprobs: []providers.TopLogprob{
			{Token: "Oui", Logprob: -0.1, Bytes: []int{'O', 'u', 'i'}}, {Token: "Non", Logprob: -2.4, Bytes: []int{'N', 'o', 'n'}}}},
		{Token: " é", Logprob: -0.5, Bytes: []int{' ', 0xc3, 0xa9}, TopLogprobs: []providers.TopLogprob{{Token: " é", Logprob: -0.5, Bytes: []int{' ', 0xc3, 0xa9}}}},
	}}
	if !reflect.DeepEqual(resp.Logprobs, want) {
		t.Fatalf("logprobs %+v\nwant %+v", resp.Logprobs, want)
	}
	// Without top_logprobs Gemini is asked for the chosen tokens only.
	if _, err := p.Complete(context.Background(), logprobsRequest("gemini-2.0-flash", 0)); err != nil {
		t.Fatal(err)
	}
	if gc, _ := up.last(t)["generationConfig"].(map[string]any); gc["responseLogprobs"] != true || gc["logprobs"] != nil {
		t.Fatalf("generationConfig %v, want responseLogprobs alone", gc)
	}
}

const geminiLogprobsStream = `data: {"candidates":[{"content":{"parts":[{"text":"Oui"}],"role":"model"},"logprobsResult":{"topCandidates":[{"candidates":[{"token":"Oui","logProbability":-0.1},{"token":"Non","logProbability":-2.4}]}],"chosenCandidates":[{"token":"Oui","logProbability":-0.1}]}}],"modelVersion":"gemini-2.0-flash"}

data: {"candidates":[{"content":{"parts":[{"text":"!"}],"role":"model"},"finishReason":"STOP","logprobsResult":{"topCandidates":[{"candidates":[{"token":"!","logProbability":-0.2}]}],"chosenCandidates":[{"token":"!","logProbability":-0.2}]}}],"usageMetadata":{"promptTokenCount":4,"candidatesTokenCount":2,"totalTokenCount":6},"modelVersion":"gemini-2.0-flash"}

`

func TestGeminiLogprobsStream(t *testing.T) {
	up := newFakeLogprobsUpstream(t, geminiLogprobsStream)
	p := providers.NewGemini(providers.Config{BaseURL: up.srv.URL, APIKey: testKey, HTTPClient: up.srv.Client()})
	s, err := p.Stream(context.Background(), logprobsRequest("gemini-2.0-flash", 2))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range collect(t, s) {
		if c.Logprobs == nil {
			continue
		}
		for _, tok := range c.Logprobs.Content {
			if c.Text == "" || !strings.Contains(c.Text, tok.Token) {
				t.Fatalf("token %q on chunk %q", tok.Token, c.Text)
			}
			got = append(got, tok.Token)
			if len(tok.Bytes) != len(tok.Token) || len(tok.TopLogprobs) == 0 {
				t.Fatalf("token %+v", tok)
			}
		}
	}
	if strings.Join(got, "|") != "Oui|!" {
		t.Fatalf("tokens %q", got)
	}
}

// Log probabilities are the OpenAI format's (but its reasoning models') and Gemini's:
// providers.Check refuses the other adapters, naming logprobs.
func TestLogprobsCheck(t *testing.T) {
	cfg := providers.Config{APIKey: testKey}
	named := func(name string) providers.Config { c := cfg; c.Name = name; return c }
	vertex, err := providers.NewVertex(providers.VertexConfig{Config: cfg, Project: "p", Location: "us-east5", AccessToken: testKey})
	if err != nil {
		t.Fatal(err)
	}
	compatible := providers.NewOpenAI(providers.Config{Name: "vllm", BaseURL: "http://127.0.0.1:1/v1"})
	for _, tc := range []struct {
		p     providers.Provider
		model string
		ok    bool
	}{
		{providers.NewOpenAI(named("openai")), "gpt-4o-mini", true},
		{providers.NewOpenAI(named("openai")), "gpt-4.1", true},
		{providers.NewOpenAI(named("openai")), "o3-mini", false},
		{providers.NewOpenAI(named("openai")), "o1", false},
		{providers.NewOpenAI(named("openai")), "gpt-5", false},
		{compatible, "o3-like-local-model", true}, // another server's model of that name is not OpenAI's
		{providers.NewGemini(cfg), "gemini-2.0-flash", true},
		{vertex, "gemini-2.0-flash", true},
		{vertex, "claude-sonnet-4@20250514", false},
		{providers.NewAnthropic(cfg), "claude-sonnet-4-20250514", false},
		{providers.NewBedrock(named("bedrock")), "anthropic.claude-3-5-haiku-20241022-v1:0", false},
	} {
		err := providers.Check(tc.p, tc.model, logprobsRequest(tc.model, 3))
		var ue *providers.UnsupportedError
		switch {
		case tc.ok && err != nil:
			t.Errorf("%s/%s: %v", tc.p.Name(), tc.model, err)
		case !tc.ok && (!errors.As(err, &ue) || ue.Field != "logprobs"):
			t.Errorf("%s/%s: %v, want an UnsupportedError naming logprobs", tc.p.Name(), tc.model, err)
		}
		// A request without them is every adapter's.
		if err := providers.Check(tc.p, tc.model, &providers.Request{Model: tc.model, Messages: []providers.Message{{Role: "user", Content: "x"}}}); err != nil {
			t.Errorf("%s/%s without logprobs: %v", tc.p.Name(), tc.model, err)
		}
	}
}
