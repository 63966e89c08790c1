package server

import (
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestReview27hPassThroughCutStreamBillsItsText: an Anthropic or Gemini stream reports
// its prompt in its first event and its completion only at its end; one cut before that
// end (the upstream gone, or the client) was billed the first event's output (1 token, or
// none) however much text had been relayed. Its completion is now the estimate of the
// text relayed when that is more, marked estimated; a stream that ends whole is billed
// what it reports.
func TestReview27hPassThroughCutStreamBillsItsText(t *testing.T) {
	words := strings.Repeat("the quick brown fox jumps over the lazy dog ", 40)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		whole := strings.Contains(r.URL.RawQuery, "whole") || r.Header.Get("X-Whole") != ""
		w.Header().Set("Content-Type", "text/event-stream")
		flush := func(s string) {
			fmt.Fprint(w, s)
			w.(http.Flusher).Flush()
		}
		if strings.Contains(r.URL.Path, "/v1/messages") {
			flush(`event: message_start` + "\n" + `data: {"type":"message_start","message":{"model":"claude-haiku-4-5-20251001","usage":{"input_tokens":20,"output_tokens":1}}}` + "\n\n")
			flush(`event: content_block_start` + "\n" + `data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}` + "\n\n")
			for _, w := range strings.SplitAfter(words, " ") {
				flush(`event: content_block_delta` + "\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"` + w + `"}}` + "\n\n")
			}
			if whole {
				flush(`event: content_block_stop` + "\n" + `data: {"type":"content_block_stop","index":0}` + "\n\n")
				flush(`event: message_delta` + "\n" + `data: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":3}}` + "\n\n")
				flush(`event: message_stop` + "\n" + `data: {"type":"message_stop"}` + "\n\n")
				return
			}
			panic(http.ErrAbortHandler) // the upstream cut
		}
		flush(`data: {"candidates":[{"index":0,"content":{"role":"model","parts":[{"text":""}]}}],"usageMetadata":{"promptTokenCount":8,"totalTokenCount":8},"modelVersion":"gemini-2.0-flash"}` + "\n\n")
		for _, w := range strings.SplitAfter(words, " ") {
			flush(`data: {"candidates":[{"index":0,"content":{"role":"model","parts":[{"text":"` + w + `"}]}}]}` + "\n\n")
		}
		if whole {
			flush(`data: {"candidates":[{"index":0,"content":{"role":"model","parts":[{"text":""}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":8,"candidatesTokenCount":3,"totalTokenCount":11}}` + "\n\n")
			return
		}
		panic(http.ErrAbortHandler)
	}))
	t.Cleanup(up.Close)
	reg := providers.NewRegistry(
		providers.NewAnthropic(providers.Config{Name: "anthropic", BaseURL: up.URL, APIKey: "k"}),
		providers.NewGemini(providers.Config{Name: "gemini", BaseURL: up.URL, APIKey: "k"}))
	hs, s := passThroughServerOver(t, reg)

	const claude, gemini = "anthropic/claude-haiku-4-5-20251001", "gemini/gemini-2.0-flash"
	vk := issue(t, s, `{"name":"sdk","models":["`+claude+`","`+gemini+`"],"max_budget_usd":5}`)
	cat := providers.DefaultCatalog()
	textTokens := func(model string) int {
		return providers.EstimateUsage(model, nil, &providers.Response{Text: words}).CompletionTokens
	}
	claudeBody := `{"model":"claude-haiku-4-5-20251001","max_tokens":1000,"stream":true,"messages":[{"role":"user","content":"tell me"}]}`
	geminiBody := `{"contents":[{"role":"user","parts":[{"text":"tell me"}]}]}`
	cases := []struct {
		name, path, body string
		header           map[string]string
		model            string
		want             providers.Usage
		estimated        bool
	}{
		{"anthropic cut", "/anthropic/v1/messages", claudeBody, map[string]string{"x-api-key": vk.Key}, claude,
			providers.Usage{PromptTokens: 20, CompletionTokens: textTokens(claude)}, true},
		{"anthropic whole", "/anthropic/v1/messages", claudeBody, map[string]string{"x-api-key": vk.Key, "X-Whole": "1"}, claude,
			providers.Usage{PromptTokens: 20, CompletionTokens: 3}, false},
		{"gemini cut", "/gemini/v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse", geminiBody, map[string]string{"x-goog-api-key": vk.Key}, gemini,
			providers.Usage{PromptTokens: 8, CompletionTokens: textTokens(gemini)}, true},
		{"gemini whole", "/gemini/v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse&whole=1", geminiBody, map[string]string{"x-goog-api-key": vk.Key}, gemini,
			providers.Usage{PromptTokens: 8, CompletionTokens: 3}, false},
	}
	spent := 0.0
	for i, c := range cases {
		resp, _ := sendPassThrough(t, "POST", hs.URL+c.path, c.body, c.header)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d", c.name, resp.StatusCode)
		}
		rows := passThroughHistory(t, s, vk.Key)
		if len(rows) != i+1 {
			t.Fatalf("%s: %d requests recorded, want %d", c.name, len(rows), i+1)
		}
		row := rows[0]
		if row.PromptTokens != c.want.PromptTokens || row.CompletionTokens != c.want.CompletionTokens || row.UsageEstimated != c.estimated {
			t.Errorf("%s: recorded %d+%d tokens (estimated %v), want %d+%d (estimated %v)", c.name,
				row.PromptTokens, row.CompletionTokens, row.UsageEstimated, c.want.PromptTokens, c.want.CompletionTokens, c.estimated)
		}
		spent += cat.Cost(c.model, c.want).TotalUSD
		if info := keyInfoOf(t, s, testKey, "/api/v1/keys/"+vk.ID); math.Abs(info.Spend.CostUSD-spent) > 1e-12 {
			t.Errorf("%s: key spend %v, want %v", c.name, info.Spend.CostUSD, spent)
		}
	}
}
