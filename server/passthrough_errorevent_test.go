package server

import (
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestPassThroughAnthropicErrorEventBilling: an Anthropic stream forwarded on the
// pass-through route that sends message_start (counting the prompt) and then an error
// event (overloaded_error) before any content answered nothing: it is billed nothing, as
// the gateway's own routes bill no stream failing before its first fragment, and recorded
// as a failed stream (it was billed its prompt, and recorded ok). One whose error event
// comes after content is billed as a stream cut short — the prompt message_start counted
// and the text relayed, estimated — and recorded failed too. The client gets the events
// as they came either way.
func TestPassThroughAnthropicErrorEventBilling(t *testing.T) {
	words := strings.Repeat("the quick brown fox jumps over the lazy dog ", 10)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		flush := func(s string) {
			fmt.Fprint(w, s)
			w.(http.Flusher).Flush()
		}
		flush("event: message_start\ndata: " + `{"type":"message_start","message":{"model":"claude-haiku-4-5-20251001","usage":{"input_tokens":20,"output_tokens":1}}}` + "\n\n")
		flush("event: ping\ndata: {\"type\":\"ping\"}\n\n")
		if r.Header.Get("X-Content") != "" {
			flush("event: content_block_start\ndata: " + `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}` + "\n\n")
			flush("event: content_block_delta\ndata: " + `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"` + words + `"}}` + "\n\n")
		} else {
			// An empty text block opened is no content yet.
			flush("event: content_block_start\ndata: " + `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}` + "\n\n")
		}
		flush("event: error\ndata: " + `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}` + "\n\n")
	}))
	t.Cleanup(up.Close)
	reg := providers.NewRegistry(providers.NewAnthropic(providers.Config{Name: "anthropic", BaseURL: up.URL, APIKey: "k"}))
	hs, s := passThroughServerOver(t, reg)
	const claude = "anthropic/claude-haiku-4-5-20251001"
	vk := issue(t, s, `{"name":"sdk","models":["`+claude+`"],"max_budget_usd":5}`)
	body := `{"model":"claude-haiku-4-5-20251001","max_tokens":1000,"stream":true,"messages":[{"role":"user","content":"tell me"}]}`
	spend := func() float64 { return keyInfoOf(t, s, testKey, "/api/v1/keys/"+vk.ID).Spend.CostUSD }

	resp, raw := sendPassThrough(t, "POST", hs.URL+"/anthropic/v1/messages", body, map[string]string{"x-api-key": vk.Key})
	if resp.StatusCode != 200 || !strings.Contains(raw, "overloaded_error") {
		t.Fatalf("relayed %d %q", resp.StatusCode, raw)
	}
	rows := passThroughHistory(t, s, vk.Key)
	if len(rows) != 1 {
		t.Fatalf("%d requests recorded", len(rows))
	}
	if r := rows[0]; r.Outcome != "stream_error" || r.PromptTokens != 0 || r.CompletionTokens != 0 || r.CostUSD != 0 {
		t.Errorf("error before content: recorded %s with %d+%d tokens $%v, want stream_error billed nothing", r.Outcome, r.PromptTokens, r.CompletionTokens, r.CostUSD)
	}
	if got := spend(); got != 0 {
		t.Errorf("error before content: key spend %v, want 0", got)
	}

	resp, raw = sendPassThrough(t, "POST", hs.URL+"/anthropic/v1/messages", body, map[string]string{"x-api-key": vk.Key, "X-Content": "1"})
	if resp.StatusCode != 200 || !strings.Contains(raw, "overloaded_error") {
		t.Fatalf("relayed %d %q", resp.StatusCode, raw)
	}
	want := providers.Usage{PromptTokens: 20, CompletionTokens: providers.EstimateUsage(claude, nil, &providers.Response{Text: words}).CompletionTokens}
	rows = passThroughHistory(t, s, vk.Key)
	if len(rows) != 2 {
		t.Fatalf("%d requests recorded", len(rows))
	}
	if r := rows[0]; r.Outcome != "stream_error" || r.PromptTokens != want.PromptTokens || r.CompletionTokens != want.CompletionTokens || !r.UsageEstimated {
		t.Errorf("error after content: recorded %s with %d+%d tokens (estimated %v), want stream_error with %d+%d estimated",
			r.Outcome, r.PromptTokens, r.CompletionTokens, r.UsageEstimated, want.PromptTokens, want.CompletionTokens)
	}
	if got, w := spend(), providers.DefaultCatalog().Cost(claude, want).TotalUSD; w <= 0 || math.Abs(got-w) > 1e-12 {
		t.Errorf("error after content: key spend %v, want %v", got, w)
	}
}
