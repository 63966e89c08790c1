package providers

import (
	"encoding/json"
	"testing"
)

// TestS8OpenAIReasoningEffortMaxReachesOpenAI: the OpenAI-compatible surfaces accept
// reasoning_effort "max" (and "xhigh", any case) as a valid effort (checkEffort), and the
// adapter maps those to what OpenAI takes only when the effort comes from a thinking object.
// A chat request with reasoning_effort "max" — the gateway's own name for Claude's largest
// budget, sent to a group or fallback that includes o3 — reaches OpenAI as "max", which it
// refuses (its efforts are minimal/low/medium/high, xhigh on a few models only).
func TestS8OpenAIReasoningEffortMaxReachesOpenAI(t *testing.T) {
	o := NewOpenAI(Config{Name: "openai", APIKey: "sk-test"})
	for _, own := range []string{"max", "MAX", "High"} {
		req := &Request{Model: "o3", Messages: []Message{{Role: "user", Content: "hi"}},
			Thinking: &Thinking{Effort: own}, OpenAIOptions: OpenAIOptions{ReasoningEffort: own}}
		body, err := o.body(req, false)
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			ReasoningEffort string `json:"reasoning_effort"`
		}
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatal(err)
		}
		switch m.ReasoningEffort {
		case "low", "medium", "high":
		default:
			t.Errorf("reasoning_effort %q (as the gateway accepts it) sent to OpenAI's o3 as %q, which it refuses", own, m.ReasoningEffort)
		}
	}
}

// TestS8GeminiThinkingBudgetWithinMaxOutputTokens: Gemini counts thinking tokens against
// maxOutputTokens. The Anthropic adapter keeps budget_tokens below max_tokens; the Gemini
// adapter sends a thinkingBudget of 16,384 with a maxOutputTokens of 1,000, so the model may
// spend the whole output on thoughts and end with MAX_TOKENS and no answer (which the
// adapter then fails as an empty answer).
func TestS8GeminiThinkingBudgetWithinMaxOutputTokens(t *testing.T) {
	g := NewGemini(Config{APIKey: "k"})
	req := &Request{Model: "gemini-2.5-flash", MaxTokens: 1000, Messages: []Message{{Role: "user", Content: "hi"}},
		Thinking: &Thinking{Effort: "high"}}
	b, err := g.body(req)
	if err != nil {
		t.Fatal(err)
	}
	gc := b.GenerationConfig
	if gc == nil || gc.ThinkingConfig == nil {
		t.Fatalf("no thinking config: %+v", gc)
	}
	if gc.ThinkingConfig.ThinkingBudget >= gc.MaxOutputTokens {
		t.Errorf("thinkingBudget %d is not below maxOutputTokens %d: no room is left for the answer",
			gc.ThinkingConfig.ThinkingBudget, gc.MaxOutputTokens)
	}
}

// TestS8AnthropicEffortBudgetLeavesNoAnswer: for a request that names only an effort, the
// adapter picks the budget; when the effort's budget does not fit below max_tokens it is cut
// to max_tokens-1. The gateway itself sends Claude Opus 4.1 at effort max (no max_tokens of
// the caller's) max_tokens 32,000, its catalogued limit (maxTokensFor), so the adapter asks
// budget_tokens 31,999: one token is left for the answer once Claude has used its budget.
func TestS8AnthropicEffortBudgetLeavesNoAnswer(t *testing.T) {
	req := &Request{Model: "claude-opus-4-1-20250805", MaxTokens: 32000, Messages: []Message{{Role: "user", Content: "hi"}},
		Thinking: &Thinking{Effort: "max"}}
	th, _, maxTokens := anthropicThinkingFor(req)
	if th == nil {
		t.Fatal("no thinking")
	}
	if room := maxTokens - th.BudgetTokens; room < anthropicMinBudget {
		t.Errorf("max_tokens %d with budget_tokens %d leaves %d token(s) for the answer", maxTokens, th.BudgetTokens, room)
	}
}
