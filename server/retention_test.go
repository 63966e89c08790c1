package server

import (
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
)

// TestExpiredConversationsAre404: once past their retention, and before any sweep, both
// kinds of conversation answer 404 on their routes, as a deleted one does; a used one
// is still there.
func TestExpiredConversationsAre404(t *testing.T) {
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	hs, s, _ := completionsServerWith(t, func(o *completions.Options) {
		o.Now = clock
		o.ConversationRetention = time.Hour
		o.OpenAIConversationRetention = time.Hour
	})
	resp, b := post(t, hs.URL+"/api/v1/completions", testKey, `{"models":["up/ok"],"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`)
	if resp.StatusCode != 200 {
		t.Fatalf("completion: %d %s", resp.StatusCode, b)
	}
	native := decodeMap(t, b)["conversationId"].(string)
	oa := do(t, s, "POST", "/v1/conversations", testKey, `{"items":[{"type":"message","role":"user","content":"hi"}]}`)
	if oa.status != 200 {
		t.Fatalf("create: %d %v", oa.status, oa.body)
	}
	openai := oa.body["id"].(string)
	for _, p := range []string{"/api/v1/conversations/" + native, "/v1/conversations/" + openai, "/v1/conversations/" + openai + "/items"} {
		if r := do(t, s, "GET", p, testKey, ""); r.status != 200 {
			t.Fatalf("GET %s while young: %d", p, r.status)
		}
	}
	mu.Lock()
	now = now.Add(2 * time.Hour)
	mu.Unlock()
	for _, p := range []string{"/api/v1/conversations/" + native, "/api/v1/conversations/" + native + "/messages",
		"/v1/conversations/" + openai, "/v1/conversations/" + openai + "/items"} {
		if r := do(t, s, "GET", p, testKey, ""); r.status != 404 {
			t.Errorf("GET %s past its retention: %d, want 404", p, r.status)
		}
	}
	if r := do(t, s, "DELETE", "/v1/conversations/"+openai, testKey, ""); r.status != 404 {
		t.Errorf("DELETE of an expired conversation: %d, want 404", r.status)
	}
}
