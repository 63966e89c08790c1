package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/completions"
)

// TestOpenAIChatStreamsChoices: /v1/chat/completions streams n choices as OpenAI does —
// one chunk stream whose chunks carry one choice each, with its index, a role on each
// choice's first chunk and a finish reason on its last, the usage summed (with the
// gateway's summary: both choices' attempts and costs), then [DONE].
// Every choice failing before it started is the error n 1 gives; every one failing
// mid-stream ends with the error event and no [DONE].
func TestOpenAIChatStreamsChoices(t *testing.T) {
	hs, _, _ := completionsServer(t)
	url := hs.URL + "/v1/chat/completions"
	resp, b := post(t, url, testKey, `{"model":"up/ok","n":2,"stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" || resp.Header.Get("X-Switchyard-Choices-Failed") != "" {
		t.Fatalf("%d %v %s", resp.StatusCode, resp.Header, b)
	}
	evs := readSSE(t, strings.NewReader(string(b)))
	if len(evs) == 0 || evs[len(evs)-1][1] != "[DONE]" {
		t.Fatalf("events %q", evs)
	}
	text := map[int]string{}
	finish := map[int]string{}
	var id string
	var usage *completions.OpenAIUsage
	var summary *completions.OpenAIStreamExtension
	for _, e := range evs[:len(evs)-1] {
		var c completions.OpenAIChunk
		if err := json.Unmarshal([]byte(e[1]), &c); err != nil {
			t.Fatalf("%s: %v", e[1], err)
		}
		if id == "" {
			id = c.ID
		}
		if c.ID != id || c.Object != "chat.completion.chunk" {
			t.Errorf("chunk %s", e[1])
		}
		if c.Usage != nil {
			usage, summary = c.Usage, c.Switchyard
			continue
		}
		if len(c.Choices) != 1 {
			t.Fatalf("chunk %s", e[1])
		}
		ch := c.Choices[0]
		if _, seen := text[ch.Index]; !seen && ch.Delta.Role != "assistant" {
			t.Errorf("choice %d's first chunk has no role: %s", ch.Index, e[1])
		}
		text[ch.Index] += ch.Delta.Content
		if ch.FinishReason != nil {
			finish[ch.Index] = *ch.FinishReason
		}
	}
	if len(text) != 2 || text[0] != "Hello from ok" || text[1] != "Hello from ok" || finish[0] != "stop" || finish[1] != "stop" {
		t.Errorf("choices %v, finish %v", text, finish)
	}
	if usage == nil || usage.PromptTokens != 14 || usage.CompletionTokens != 6 {
		t.Errorf("usage %+v", usage)
	}
	// The usage chunk's summary: both choices' attempts and costs.
	if summary == nil || summary.Provider != "up" || len(summary.Attempts) != 2 || summary.Costs == nil {
		t.Errorf("usage chunk's summary %+v, want both choices' attempts and costs", summary)
	}

	one, b1 := post(t, url, testKey, `{"model":"up/down","stream":true,"max_retries":0,"messages":[{"role":"user","content":"hi"}]}`)
	resp, b = post(t, url, testKey, `{"model":"up/down","n":2,"stream":true,"max_retries":0,"messages":[{"role":"user","content":"hi"}]}`)
	if resp.StatusCode != one.StatusCode || resp.StatusCode < 400 || !strings.Contains(string(b), `"error"`) || resp.Header.Get("Content-Type") != one.Header.Get("Content-Type") {
		t.Errorf("all failing: %d %s; n 1: %d %s", resp.StatusCode, b, one.StatusCode, b1)
	}

	resp, b = post(t, url, testKey, `{"model":"up/cut","n":2,"stream":true,"max_retries":0,"messages":[{"role":"user","content":"hi"}]}`)
	evs = readSSE(t, strings.NewReader(string(b)))
	if resp.StatusCode != http.StatusOK || len(evs) == 0 || evs[len(evs)-1][1] == "[DONE]" || !strings.Contains(evs[len(evs)-1][1], "stream_failed") {
		t.Errorf("cut mid-stream: %d %q", resp.StatusCode, evs)
	}
}

// TestStreamedChoicesPartlyFailed: streamed n choices with a key whose budget pays for some
// of them stream those, numbered 0..k-1 (an SDK's accumulator would make an empty choice of
// a gap), and X-Switchyard-Choices-Failed counts the rest, as the whole answer does.
func TestStreamedChoicesPartlyFailed(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	vk := issue(t, s, `{"max_requests":2}`)
	resp, b := post(t, hs.URL+"/v1/chat/completions", vk.Key, `{"model":"openai/ok","n":3,"stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" || resp.Header.Get("X-Switchyard-Choices-Failed") != "1" {
		t.Fatalf("n 3 with 2 requests left: %d, header %q, %s", resp.StatusCode, resp.Header.Get("X-Switchyard-Choices-Failed"), b)
	}
	evs := readSSE(t, strings.NewReader(string(b)))
	if len(evs) == 0 || evs[len(evs)-1][1] != "[DONE]" {
		t.Fatalf("events %q", evs)
	}
	finished := finishedChoices(t, evs)
	if len(finished) != 2 || !finished[0] || !finished[1] {
		t.Errorf("finished choices %v, want 0 and 1", finished)
	}
	if info := keyInfoOf(t, s, testKey, "/api/v1/keys/"+vk.ID); info.Spend.Requests != 2 {
		t.Fatalf("spend %+v", info.Spend)
	}

	// The legacy text completions surface likewise.
	vk = issue(t, s, `{"max_requests":2}`)
	resp, b = post(t, hs.URL+"/v1/completions", vk.Key, `{"model":"openai/ok","n":3,"stream":true,"prompt":"hi"}`)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("X-Switchyard-Choices-Failed") != "1" {
		t.Fatalf("text completion, n 3 with 2 requests left: %d, header %q, %s", resp.StatusCode, resp.Header.Get("X-Switchyard-Choices-Failed"), b)
	}
	finished = finishedChoices(t, readSSE(t, strings.NewReader(string(b))))
	if len(finished) != 2 || !finished[0] || !finished[1] {
		t.Errorf("text completion: finished choices %v, want 0 and 1", finished)
	}
}

// finishedChoices are the indices of the choices whose finish reason the stream's chunks
// (chat or text completion ones) gave.
func finishedChoices(t *testing.T, evs [][2]string) map[int]bool {
	t.Helper()
	finished := map[int]bool{}
	for _, e := range evs {
		if e[1] == "[DONE]" {
			continue
		}
		var c struct {
			Choices []struct {
				Index        int     `json:"index"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(e[1]), &c); err != nil {
			t.Fatalf("%s: %v", e[1], err)
		}
		for _, ch := range c.Choices {
			if ch.FinishReason != nil {
				finished[ch.Index] = true
			}
		}
	}
	return finished
}
