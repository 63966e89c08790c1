package server

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"
)

// The Gemini surface's ?key= must not authenticate OpenAI's own routes. GET
// /v1/models/{id} is OpenAI's model retrieve; fine-tuned model ids carry colons
// ("ft:gpt-4o-mini:org::id"), so geminiPath's "/v1/models/ + contains ':'" test claims
// the route: the key in the query string is accepted there and failures come back in
// Google's envelope instead of OpenAI's.
func TestReview18bGeminiQueryKeyNotAcceptedOnOpenAIModelRetrieve(t *testing.T) {
	hs, _ := geminiServer(t)
	resp, err := http.Get(hs.URL + "/v1/models/up/ft:gpt-4o-mini:acme::abc123?key=" + testKey)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET /v1/models/{ft:…}?key=<key> (an OpenAI route) = %d %s, want 401: ?key= is for the Gemini routes only", resp.StatusCode, b)
	}

	// Without any key: the 401 of an OpenAI route is in OpenAI's envelope.
	resp, err = http.Get(hs.URL + "/v1/models/up/ft:gpt-4o-mini:acme::abc123")
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	var body struct {
		Error struct {
			Type   string `json:"type"`
			Status string `json:"status"`
		} `json:"error"`
	}
	_ = json.Unmarshal(b, &body)
	if resp.StatusCode != http.StatusUnauthorized || body.Error.Type == "" || body.Error.Status != "" {
		t.Errorf("GET /v1/models/{ft:…} without a key = %d %s, want 401 in OpenAI's envelope (error.type), not Google's", resp.StatusCode, b)
	}
}

// Google's own REST documentation (ai.google.dev system-instructions, curl tab) sends
// "system_instruction" — the API accepts proto field names as well as their JSON names.
// The surface decodes with unknown fields allowed, so the system instruction is silently
// dropped and the model answers without it.
func TestReview18bGeminiSnakeCaseSystemInstructionNotDropped(t *testing.T) {
	hs, up := geminiServer(t)
	resp, b := geminiPost(t, hs.URL+"/v1beta/models/tl/chat:generateContent",
		`{"system_instruction":{"parts":[{"text":"You are Neko the cat."}]},"contents":[{"parts":[{"text":"Good morning!"}]}],
		  "generation_config":{"max_output_tokens":7}}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	msgs, _ := up.last()["messages"].([]any)
	first, _ := msgs[0].(map[string]any)
	if first["role"] != "system" || first["content"] != "You are Neko the cat." {
		t.Errorf("system_instruction (Google's documented curl form) was dropped: the upstream got messages %v", msgs)
	}
	if up.last()["max_completion_tokens"] == nil && up.last()["max_tokens"] == nil {
		t.Errorf("generation_config.max_output_tokens was dropped: upstream request %v", up.last())
	}
}
