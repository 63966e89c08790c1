package client_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestOfficialGenAINodeSDK drives the Gemini surface with Google's official GenAI Node SDK
// (npm "@google/genai", installed into a temporary directory; testdata/genai_sdk_check.mjs)
// routed to an OpenAI-format model, as Gemini CLI does: generateContent with a function
// call, the same call through generateContentStream (alt=sse), the function's response
// sent back and answered, countTokens, the SDK's ApiError for an invalid request and a
// wrong key, and the model list through its pager. Skips, saying why, without node and npm
// or when the package cannot be installed.
func TestOfficialGenAINodeSDK(t *testing.T) {
	run := nodePackage(t, "@google/genai@1", "Google's GenAI Node SDK")
	up := newToolUpstream(t)
	_, base := realServerURL(t, up.options(t))
	out := run("testdata/genai_sdk_check.mjs", base)
	var got struct {
		Calls []struct {
			ID   string         `json:"id"`
			Name string         `json:"name"`
			Args map[string]any `json:"args"`
		} `json:"calls"`
		Finish string `json:"finish"`
		Usage  struct {
			PromptTokenCount, CandidatesTokenCount, TotalTokenCount int
		} `json:"usage"`
		ModelVersion string `json:"modelVersion"`
		ResponseID   string `json:"responseId"`
		StreamCalls  []struct {
			Name string         `json:"name"`
			Args map[string]any `json:"args"`
		} `json:"streamCalls"`
		StreamFinish string         `json:"streamFinish"`
		Text         string         `json:"text"`
		Tokens       []int          `json:"tokens"`
		BadRequest   map[string]any `json:"badRequest"`
		BadKey       map[string]any `json:"badKey"`
		Models       []string       `json:"models"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	if len(got.Calls) != 1 || got.Calls[0].Name != "get_weather" || got.Calls[0].Args["city"] != "Paris" || got.Calls[0].ID != "call_1" ||
		got.Finish != "STOP" || got.Usage.PromptTokenCount != 30 || got.Usage.CandidatesTokenCount != 10 || got.Usage.TotalTokenCount != 40 ||
		got.ModelVersion != "openai/gpt-4o-mini" || got.ResponseID == "" {
		t.Errorf("generateContent: %s", out)
	}
	if len(got.StreamCalls) != 1 || got.StreamCalls[0].Name != "get_weather" || got.StreamCalls[0].Args["city"] != "Paris" || got.StreamFinish != "STOP" {
		t.Errorf("generateContentStream: %s", out)
	}
	if got.Text != "It is sunny in Paris." {
		t.Errorf("answer after the function response: %q", got.Text)
	}
	msgs := up.last()["messages"].([]any)
	if last := msgs[len(msgs)-1].(map[string]any); last["role"] != "tool" || last["tool_call_id"] != "call_1" || last["content"] != "sunny" {
		t.Errorf("the function response reached the upstream as %v", last)
	}
	if len(got.Tokens) != 2 || got.Tokens[0] < 3 || got.Tokens[1] < 10*got.Tokens[0] {
		t.Errorf("countTokens: %v", got.Tokens)
	}
	if got.BadRequest["status"] != float64(400) || !strings.Contains(got.BadRequest["message"].(string), "contents[0].parts[0].inlineData") ||
		!strings.Contains(got.BadRequest["message"].(string), "INVALID_ARGUMENT") {
		t.Errorf("invalid request through the SDK: %v", got.BadRequest)
	}
	if got.BadKey["status"] != float64(401) || !strings.Contains(got.BadKey["message"].(string), "UNAUTHENTICATED") {
		t.Errorf("wrong key through the SDK: %v", got.BadKey)
	}
	if len(got.Models) < 3 || !slices.Contains(got.Models, "models/openai/gpt-4o-mini") {
		t.Errorf("models.list through the pager (pages of 2): %v", got.Models)
	}
}
