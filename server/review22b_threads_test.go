package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// Anthropic's SDKs run their tool runners on message threads (the message-threads beta):
// the first turn asks thread {"type":"create"}, the next ones send only their new
// messages with thread {"type":"continue","previous_message_id":…} and without system and
// tools. The gateway holds no threads: a continue is refused as Anthropic refuses a thread
// it lost — 404 not_found_error with details.error_code thread_not_found — on which the
// SDKs replay the whole conversation under a new thread, which is answered (create asks
// nothing the gateway must keep). Answering the continue as a conversation of its new
// messages alone, as before, left the model without the turn its tool results answer (a
// 400), or without the conversation, system and tools.
func TestReview22bMessageThreads(t *testing.T) {
	hs, _, _ := completionsServer(t)
	post := func(body string) (int, map[string]any) {
		req, _ := http.NewRequest("POST", hs.URL+"/v1/messages", strings.NewReader(body))
		req.Header.Set("x-api-key", testKey)
		req.Header.Set("anthropic-beta", "message-threads-2026-08-12")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out
	}
	status, out := post(`{"model":"up/ok","max_tokens":50,"thread":{"type":"create"},"messages":[{"role":"user","content":"hi"}]}`)
	if status != http.StatusOK || out["type"] != "message" {
		t.Fatalf("create: %d %v", status, out)
	}
	status, out = post(`{"model":"up/ok","max_tokens":50,"thread":{"type":"continue","previous_message_id":"` + out["id"].(string) + `"},
		"messages":[{"role":"user","content":"and again"}]}`)
	e, _ := out["error"].(map[string]any)
	details, _ := e["details"].(map[string]any)
	if status != http.StatusNotFound || out["type"] != "error" || e["type"] != "not_found_error" || details["error_code"] != "thread_not_found" ||
		!strings.Contains(e["message"].(string), "thread") {
		t.Errorf("continue: %d %v, want 404 not_found_error with details.error_code thread_not_found", status, out)
	}
	status, out = post(`{"model":"up/ok","max_tokens":50,"thread":{"type":"fork"},"messages":[{"role":"user","content":"hi"}]}`)
	if e, _ := out["error"].(map[string]any); status != http.StatusBadRequest || e == nil || !strings.Contains(e["message"].(string), "thread.type") {
		t.Errorf("unknown thread type: %d %v", status, out)
	}
}
