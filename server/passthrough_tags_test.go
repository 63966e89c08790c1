package server

import (
	"net/http"
	"slices"
	"strings"
	"testing"
)

// TestPassThroughTags: a pass-through request carries its key's tags and its
// x-litellm-tags header's (its body is the provider's own): it is recorded under them and
// draws on their tag budgets, refused naming the tag once one is spent.
func TestPassThroughTags(t *testing.T) {
	hs, s, _ := passThroughServer(t)
	vk := issue(t, s, `{"name":"sdk","models":["openai/gpt-4o-mini"],"max_budget_usd":5,"metadata":{"tags":["team:search"]}}`)
	if r := do(t, s, "POST", "/tag/new", testKey, `{"name":"team:search","max_budget":0.000001}`); r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	body := `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`
	header := map[string]string{"Authorization": "Bearer " + vk.Key, "X-Litellm-Tags": "feature:x"}
	resp, answer := sendPassThrough(t, "POST", hs.URL+"/openai/v1/chat/completions", body, header)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("a tagged pass-through: %d %s", resp.StatusCode, answer)
	}
	rows := spendLogs(t, s, testKey, "api_key="+vk.ID)
	if len(rows) != 1 || !slices.Equal(rows[0].RequestTags, []string{"feature:x", "team:search"}) {
		t.Fatalf("the pass-through's tags: %+v", rows)
	}
	resp, answer = sendPassThrough(t, "POST", hs.URL+"/openai/v1/chat/completions", body, header)
	if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(answer, "Tag=team:search") {
		t.Fatalf("a pass-through past its key's tag budget: %d %s", resp.StatusCode, answer)
	}
}
