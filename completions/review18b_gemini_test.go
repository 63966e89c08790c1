package completions

import (
	"encoding/json"
	"slices"
	"testing"
)

// Google's nullable means the value may be null. A nullable string enum becomes
// {"type":["string","null"],"enum":["a","b"]} — but JSON Schema's enum then still refuses
// null, so a structured-output provider can never answer null. The enum must admit null
// (or the node be anyOf [{enum…}, {"type":"null"}]).
func TestReview18bGeminiNullableEnumAdmitsNull(t *testing.T) {
	out, err := geminiSchema(json.RawMessage(`{"type":"OBJECT","properties":{"color":{"type":"STRING","format":"enum","enum":["red","blue"],"nullable":true}},"required":["color"]}`))
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Properties map[string]struct {
			Type  any   `json:"type"`
			Enum  []any `json:"enum"`
			AnyOf []any `json:"anyOf"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(out, &s); err != nil {
		t.Fatal(err)
	}
	c := s.Properties["color"]
	if len(c.AnyOf) == 0 && c.Enum != nil && !slices.Contains(c.Enum, nil) {
		t.Errorf("nullable enum translated to %s: its enum %v refuses null, which the Gemini schema allows", out, c.Enum)
	}
}

// A nullable anyOf (no type of its own, as Google's SDKs make of a Python Optional[A|B])
// loses its nullability: nullable is deleted and nothing admits null.
func TestReview18bGeminiNullableAnyOfAdmitsNull(t *testing.T) {
	out, err := geminiSchema(json.RawMessage(`{"type":"OBJECT","properties":{"v":{"nullable":true,"anyOf":[{"type":"STRING"},{"type":"INTEGER"}]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Properties map[string]struct {
			Type  any              `json:"type"`
			AnyOf []map[string]any `json:"anyOf"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(out, &s); err != nil {
		t.Fatal(err)
	}
	v := s.Properties["v"]
	null := v.Type == "null"
	if ts, ok := v.Type.([]any); ok && slices.Contains(ts, any("null")) {
		null = true
	}
	for _, b := range v.AnyOf {
		if b["type"] == "null" {
			null = true
		}
	}
	if !null {
		t.Errorf("nullable anyOf translated to %s: nothing admits null", out)
	}
}
