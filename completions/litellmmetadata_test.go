package completions_test

import (
	"encoding/json"
	"testing"

	"github.com/switchyard-ai/switchyard/completions"
)

// LiteLLM takes any litellm_metadata and str()s a numeric end user id: a number is its
// text, a value that is not an object names no one, and neither is a decoding error.
func TestLiteLLMMetadataReadsAsLiteLLM(t *testing.T) {
	for body, want := range map[string]string{
		`{"litellm_metadata":{"user":"ann"}}`: "ann",
		`{"litellm_metadata":{"user":42}}`:    "42",
		`{"litellm_metadata":{"user":1.5e3}}`: "1.5e3",
		`{"litellm_metadata":"ann"}`:          "",
		`{"litellm_metadata":[1]}`:            "",
		`{"litellm_metadata":{"user":true}}`:  "",
		`{"litellm_metadata":{"user":null}}`:  "",
		`{"litellm_metadata":null}`:           "",
		`{"model":"m"}`:                       "",
	} {
		var req completions.OpenAIChatRequest
		if err := json.Unmarshal([]byte(body), &req); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		if got := req.LiteLLMMetadata.EndUser(); got != want {
			t.Fatalf("%s: end user %q, want %q", body, got, want)
		}
	}
	for raw, want := range map[string]string{`{"user_id":"bo"}`: "bo", `{"user_id":7}`: "7", `{"user_id":{}}`: "", `"x"`: "", ``: ""} {
		if got := completions.MetadataUserID(json.RawMessage(raw)); got != want {
			t.Fatalf("metadata %s: %q, want %q", raw, got, want)
		}
	}
}
