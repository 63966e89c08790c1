package server

import (
	"net/http"
	"strings"
	"testing"
)

// A virtual key over its own max_budget is refused in LiteLLM's words, as a team's and an
// end user's are ("Budget has been exceeded! Current cost: …, Max budget: …"): scripts
// moved from LiteLLM's proxy tell a spent budget from other 429s by that sentence. The
// status, type and code stay (429, budget_exceeded, x-should-retry false).
func TestReview22gKeyBudgetExceededInLiteLLMWords(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	k := litellmGenerate(t, s, `{"max_budget":0.02}`)
	for i := range 2 { // $0.013 each: the second starts at 0.013 < 0.02
		if st, b := chatStatus(t, hs.URL, k.Key, "openai/ok"); st != http.StatusOK {
			t.Fatalf("call %d: %d %s", i+1, st, b)
		}
	}
	st, b := chatStatus(t, hs.URL, k.Key, "openai/ok")
	if st != http.StatusTooManyRequests || !strings.Contains(b, `"message":"Budget has been exceeded! Current cost: 0.026`) || !strings.Contains(b, `, Max budget: 0.02 ($0.0260 of $0.0200 spent)"`) ||
		!strings.Contains(b, `"code":"budget_exceeded"`) {
		t.Fatalf("the key over its max_budget on /v1/chat/completions: %d %s", st, b)
	}
	native := `{"models":["openai/ok"],"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`
	resp, nb := post(t, hs.URL+"/api/v1/completions", k.Key, native)
	if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(string(nb), "Budget has been exceeded! Current cost: 0.026") {
		t.Fatalf("the key over its max_budget on /api/v1/completions: %d %s", resp.StatusCode, nb)
	}
}
