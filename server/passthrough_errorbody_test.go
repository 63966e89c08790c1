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

// TestPassThroughErrorBodyAndFailedResponseBilling: on the pass-through routes, a
// non-streamed 200 whose body is an error object ({"error": …}, as some compatible servers
// answer a failure) is recorded as an upstream error billed nothing (it was recorded ok and
// billed an estimate of the prompt); a Responses API stream whose response.failed comes
// before any content but reports usage is billed that usage, as OpenAI charges it, and
// recorded as a failed stream. The client gets the answers as they came.
func TestPassThroughErrorBodyAndFailedResponseBilling(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if strings.HasSuffix(r.URL.Path, "/chat/completions") {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"error":{"message":"The server is overloaded, try again later.","type":"server_error","code":"overloaded"}}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, ev := range []string{
			`{"type":"response.created","response":{"id":"resp_1","object":"response","status":"in_progress","model":"gpt-4o-mini","usage":null}}`,
			`{"type":"response.failed","response":{"id":"resp_1","object":"response","status":"failed","model":"gpt-4o-mini","error":{"code":"server_error","message":"The model failed."},"usage":{"input_tokens":40,"output_tokens":7,"total_tokens":47}}}`,
		} {
			fmt.Fprint(w, "data: "+ev+"\n\n")
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(up.Close)
	reg := providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: up.URL + "/v1", APIKey: "k"}))
	hs, s := passThroughServerOver(t, reg)
	const model = "openai/gpt-4o-mini"
	vk := issue(t, s, `{"name":"sdk","models":["`+model+`"],"max_budget_usd":5}`)
	spend := func() float64 { return keyInfoOf(t, s, testKey, "/api/v1/keys/"+vk.ID).Spend.CostUSD }
	auth := map[string]string{"Authorization": "Bearer " + vk.Key}

	resp, raw := sendPassThrough(t, "POST", hs.URL+"/openai/v1/chat/completions", `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"tell me a long story"}]}`, auth)
	if resp.StatusCode != 200 || !strings.Contains(raw, "overloaded") {
		t.Fatalf("relayed %d %q", resp.StatusCode, raw)
	}
	rows := passThroughHistory(t, s, vk.Key)
	if len(rows) != 1 {
		t.Fatalf("%d requests recorded", len(rows))
	}
	if r := rows[0]; r.Outcome != "error" || r.PromptTokens != 0 || r.CompletionTokens != 0 || r.CostUSD != 0 || !strings.Contains(r.Error, "server is overloaded") {
		t.Errorf("error body: recorded %s (%q) with %d+%d tokens $%v, want an unbilled error saying the provider's message", r.Outcome, r.Error, r.PromptTokens, r.CompletionTokens, r.CostUSD)
	}
	if got := spend(); got != 0 {
		t.Errorf("error body: key spend %v, want 0", got)
	}

	resp, raw = sendPassThrough(t, "POST", hs.URL+"/openai/v1/responses", `{"model":"gpt-4o-mini","stream":true,"input":"tell me"}`, auth)
	if resp.StatusCode != 200 || !strings.Contains(raw, "response.failed") {
		t.Fatalf("relayed %d %q", resp.StatusCode, raw)
	}
	rows = passThroughHistory(t, s, vk.Key)
	if len(rows) != 2 {
		t.Fatalf("%d requests recorded", len(rows))
	}
	if r := rows[0]; r.Outcome != "stream_error" || r.PromptTokens != 40 || r.CompletionTokens != 7 || r.UsageEstimated {
		t.Errorf("response.failed with usage: recorded %s with %d+%d tokens (estimated %v), want a failure billed the 40+7 reported", r.Outcome, r.PromptTokens, r.CompletionTokens, r.UsageEstimated)
	}
	want := providers.DefaultCatalog().Cost(model, providers.Usage{PromptTokens: 40, CompletionTokens: 7}).TotalUSD
	if got := spend(); want <= 0 || math.Abs(got-want) > 1e-12 {
		t.Errorf("response.failed with usage: key spend %v, want %v", got, want)
	}
}
