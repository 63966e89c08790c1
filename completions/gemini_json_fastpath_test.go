package completions

import (
	"bytes"
	"testing"
)

// TestGeminiProtoNameScan: the pre-scan that spares a body the rewrite finds every proto
// name the request types read as a member name (whitespace before the colon too), and
// not a snake_case property or argument name, a string value, or an escaped name; a body
// it passes comes out of NormalizeGeminiJSON unchanged.
func TestGeminiProtoNameScan(t *testing.T) {
	names := geminiProtoNames()
	for _, want := range []string{"max_output_tokens", "system_instruction", "function_declarations", "inline_data", "mime_type",
		"function_calling_config", "allowed_function_names", "response_json_schema", "thinking_budget", "include_thoughts", "any_of", "property_ordering"} {
		if !names[want] {
			t.Errorf("%s not among the proto names", want)
		}
	}
	for name := range names {
		if !hasGeminiProtoName([]byte(`{"parts":[{"x":{"` + name + `" :1}}]}`)) {
			t.Errorf("%s as a member name not found", name)
		}
	}
	for _, body := range []string{
		`{"parameters":{"type":"OBJECT","properties":{"file_path":{"type":"STRING"}}}}`,
		`{"args":{"old_string":"a","new_string":"b"}}`,
		`{"text":"max_output_tokens"}`,
		`{"text":"see \"max_output_tokens\": 5"}`,
	} {
		if hasGeminiProtoName([]byte(body)) {
			t.Errorf("found a proto name in %s", body)
		}
	}
	body := geminiAgentBody()
	if hasGeminiProtoName(body) {
		t.Fatal("the agent body (camelCase, snake_case tool parameters) was taken for one with proto names")
	}
	out, err := NormalizeGeminiJSON(body, GeminiGenerateTopLevel)
	if err != nil || !bytes.Equal(out, body) {
		t.Fatalf("the agent body changed: %v", err)
	}
}
