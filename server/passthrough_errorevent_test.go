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

// TestPassThroughOpenAIGeminiErrorBilling: an OpenAI chat stream whose chunk carries an
// error object, and a Gemini stream sending an error object, on the pass-through routes
// failed though their status was 200: before any content they are billed nothing, after
// content billed as a stream cut short (estimated); either way recorded as a failed
// stream, not ok, and the client gets the events as they came.
func TestPassThroughOpenAIGeminiErrorBilling(t *testing.T) {
	words := strings.Repeat("the quick brown fox jumps over the lazy dog ", 10)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		flush := func(s string) {
			fmt.Fprint(w, "data: "+s+"\n\n")
			w.(http.Flusher).Flush()
		}
		content := r.Header.Get("X-Content") != ""
		if strings.Contains(r.URL.Path, "chat/completions") {
			flush(`{"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`)
			if content {
				flush(`{"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"` + words + `"}}]}`)
			}
			flush(`{"error":{"message":"The server had an error while processing your request.","type":"server_error","code":null}}`)
			return
		}
		flush(`{"candidates":[{"content":{"role":"model","parts":[{"text":""}]}}],"usageMetadata":{"promptTokenCount":20},"modelVersion":"gemini-2.0-flash"}`)
		if content {
			flush(`{"candidates":[{"content":{"role":"model","parts":[{"text":"` + words + `"}]}}],"usageMetadata":{"promptTokenCount":20},"modelVersion":"gemini-2.0-flash"}`)
		}
		flush(`{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}`)
	}))
	t.Cleanup(up.Close)
	reg := providers.NewRegistry(
		providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: up.URL + "/v1", APIKey: "k"}),
		providers.NewGemini(providers.Config{Name: "gemini", BaseURL: up.URL, APIKey: "k"}))
	hs, s := passThroughServerOver(t, reg)
	for _, tc := range []struct {
		what, model, path, body, cred, want string
	}{
		{"openai", "openai/gpt-4o-mini", "/openai/v1/chat/completions",
			`{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"tell me"}]}`, "Authorization", "server_error"},
		{"gemini", "gemini/gemini-2.0-flash", "/gemini/v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse",
			`{"contents":[{"role":"user","parts":[{"text":"tell me"}]}]}`, "x-goog-api-key", "UNAVAILABLE"},
	} {
		vk := issue(t, s, `{"name":"sdk-`+tc.what+`","models":["`+tc.model+`"],"max_budget_usd":5}`)
		cred := vk.Key
		if tc.cred == "Authorization" {
			cred = "Bearer " + vk.Key
		}
		spend := func() float64 { return keyInfoOf(t, s, testKey, "/api/v1/keys/"+vk.ID).Spend.CostUSD }
		resp, raw := sendPassThrough(t, "POST", hs.URL+tc.path, tc.body, map[string]string{tc.cred: cred})
		if resp.StatusCode != 200 || !strings.Contains(raw, tc.want) {
			t.Fatalf("%s: relayed %d %q", tc.what, resp.StatusCode, raw)
		}
		rows := passThroughHistory(t, s, vk.Key)
		if len(rows) != 1 {
			t.Fatalf("%s: %d requests recorded", tc.what, len(rows))
		}
		if r := rows[0]; r.Outcome != "stream_error" || r.PromptTokens != 0 || r.CompletionTokens != 0 || r.CostUSD != 0 {
			t.Errorf("%s: error before content: recorded %s with %d+%d tokens $%v, want stream_error billed nothing", tc.what, r.Outcome, r.PromptTokens, r.CompletionTokens, r.CostUSD)
		}
		if got := spend(); got != 0 {
			t.Errorf("%s: error before content: key spend %v, want 0", tc.what, got)
		}

		resp, raw = sendPassThrough(t, "POST", hs.URL+tc.path, tc.body, map[string]string{tc.cred: cred, "X-Content": "1"})
		if resp.StatusCode != 200 || !strings.Contains(raw, tc.want) {
			t.Fatalf("%s: relayed %d %q", tc.what, resp.StatusCode, raw)
		}
		completion := providers.EstimateUsage(tc.model, nil, &providers.Response{Text: words}).CompletionTokens
		rows = passThroughHistory(t, s, vk.Key)
		if len(rows) != 2 {
			t.Fatalf("%s: %d requests recorded", tc.what, len(rows))
		}
		r := rows[0]
		if r.Outcome != "stream_error" || r.PromptTokens == 0 || r.CompletionTokens != completion || !r.UsageEstimated {
			t.Errorf("%s: error after content: recorded %s with %d+%d tokens (estimated %v), want stream_error with the prompt and %d estimated",
				tc.what, r.Outcome, r.PromptTokens, r.CompletionTokens, r.UsageEstimated, completion)
		}
		if tc.what == "gemini" && r.PromptTokens != 20 {
			t.Errorf("gemini: error after content: %d prompt tokens, want the 20 reported", r.PromptTokens)
		}
		want := providers.DefaultCatalog().Cost(tc.model, providers.Usage{PromptTokens: r.PromptTokens, CompletionTokens: r.CompletionTokens}).TotalUSD
		if got := spend(); want <= 0 || math.Abs(got-want) > 1e-12 {
			t.Errorf("%s: error after content: key spend %v, want %v", tc.what, got, want)
		}
	}
}
