package completions

import (
	"encoding/json"
	"testing"
)

// TestReview18eGeminiEscapedProtoName: a member name written with a JSON escape is the
// same name once decoded ("max\u005foutput_tokens" is max_output_tokens). The pre-scan
// skips escaped strings, so the value is not rewritten and the decoder (unknown fields
// allowed on the Gemini surface) silently drops the field; the tree walk used before the
// fast path rewrote it.
func TestReview18eGeminiEscapedProtoName(t *testing.T) {
	body := []byte(`{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"generationConfig":{"max\u005foutput_tokens":5}}`)
	out, err := NormalizeGeminiJSON(body, GeminiGenerateTopLevel)
	if err != nil {
		t.Fatal(err)
	}
	var req GeminiGenerateRequest
	if err := json.Unmarshal(out, &req); err != nil {
		t.Fatal(err)
	}
	if req.GenerationConfig == nil || req.GenerationConfig.MaxOutputTokens == nil || *req.GenerationConfig.MaxOutputTokens != 5 {
		t.Fatalf("generationConfig.max_output_tokens (escaped name) was dropped: %s", out)
	}
}
