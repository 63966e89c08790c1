package completions

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// Proto field names at every level become JSON names; the caller's own names (function
// args and responses, labels, schema property names, JSON Schemas) are kept, and a
// contents given as one object becomes a list.
func TestNormalizeGeminiJSONProtoNames(t *testing.T) {
	in := `{"system_instruction":{"parts":[{"text":"be_brief"}]},
	  "contents":{"role":"user","parts":[{"text":"hi"},{"inline_data":{"mime_type":"image/png","data":"AA=="}}]},
	  "tools":[{"function_declarations":[{"name":"get_weather","parameters":{"type":"OBJECT","any_of":[{"type":"STRING"}],
	    "properties":{"city_name":{"type":"STRING","max_length":3}},"required":["city_name"],"property_ordering":["city_name"]}},
	    {"name":"other","parameters_json_schema":{"x_y":1}}]}],
	  "tool_config":{"function_calling_config":{"mode":"ANY","allowed_function_names":["get_weather"]}},
	  "generation_config":{"max_output_tokens":7,"seed":9007199254740993,"thinking_config":{"include_thoughts":true}},
	  "labels":{"team_name":"a_b"}}`
	out, err := NormalizeGeminiJSON([]byte(in), GeminiGenerateTopLevel)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"systemInstruction"`, `"inlineData":{"data":"AA==","mimeType":"image/png"}`, `"functionDeclarations"`,
		`"anyOf"`, `"city_name":{"maxLength":3,"type":"STRING"}`, `"required":["city_name"]`, `"propertyOrdering":["city_name"]`,
		`"parametersJsonSchema":{"x_y":1}`, `"allowedFunctionNames"`, `"maxOutputTokens":7`, `"seed":9007199254740993`,
		`"includeThoughts":true`, `"labels":{"team_name":"a_b"}`, `"contents":[{`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("normalised body lacks %s:\n%s", want, out)
		}
	}
	var r GeminiGenerateRequest
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatal(err)
	}
	r.Model = "up/m"
	c, err := r.ToChatRequest()
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Messages) != 2 || c.Messages[0].Role != "system" || c.MaxCompletionTokens == nil || *c.MaxCompletionTokens != 7 || len(c.Tools) != 2 {
		t.Errorf("translated %+v", c)
	}

	// Nothing to change: the same bytes.
	same := `{"contents":[{"parts":[{"text":"snake_case_text"}]}],"generationConfig":{"maxOutputTokens":3}}`
	if out, err := NormalizeGeminiJSON([]byte(same), GeminiGenerateTopLevel); err != nil || string(out) != same {
		t.Errorf("unchanged body = %s, %v", out, err)
	}
}

// Names Google's API does not know are refused as it refuses them, and a field may not be
// given in both forms.
func TestNormalizeGeminiJSONRefusals(t *testing.T) {
	for body, field := range map[string]string{
		`{"contents":[],"generation_configs":{}}`:                                                                "generation_configs",
		`{"contents":[],"systemInstruction":{},"system_instruction":{}}`:                                         "systemInstruction",
		`{"contents":[{"parts":[{"text":"a"}]}],"generationConfig":{"maxOutputTokens":1,"max_output_tokens":2}}`: "maxOutputTokens",
	} {
		_, err := NormalizeGeminiJSON([]byte(body), GeminiGenerateTopLevel)
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != field {
			t.Errorf("%s: err = %v, want a validation error naming %s", body, err, field)
		}
	}
	if _, err := NormalizeGeminiJSON([]byte(`{"generateContentRequest":{"contents":{"parts":[{"text":"a"}]}}}`), GeminiCountTopLevel); err != nil {
		t.Errorf("countTokens body: %v", err)
	}
	if out, _ := NormalizeGeminiJSON([]byte(`{"generate_content_request":{"contents":{"parts":[{"text":"a"}]}}}`), GeminiCountTopLevel); !strings.Contains(string(out), `"generateContentRequest":{"contents":[{`) {
		t.Errorf("countTokens body normalised to %s", out)
	}
	if out, err := NormalizeGeminiJSON([]byte(`[1]`), GeminiCountTopLevel); err != nil || string(out) != `[1]` {
		t.Errorf("non-object body = %s, %v; want it unchanged for the decoder", out, err)
	}
}
