package server

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestLegacyTextCompletions: POST /v1/completions answers OpenAI's text_completion shape
// from a chat model — the prompt sent as one user message — whole (with echo, n choices,
// several prompts in order) or streamed (text chunks, the finish chunk, usage when asked,
// [DONE]); what it does not do is a 400 naming the field.
func TestLegacyTextCompletions(t *testing.T) {
	hs, _, up := completionsServer(t)
	url := hs.URL + "/v1/completions"
	resp, b := do2(t, "POST", url, testKey, `{"model":"up/ok","prompt":"Say hi","max_tokens":20,"echo":true}`, nil)
	var tc struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Model   string `json:"model"`
		Choices []struct {
			Text         string          `json:"text"`
			Index        int             `json:"index"`
			Logprobs     json.RawMessage `json:"logprobs"`
			FinishReason string          `json:"finish_reason"`
		} `json:"choices"`
		Usage struct {
			TotalTokens int `json:"total_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(b, &tc); err != nil || resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	if !strings.HasPrefix(tc.ID, "cmpl-") || tc.Object != "text_completion" || tc.Model != "up/ok" || len(tc.Choices) != 1 ||
		tc.Choices[0].Text != "Say hiHello from ok" || string(tc.Choices[0].Logprobs) != "null" || tc.Choices[0].FinishReason != "stop" || tc.Usage.TotalTokens != 10 {
		t.Fatalf("answer %s", b)
	}
	if last := up.last(); len(last) != 1 || last[0]["role"] != "user" || last[0]["content"] != "Say hi" {
		t.Fatalf("sent upstream %v, want the prompt as one user message", last)
	}

	resp, b = do2(t, "POST", url, testKey, `{"model":"up/ok","prompt":["one","two"],"n":2}`, nil)
	if err := json.Unmarshal(b, &tc); err != nil || resp.StatusCode != 200 || len(tc.Choices) != 4 || tc.Choices[3].Index != 3 || tc.Usage.TotalTokens != 40 {
		t.Fatalf("two prompts, n 2: %d %s", resp.StatusCode, b)
	}

	resp, b = do2(t, "POST", url, testKey, `{"model":"up/ok","prompt":"Stream it","stream":true,"stream_options":{"include_usage":true}}`, nil)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("stream: %d %s", resp.StatusCode, b)
	}
	var text strings.Builder
	var finish, usage, done bool
	for _, ev := range readSSE(t, strings.NewReader(string(b))) {
		if ev[1] == "[DONE]" {
			done = true
			continue
		}
		var ck struct {
			Object  string `json:"object"`
			Choices []struct {
				Text         string  `json:"text"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
			Usage *struct {
				TotalTokens int `json:"total_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal([]byte(ev[1]), &ck); err != nil || ck.Object != "text_completion" {
			t.Fatalf("chunk %q: %v", ev[1], err)
		}
		if len(ck.Choices) == 1 {
			text.WriteString(ck.Choices[0].Text)
			finish = finish || ck.Choices[0].FinishReason != nil && *ck.Choices[0].FinishReason == "stop"
		}
		usage = usage || ck.Usage != nil && ck.Usage.TotalTokens == 10
	}
	if text.String() != "Hello from ok" || !finish || !usage || !done {
		t.Fatalf("stream said %q finish %v usage %v done %v:\n%s", text.String(), finish, usage, done, b)
	}

	for body, param := range map[string]string{
		`{"model":"up/ok","prompt":"x","suffix":"}"}`:        "suffix",
		`{"model":"up/ok","prompt":"x","logprobs":6}`:        "logprobs",
		`{"model":"up/ok","prompt":"x","best_of":3}`:         "best_of",
		`{"model":"up/ok","prompt":""}`:                      "prompt",
		`{"model":"up/ok","prompt":[1,2,3]}`:                 "prompt",
		`{"model":"up/ok","prompt":["a","b"],"stream":true}`: "prompt",
		`{"model":"up/ok","prompt":"x","temperature":3}`:     "temperature",
		`{"model":"up/ok","prompt":"x","cache":{"ttl":-1}}`:  "cache.ttl",
		`{"prompt":"x"}`: "model",
	} {
		resp, b := do2(t, "POST", url, testKey, body, nil)
		var eb struct {
			Error struct {
				Param   *string `json:"param"`
				Message string  `json:"message"`
			} `json:"error"`
		}
		json.Unmarshal(b, &eb)
		if resp.StatusCode != 400 || eb.Error.Param == nil || *eb.Error.Param != param {
			t.Errorf("%s: %d %s, want 400 naming %s", body, resp.StatusCode, b, param)
		}
	}
}

// TestLegacyTextCompletionsStreamChoices: a streamed text completion with n choices is one
// stream whose chunks carry one choice each, by index (echo on each choice's first), a
// finish reason on each choice's last, the usage summed, then [DONE] — as OpenAI streams
// them and as /v1/chat/completions does.
func TestLegacyTextCompletionsStreamChoices(t *testing.T) {
	hs, _, _ := completionsServer(t)
	resp, b := do2(t, "POST", hs.URL+"/v1/completions", testKey, `{"model":"up/ok","prompt":"Stream it","n":2,"echo":true,"stream":true,"stream_options":{"include_usage":true}}`, nil)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("stream: %d %s", resp.StatusCode, b)
	}
	text, finish := map[int]string{}, map[int]string{}
	var ids []string
	var usage, done bool
	for _, ev := range readSSE(t, strings.NewReader(string(b))) {
		if ev[1] == "[DONE]" {
			done = true
			continue
		}
		var ck struct {
			ID      string `json:"id"`
			Object  string `json:"object"`
			Choices []struct {
				Text         string  `json:"text"`
				Index        int     `json:"index"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
			Usage *struct {
				TotalTokens int `json:"total_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal([]byte(ev[1]), &ck); err != nil || ck.Object != "text_completion" {
			t.Fatalf("chunk %q: %v", ev[1], err)
		}
		ids = append(ids, ck.ID)
		for _, c := range ck.Choices {
			text[c.Index] += c.Text
			if c.FinishReason != nil {
				finish[c.Index] = *c.FinishReason
			}
		}
		usage = usage || ck.Usage != nil && ck.Usage.TotalTokens == 20
	}
	if len(text) != 2 || text[0] != "Stream itHello from ok" || text[1] != "Stream itHello from ok" || finish[0] != "stop" || finish[1] != "stop" || !usage || !done {
		t.Fatalf("choices %v finish %v usage %v done %v:\n%s", text, finish, usage, done, b)
	}
	for _, id := range ids {
		if id != ids[0] || !strings.HasPrefix(id, "cmpl-") {
			t.Fatalf("chunk ids %v: one id, cmpl-…", ids)
		}
	}
}
