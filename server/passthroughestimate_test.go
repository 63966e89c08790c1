package server

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/usagelog"
)

// passThroughHistory is the request history a key sees.
func passThroughHistory(t *testing.T, s *Server, key string) []usagelog.Request {
	t.Helper()
	r := do(t, s, "GET", "/api/v1/usage/requests", key, "")
	var usage struct {
		Data []usagelog.Request `json:"data"`
	}
	if err := json.Unmarshal([]byte(r.raw), &usage); err != nil || r.status != 200 {
		t.Fatalf("usage: %d %s", r.status, r.raw)
	}
	return usage.Data
}

// expectedPassThroughPrompt is the repo's own count of an OpenAI chat body's prompt.
func expectedPassThroughPrompt(t *testing.T, model, body string) int {
	t.Helper()
	var chat completions.OpenAIChatRequest
	if err := json.Unmarshal([]byte(body), &chat); err != nil {
		t.Fatal(err)
	}
	req, err := (&completions.OpenAIChatRequest{Model: chat.Model, Messages: chat.Messages, Tools: chat.Tools}).ToRequest()
	if err != nil {
		t.Fatal(err)
	}
	return completions.EstimatePromptTokens(model, req)
}

// TestPassThroughEstimatesUnreportedUsage: an OpenAI chat answer that reports no usage
// (a stream without stream_options.include_usage, OpenAI's default; a JSON answer without
// usage) is billed to a budget key all the same, as LiteLLM works it out: the prompt
// counted from the request body and the completion from the answer's text and tool-call
// arguments with the repo's counter, marked estimated in the history; an answer that
// reports usage is billed by it, not by the estimate.
func TestPassThroughEstimatesUnreportedUsage(t *testing.T) {
	hs, s, _ := passThroughServer(t)
	vk := issue(t, s, `{"name":"sdk","models":["openai/gpt-4o-mini"],"max_budget_usd":5}`)
	const model = "openai/gpt-4o-mini"
	cat := providers.DefaultCatalog()
	auth := map[string]string{"Authorization": "Bearer " + vk.Key}
	tools := `"tools":[{"type":"function","function":{"name":"get_weather","description":"the weather of a city","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}]`
	streamBody := `{"model":"gpt-4o-mini","stream":true,` + tools + `,"messages":[{"role":"system","content":"be brief"},{"role":"user","content":"no usage please, what is the weather in Paris?"}]}`
	jsonBody := `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"no usage, say hello"}]}`
	reportedBody := `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`

	streamWant := providers.Usage{PromptTokens: expectedPassThroughPrompt(t, model, streamBody),
		CompletionTokens: providers.EstimateUsage(model, nil, &providers.Response{Text: "Hello there, how are you today?",
			ToolCalls: []providers.ToolCall{{Name: "get_weather", Arguments: `{"city":"Paris"}`}}}).CompletionTokens}
	jsonWant := providers.Usage{PromptTokens: expectedPassThroughPrompt(t, model, jsonBody),
		CompletionTokens: providers.EstimateUsage(model, nil, &providers.Response{Text: "Hello there, how are you today?"}).CompletionTokens}
	reportedWant := providers.Usage{PromptTokens: 7, CompletionTokens: 3}

	cases := []struct {
		name, body string
		want       providers.Usage
		estimated  bool
	}{
		{"stream without include_usage", streamBody, streamWant, true},
		{"json without usage", jsonBody, jsonWant, true},
		{"json with usage", reportedBody, reportedWant, false},
	}
	spent := 0.0
	for i, c := range cases {
		resp, answer := sendPassThrough(t, "POST", hs.URL+"/openai/v1/chat/completions", c.body, auth)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", c.name, resp.StatusCode, answer)
		}
		cost := cat.Cost(model, c.want).TotalUSD
		if cost <= 0 {
			t.Fatalf("%s: the catalogue prices %s at %v", c.name, model, cost)
		}
		spent += cost
		info := keyInfoOf(t, s, testKey, "/api/v1/keys/"+vk.ID)
		if math.Abs(info.Spend.CostUSD-spent) > 1e-12 {
			t.Errorf("%s: key spend %v, want %v", c.name, info.Spend.CostUSD, spent)
		}
		rows := passThroughHistory(t, s, vk.Key)
		if len(rows) != i+1 {
			t.Fatalf("%s: %d requests recorded, want %d", c.name, len(rows), i+1)
		}
		row := rows[0] // newest first
		if row.PromptTokens != c.want.PromptTokens || row.CompletionTokens != c.want.CompletionTokens || row.UsageEstimated != c.estimated ||
			row.Operation != completions.OperationPassThrough || math.Abs(row.CostUSD-cost) > 1e-12 {
			t.Errorf("%s: recorded %d+%d tokens (estimated %v) at %v, want %d+%d (estimated %v) at %v", c.name,
				row.PromptTokens, row.CompletionTokens, row.UsageEstimated, row.CostUSD, c.want.PromptTokens, c.want.CompletionTokens, c.estimated, cost)
		}
	}
}
