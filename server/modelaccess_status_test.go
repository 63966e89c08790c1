package server

import (
	"encoding/json"
	"net/http"
	"testing"
)

// TestModelAccessDeniedStatus: a model outside a virtual key's models is refused as
// LiteLLM's proxy refuses it on the OpenAI-compatible routes — a 401 of type
// key_model_access_denied, code "401", param "model" (its auth check's ProxyException) —
// while the native /api/v1/completions keeps its 403 and Gemini's routes Google's 403
// PERMISSION_DENIED.
func TestModelAccessDeniedStatus(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	vk := issue(t, s, `{"models":["openai/ok"]}`)
	chat := `{"model":"openai/other","messages":[{"role":"user","content":"hi"}]}`
	for _, path := range []string{"/v1/chat/completions", "/chat/completions"} {
		resp, b := post(t, hs.URL+path, vk.Key, chat)
		var e struct {
			Error struct {
				Type, Code string
				Param      *string
			} `json:"error"`
		}
		json.Unmarshal(b, &e)
		if resp.StatusCode != http.StatusUnauthorized || e.Error.Type != "key_model_access_denied" || e.Error.Code != "401" || e.Error.Param == nil || *e.Error.Param != "model" {
			t.Errorf("%s: %d %s, want LiteLLM's 401 key_model_access_denied naming model", path, resp.StatusCode, b)
		}
	}
	native := `{"models":["openai/other"],"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`
	if resp, b := post(t, hs.URL+"/api/v1/completions", vk.Key, native); resp.StatusCode != http.StatusForbidden {
		t.Errorf("native: %d %s, want 403", resp.StatusCode, b)
	}
	gemini := `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`
	resp, b := post(t, hs.URL+"/v1beta/models/openai%2Fother:generateContent", vk.Key, gemini)
	var g struct {
		Error struct {
			Code   int
			Status string
		} `json:"error"`
	}
	if json.Unmarshal(b, &g); resp.StatusCode != http.StatusForbidden || g.Error.Status != "PERMISSION_DENIED" {
		t.Errorf("Gemini: %d %s, want 403 PERMISSION_DENIED", resp.StatusCode, b)
	}
}
