package completions

import (
	"strings"
	"testing"
)

// TestReview18eGeminiSchemaAdditionalProperties: Vertex AI's Schema defines
// additionalProperties (proto name additional_properties), and the translation reads it
// (jsonSchemaOf walks "additionalProperties"). The proto-name list holds Google Schema's
// other multi-word names but not this one, so a function's parameters spelled with it in
// an otherwise camelCase body skip the rewrite: the constraint reaches the model as
// "additional_properties", which no JSON Schema reader knows (silently dropped). The tree
// walk used before the fast path rewrote it.
func TestReview18eGeminiSchemaAdditionalProperties(t *testing.T) {
	body := []byte(`{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"tools":[{"functionDeclarations":[{"name":"f",` +
		`"parameters":{"type":"OBJECT","properties":{"a":{"type":"STRING"}},"additional_properties":false}}]}]}`)
	out, err := NormalizeGeminiJSON(body, GeminiGenerateTopLevel)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `"additionalProperties":false`) {
		t.Fatalf("parameters.additional_properties not rewritten: %s", out)
	}
}
