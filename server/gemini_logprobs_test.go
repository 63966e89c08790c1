package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/completions"
)

// TestGeminiGenerateLogprobs: the native Gemini surface's generationConfig.responseLogprobs
// and logprobs ask the model for log probabilities (as logprobs and top_logprobs), and the
// answer gives them as Gemini's candidates[].logprobsResult (chosenCandidates, and
// topCandidates per step) with avgLogprobs, whole and streamed (each chunk its text's);
// without them none are asked or given; logprobs without responseLogprobs is a 400 naming
// generationConfig.logprobs, and a model that gives none one naming responseLogprobs.
func TestGeminiGenerateLogprobs(t *testing.T) {
	hs, up, _ := logprobsServer(t, false)
	const ask = `{"contents":[{"role":"user","parts":[{"text":"Is it?"}]}],"generationConfig":{"responseLogprobs":true,"logprobs":2}}`
	resp, b := geminiPost(t, hs.URL+"/v1beta/models/oa/gpt-4o-mini:generateContent", ask)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	if body := up.last(); body["logprobs"] != true || body["top_logprobs"] != 2.0 {
		t.Fatalf("upstream got logprobs %v top_logprobs %v", body["logprobs"], body["top_logprobs"])
	}
	var whole completions.GeminiResponse
	if err := json.Unmarshal(b, &whole); err != nil || len(whole.Candidates) != 1 {
		t.Fatalf("%s: %v", b, err)
	}
	c := whole.Candidates[0]
	lr := c.LogprobsResult
	if lr == nil || len(lr.ChosenCandidates) != 2 || lr.ChosenCandidates[0].Token != "Yes" || lr.ChosenCandidates[0].LogProbability != -0.25 ||
		lr.ChosenCandidates[1].Token != "!" || len(lr.TopCandidates) != 2 || len(lr.TopCandidates[0].Candidates) != 2 ||
		lr.TopCandidates[0].Candidates[1].Token != "No" || lr.TopCandidates[0].Candidates[1].LogProbability != -1.5 {
		t.Fatalf("logprobsResult %+v in %s", lr, b)
	}
	if c.AvgLogprobs == nil || *c.AvgLogprobs != -0.5 {
		t.Errorf("avgLogprobs %v, want -0.5", c.AvgLogprobs)
	}
	if !strings.Contains(string(b), `"chosenCandidates":[{"token":"Yes","logProbability":-0.25}`) {
		t.Errorf("not Gemini's shape: %s", b)
	}

	resp, b = geminiPost(t, hs.URL+"/v1beta/models/oa/gpt-4o-mini:streamGenerateContent?alt=sse", ask)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	var tokens []string
	for _, ev := range sseData(t, b) {
		raw, _ := json.Marshal(ev)
		var ck completions.GeminiResponse
		if err := json.Unmarshal(raw, &ck); err != nil {
			t.Fatal(err)
		}
		for _, c := range ck.Candidates {
			if c.LogprobsResult != nil {
				for i, t2 := range c.LogprobsResult.ChosenCandidates {
					tokens = append(tokens, fmt.Sprintf("%s/%d", t2.Token, len(c.LogprobsResult.TopCandidates[i].Candidates)))
				}
			}
		}
	}
	if fmt.Sprint(tokens) != "[Yes/2 !/2]" {
		t.Fatalf("streamed chosen tokens %v, want Yes and ! with 2 candidates each: %s", tokens, b)
	}

	resp, b = geminiPost(t, hs.URL+"/v1beta/models/oa/gpt-4o-mini:generateContent", `{"contents":[{"role":"user","parts":[{"text":"Is it?"}]}]}`)
	if resp.StatusCode != http.StatusOK || strings.Contains(string(b), "logprobsResult") {
		t.Fatalf("not asked: %d %s", resp.StatusCode, b)
	}
	if _, ok := up.last()["logprobs"]; ok {
		t.Fatalf("logprobs asked without responseLogprobs: %v", up.last())
	}
	calls := up.calls()
	resp, b = geminiPost(t, hs.URL+"/v1beta/models/oa/gpt-4o-mini:generateContent", `{"contents":[{"role":"user","parts":[{"text":"Is it?"}]}],"generationConfig":{"logprobs":2}}`)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "generationConfig.logprobs") || up.calls() != calls {
		t.Fatalf("logprobs without responseLogprobs: %d %s (upstream called %d more)", resp.StatusCode, b, up.calls()-calls)
	}
	resp, b = geminiPost(t, hs.URL+"/v1beta/models/an/claude-sonnet-4-20250514:generateContent", ask)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "generationConfig.responseLogprobs") {
		t.Fatalf("a model without log probabilities: %d %s, want a 400 naming generationConfig.responseLogprobs", resp.StatusCode, b)
	}
}
