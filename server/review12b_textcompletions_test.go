package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// Several prompts are answered each as its own request, all billed to the key; when one
// of them fails (here: the key's max_requests refuses the second) the handler throws the
// answers that came away and returns the error. The key is charged for an answer its
// caller never receives — CompleteN's own rule ("an answer paid for is never thrown away
// because a sibling failed") is broken one level up.
func TestReview12bSeveralPromptsPaidAnswersThrownAway(t *testing.T) {
	hs, s := r11bServer(t, nil, &fakeOpenAIUpstream{}, []string{testKey})
	vk := issue(t, s, `{"max_requests":1}`)
	resp, b := post(t, hs.URL+"/v1/completions", vk.Key, `{"model":"openai/ok","prompt":["first","second"]}`)
	info := keyInfoOf(t, s, testKey, "/api/v1/keys/"+vk.ID)
	if resp.StatusCode != http.StatusOK && info.Spend.CostUSD > 0 {
		t.Fatalf("the key paid $%.3f for %d request(s) and got %d %s: the answer it paid for was thrown away",
			info.Spend.CostUSD, info.Spend.Requests, resp.StatusCode, b)
	}
}

// flakyChoiceUpstream answers as fakeOpenAIUpstream, but refuses (400, not retried) the
// first request whose user message is failFor.
type flakyChoiceUpstream struct {
	inner   fakeOpenAIUpstream
	failFor string
	once    sync.Once
}

func (u *flakyChoiceUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Messages []map[string]string `json:"messages"`
	}
	raw := new(strings.Builder)
	_, _ = io_copy(raw, r)
	_ = json.Unmarshal([]byte(raw.String()), &body)
	if len(body.Messages) == 1 && body.Messages[0]["content"] == u.failFor {
		fail := false
		u.once.Do(func() { fail = true })
		if fail {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"error":{"message":"scripted refusal","type":"invalid_request_error","param":null,"code":null}}`))
			return
		}
	}
	r.Body = readCloser(raw.String())
	u.inner.ServeHTTP(w, r)
}

// OpenAI's choices of a request with several prompts and n are prompt-major: choice i
// answers prompt i / n. When one choice of the first prompt fails (CompleteN keeps the
// others and reports the failure), the handler ignores the failure and numbers the
// choices 0, 1, 2...: the second prompt's answers take the failed choice's index, so a
// client maps them to the wrong prompt (and nothing says a choice is missing; the chat
// surface sets X-Switchyard-Choices-Failed).
func TestReview12bFailedChoiceShiftsOtherPromptsIndexes(t *testing.T) {
	hs, _ := r11bServer(t, nil, &flakyChoiceUpstream{failFor: "alpha"}, []string{testKey})
	resp, b := post(t, hs.URL+"/v1/completions", testKey, `{"model":"openai/ok","prompt":["alpha","beta"],"n":2,"echo":true}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	var tc struct {
		Choices []struct {
			Text  string `json:"text"`
			Index int    `json:"index"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(b, &tc); err != nil {
		t.Fatal(err)
	}
	prompts := []string{"alpha", "beta"}
	for _, c := range tc.Choices {
		if p := prompts[min(c.Index/2, 1)]; !strings.HasPrefix(c.Text, p) {
			t.Errorf("choice index %d answers %q, but index %d is prompt %d (%q) in OpenAI's numbering", c.Index, c.Text, c.Index, c.Index/2, p)
		}
	}
	if len(tc.Choices) < 4 && resp.Header.Get("X-Switchyard-Choices-Failed") == "" {
		t.Errorf("%d choices of 4 and no X-Switchyard-Choices-Failed header: %s", len(tc.Choices), b)
	}
}

// The chat surface answers a content filter's refusal as OpenAI does: 200, one choice
// whose finish_reason is content_filter (writeContentFiltered). /v1/completions sends the
// same refusal as a 400 error, which the SDKs raise as BadRequestError.
func TestReview12bTextCompletionContentFilterIsAnError(t *testing.T) {
	hs, _, _ := completionsServer(t)
	resp, b := do2(t, "POST", hs.URL+"/v1/chat/completions", testKey, `{"model":"up/filtered","messages":[{"role":"user","content":"bad"}]}`, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("chat: %d %s", resp.StatusCode, b)
	}
	resp, b = do2(t, "POST", hs.URL+"/v1/completions", testKey, `{"model":"up/filtered","prompt":"bad"}`, nil)
	var tc struct {
		Object  string `json:"object"`
		Choices []struct {
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
	}
	_ = json.Unmarshal(b, &tc)
	if resp.StatusCode != 200 || tc.Object != "text_completion" || len(tc.Choices) != 1 || tc.Choices[0].FinishReason != "content_filter" {
		t.Fatalf("text completion refused by the content filter: %d %s; want 200 with finish_reason content_filter as chat answers", resp.StatusCode, b)
	}
}

func io_copy(dst *strings.Builder, r *http.Request) (int64, error) {
	buf := make([]byte, 32<<10)
	var n int64
	for {
		k, err := r.Body.Read(buf)
		dst.Write(buf[:k])
		n += int64(k)
		if err != nil {
			return n, nil
		}
	}
}

type stringBody struct{ *strings.Reader }

func (stringBody) Close() error { return nil }

func readCloser(s string) stringBody { return stringBody{strings.NewReader(s)} }
