package server

import (
	"net/http"
	"strings"
	"testing"
)

// The fields Not Diamond's SDKs add reach the selection over HTTP; a timeout that passes
// without a default answers 504 naming the field, and with one the default answers.
func TestModelSelectNotDiamondFieldsOverHTTP(t *testing.T) {
	ts, _ := modelSelectServer(t, nil)
	const cands = `"llm_providers":[{"provider":"openai","model":"gpt-4o","input_price":2.5,"output_price":10,"context_length":128000,"is_custom":false},{"provider":"openai","model":"gpt-4o-mini"}]`
	code, body := postSelect(t, ts, "/api/v1/model-select", testKey,
		`{"messages":[{"role":"user","content":"hi"}],`+cands+`,"metric":"accuracy","timeout":5,"default":"openai/gpt-4o"}`)
	if code != http.StatusOK || body["session_id"] == nil {
		t.Fatalf("SDK body: %d %v", code, body)
	}
	code, body = postSelect(t, ts, "/api/v1/model-select", testKey,
		`{"messages":[{"role":"user","content":"hi"}],`+cands+`,"timeout":1e-9}`)
	if msg, _ := body["message"].(string); code != http.StatusGatewayTimeout || !strings.Contains(msg, "timeout") {
		t.Fatalf("timeout without default: %d %v, want 504 naming timeout", code, body)
	}
	code, body = postSelect(t, ts, "/api/v1/model-select", testKey,
		`{"messages":[{"role":"user","content":"hi"}],`+cands+`,"timeout":1e-9,"default":{"provider":"openai","model":"gpt-4o-mini"}}`)
	if code != http.StatusOK || body["providers"].([]any)[0].(map[string]any)["score_source"] != "default" {
		t.Fatalf("timeout with default: %d %v, want 200 with the default", code, body)
	}
	code, body = postSelect(t, ts, "/api/v1/model-select", testKey,
		`{"messages":[{"role":"user","content":"hi"}],`+cands+`,"metric":"cost"}`)
	if msg, _ := body["message"].(string); code != http.StatusBadRequest || !strings.HasPrefix(msg, "metric") {
		t.Fatalf("metric cost: %d %v, want 400 naming metric", code, body)
	}
}
