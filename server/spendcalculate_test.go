package server

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/tiktoken-go/tokenizer"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
)

// TestSpendCalculate: LiteLLM's /spend/calculate prices a request's messages (their tokens
// as /utils/token_counter counts them, at the prompt rate; a model group as its most
// expensive deployment) and an answer's usage, OpenAI's cached_tokens and Anthropic's cache reads and
// writes at their own rates; a request with neither is refused naming the field.
func TestSpendCalculate(t *testing.T) {
	hs, _, _ := completionsServerWith(t, func(o *completions.Options) {
		o.ModelGroups = map[string]completions.ModelGroup{"smart": {Models: []string{"up/gpt-4o"}}, "pair": {Models: []string{"up/gpt-4o-mini", "up/gpt-4o"}}}
	})
	url := hs.URL + spendCalculatePath
	calc := func(body string) float64 {
		t.Helper()
		resp, b := do2(t, "POST", url, testKey, body, nil)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", body, resp.StatusCode, b)
		}
		var a spendCalculateResult
		if err := json.Unmarshal(b, &a); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		return a.Cost
	}
	price, ok := providers.DefaultCatalog().Lookup("gpt-4o")
	if !ok || price.CacheReadPerToken == 0 || price.CacheReadPerToken == price.InputPerToken {
		t.Fatalf("gpt-4o's price %+v", price)
	}
	near := func(what string, got, want float64) {
		t.Helper()
		if want <= 0 || math.Abs(got-want) > 1e-12 {
			t.Errorf("%s: cost %v, want %v", what, got, want)
		}
	}

	const text = "How much would this question cost to ask?"
	messages := `"messages":[{"role":"user","content":"` + text + `"}]`
	resp, b := do2(t, "POST", hs.URL+tokenCounterPath, testKey, `{"model":"smart",`+messages+`}`, nil)
	var counted tokenCounterAnswer
	if err := json.Unmarshal(b, &counted); err != nil || resp.StatusCode != 200 || counted.TotalTokens <= tiktokenCount(t, tokenizer.O200kBase, text) {
		t.Fatalf("token counter: %d %s", resp.StatusCode, b)
	}
	near("messages", calc(`{"model":"smart",`+messages+`}`), float64(counted.TotalTokens)*price.InputPerToken)

	// A group of a cheap and a dear deployment: priced at the dear one, whichever is first.
	near("group", calc(`{"model":"pair","completion_response":{"model":"gpt-4o-mini","usage":{"prompt_tokens":1000,"completion_tokens":200}}}`),
		1000*price.InputPerToken+200*price.OutputPerToken)

	near("usage", calc(`{"completion_response":{"model":"gpt-4o","usage":{"prompt_tokens":1000,"completion_tokens":200}}}`),
		1000*price.InputPerToken+200*price.OutputPerToken)
	near("cached_tokens", calc(`{"completion_response":{"model":"gpt-4o","usage":{"prompt_tokens":1000,"completion_tokens":200,"prompt_tokens_details":{"cached_tokens":800}}}}`),
		200*price.InputPerToken+800*price.CacheReadPerToken+200*price.OutputPerToken)

	// Audio in and out (gpt-4o-audio-preview) at the audio rates.
	near("audio_tokens", calc(`{"completion_response":{"model":"gpt-4o-audio-preview","usage":{"prompt_tokens":100,"completion_tokens":60,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":80},"completion_tokens_details":{"audio_tokens":50}}}}`),
		20*2.5e-6+80*4e-5+10*1e-5+50*8e-5)

	claude, ok := providers.DefaultCatalog().Lookup("anthropic/claude-sonnet-4-20250514")
	if !ok || claude.CacheCreationPerToken == 0 || claude.CacheReadPerToken == 0 {
		t.Fatalf("claude's price %+v", claude)
	}
	near("anthropic cache", calc(`{"completion_response":{"model":"anthropic/claude-sonnet-4-20250514","usage":{"prompt_tokens":1000,"completion_tokens":10,"cache_creation_input_tokens":300,"cache_read_input_tokens":600}}}`),
		100*claude.InputPerToken+300*claude.CacheCreationPerToken+600*claude.CacheReadPerToken+10*claude.OutputPerToken)

	for body, param := range map[string]string{
		`{}`:                                   "model",
		`{"model":"gpt-4o"}`:                   "messages",
		`{"completion_response":{"usage":{}}}`: "completion_response.model",
	} {
		resp, b := do2(t, "POST", url, testKey, body, nil)
		var e struct {
			Error struct{ Param string } `json:"error"`
		}
		json.Unmarshal(b, &e)
		if resp.StatusCode != 400 || e.Error.Param != param {
			t.Errorf("%s: %d %s, want 400 naming %s", body, resp.StatusCode, b, param)
		}
	}
}
