package server

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tiktoken-go/tokenizer"

	"github.com/switchyard-ai/switchyard/completions"
)

// tiktokenCount is the number of tokens of text in enc, from the tokenizer library itself.
func tiktokenCount(t *testing.T, enc tokenizer.Encoding, text string) int {
	t.Helper()
	c, err := tokenizer.Get(enc)
	if err != nil {
		t.Fatal(err)
	}
	n, err := c.Count(text)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestTokenCounter: LiteLLM's /utils/token_counter counts a prompt as tiktoken does for the
// model (o200k_base for gpt-4o), messages with OpenAI's chat overhead, a model group for its
// first deployment (model_used without the provider), and a name no provider serves by its
// name, as LiteLLM does.
func TestTokenCounter(t *testing.T) {
	hs, _, _ := completionsServerWith(t, func(o *completions.Options) {
		o.ModelGroups = map[string]completions.ModelGroup{"smart": {Models: []string{"up/gpt-4o", "up/gpt-3.5-turbo"}}}
	})
	url := hs.URL + tokenCounterPath
	const prompt = "The quick brown fox jumps over the lazy dog, then naps: 3.14159 zzz…"
	count := func(body string, header map[string]string) tokenCounterAnswer {
		t.Helper()
		resp, b := do2(t, "POST", url, testKey, body, header)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", body, resp.StatusCode, b)
		}
		var a tokenCounterAnswer
		if err := json.Unmarshal(b, &a); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		return a
	}

	promptJSON, _ := json.Marshal(prompt)
	a := count(`{"model":"smart","prompt":`+string(promptJSON)+`}`, nil)
	if want := tiktokenCount(t, tokenizer.O200kBase, prompt); a.TotalTokens != want || a.RequestModel != "smart" || a.ModelUsed != "gpt-4o" || a.TokenizerType != "openai_tokenizer" {
		t.Errorf("group prompt: %+v, want %d tokens for gpt-4o", a, want)
	}
	// gpt-3.5 counts with cl100k_base, which splits this prompt otherwise.
	a = count(`{"model":"up/gpt-3.5-turbo","prompt":`+string(promptJSON)+`}`, nil)
	if want := tiktokenCount(t, tokenizer.Cl100kBase, prompt); a.TotalTokens != want || a.ModelUsed != "up/gpt-3.5-turbo" {
		t.Errorf("model prompt: %+v, want %d", a, want)
	}
	if tiktokenCount(t, tokenizer.Cl100kBase, prompt) == tiktokenCount(t, tokenizer.O200kBase, prompt) {
		t.Fatal("the two encodings count the prompt alike: choose one that tells them apart")
	}
	// A name nothing here serves is counted by its name (LiteLLM counts any model).
	a = count(`{"model":"gpt-4o-mini","prompt":`+string(promptJSON)+`}`, map[string]string{"Authorization": "", "api-key": testKey})
	if want := tiktokenCount(t, tokenizer.O200kBase, prompt); a.TotalTokens != want || a.ModelUsed != "gpt-4o-mini" {
		t.Errorf("unserved model: %+v, want %d", a, want)
	}

	// Messages: 3 per message and its role and content, 3 to prime the reply.
	a = count(`{"model":"smart","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":`+string(promptJSON)+`}]}`, nil)
	enc := tokenizer.O200kBase
	want := 3 + (3 + tiktokenCount(t, enc, "system") + tiktokenCount(t, enc, "Be brief.")) + (3 + tiktokenCount(t, enc, "user") + tiktokenCount(t, enc, prompt))
	if a.TotalTokens != want {
		t.Errorf("messages: %+v, want %d", a, want)
	}
	// Tools beside messages add to the count.
	withTools := count(`{"model":"smart","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"get_weather","description":"Weather of a city","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}]}`, nil)
	without := count(`{"model":"smart","messages":[{"role":"user","content":"hi"}]}`, nil)
	if withTools.TotalTokens <= without.TotalTokens {
		t.Errorf("tools not counted: %d with, %d without", withTools.TotalTokens, without.TotalTokens)
	}
}

// TestTokenCounterRefusals: a bad body is a 400 in OpenAI's envelope naming the field; a
// model the key may not call is the 403 /v1 answers; no key is a 401.
func TestTokenCounterRefusals(t *testing.T) {
	hs, s, _ := completionsServer(t)
	url := hs.URL + tokenCounterPath
	for _, tc := range []struct{ what, body, param, says string }{
		{"no model", `{"prompt":"hi"}`, "model", "model"},
		{"no input", `{"model":"up/ok"}`, "messages", "prompt or messages"},
		{"both", `{"model":"up/ok","prompt":"hi","messages":[{"role":"user","content":"hi"}]}`, "prompt", "not both"},
		{"empty messages", `{"model":"up/ok","messages":[]}`, "messages", "at least one"},
		{"bad role", `{"model":"up/ok","messages":[{"role":"wizard","content":"hi"}]}`, "messages[0].role", "wizard"},
		{"prompt type", `{"model":"up/ok","prompt":7}`, "prompt", "prompt"},
		{"tools with prompt", `{"model":"up/ok","prompt":"hi","tools":[{"type":"function","function":{"name":"f"}}]}`, "tools", "tools"},
	} {
		resp, b := do2(t, "POST", url, testKey, tc.body, nil)
		e := wantOpenAIError(t, tc.what, resp, b, 400, "invalid_request_error", "")
		if e.Param == nil || *e.Param != tc.param || !strings.Contains(e.Message, tc.says) {
			t.Errorf("%s: param %v message %q, want %q saying %q", tc.what, e.Param, e.Message, tc.param, tc.says)
		}
	}
	resp, b := do2(t, "POST", url, testKey, `{"model":`, nil)
	wantOpenAIError(t, "malformed", resp, b, 400, "invalid_request_error", "")

	budget := completions.NewBudget(completions.BudgetLimits{AllowedModels: []string{"up/ok"}})
	revoke := s.Auth().AddTemporaryKey("counter-job-key", "job-1", completions.Scope{Budget: budget, Tag: "job-1"})
	defer revoke()
	v1Resp, v1Body := do2(t, "POST", hs.URL+"/v1/chat/completions", "counter-job-key", `{"model":"up/down","messages":[{"role":"user","content":"hi"}]}`, nil)
	v1Err := wantOpenAIError(t, "/v1 refusal", v1Resp, v1Body, 401, v1ErrType(t, v1Body), "401")
	resp, b = do2(t, "POST", url, "counter-job-key", `{"model":"up/down","prompt":"hi"}`, nil)
	if e := wantOpenAIError(t, "not allowed", resp, b, 401, v1Err.Type, "401"); e.Message != v1Err.Message {
		t.Errorf("refusal %q, /v1's %q", e.Message, v1Err.Message)
	}
	if resp, b := do2(t, "POST", url, "counter-job-key", `{"model":"up/ok","prompt":"hi"}`, nil); resp.StatusCode != 200 {
		t.Errorf("allowed model: %d %s", resp.StatusCode, b)
	}
	resp, b = do2(t, "POST", url, "", `{"model":"up/ok","prompt":"hi"}`, nil)
	wantOpenAIError(t, "no key", resp, b, 401, "invalid_request_error", "invalid_api_key")
}
