package server

import (
	"encoding/json"
	"testing"

	"github.com/tiktoken-go/tokenizer"

	"github.com/switchyard-ai/switchyard/completions"
)

// TestReview27bTokenCounterCountsNames: a message's name is part of the prompt OpenAI
// bills (its tokens and one more, tokens_per_name in OpenAI's and LiteLLM's counting), so
// /utils/token_counter counts it.
func TestReview27bTokenCounterCountsNames(t *testing.T) {
	hs, _, _ := completionsServerWith(t, func(o *completions.Options) {
		o.ModelGroups = map[string]completions.ModelGroup{"smart": {Models: []string{"up/gpt-4o"}}}
	})
	count := func(body string) int {
		t.Helper()
		resp, b := do2(t, "POST", hs.URL+tokenCounterPath, testKey, body, nil)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", body, resp.StatusCode, b)
		}
		var a tokenCounterAnswer
		if err := json.Unmarshal(b, &a); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		return a.TotalTokens
	}
	const name = "alice_the_example_user"
	without := count(`{"model":"smart","messages":[{"role":"user","content":"hi"}]}`)
	with := count(`{"model":"smart","messages":[{"role":"user","content":"hi","name":"` + name + `"}]}`)
	if want := without + 1 + tiktokenCount(t, tokenizer.O200kBase, name); with != want {
		t.Errorf("with a name %d tokens, want %d (%d without it)", with, want, without)
	}
}
