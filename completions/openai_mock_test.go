package completions

import (
	"encoding/json"
	"errors"
	"testing"
)

// LiteLLM's testing switches are refused naming the field, not ignored: ignored, a
// mock_response request would call and bill the real model, and a mock_testing_fallbacks
// test would pass without any fallback tried. Their off values pass.
func TestOpenAIChatMockFieldsRefused(t *testing.T) {
	for _, tc := range []struct{ extra, field string }{
		{`"mock_response":"It's a mock"`, "mock_response"},
		{`"mock_testing_fallbacks":true`, "mock_testing_fallbacks"},
		{`"mock_timeout":true`, "mock_timeout"},
	} {
		var o OpenAIChatRequest
		if err := json.Unmarshal([]byte(`{"model":"a/m","messages":[{"role":"user","content":"x"}],`+tc.extra+`}`), &o); err != nil {
			t.Fatal(err)
		}
		_, err := o.ToRequest()
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != tc.field {
			t.Errorf("%s: err = %v, want a validation error naming %s", tc.extra, err, tc.field)
		}
	}
	for _, extra := range []string{`"mock_testing_fallbacks":false`, `"mock_response":null`, `"mock_timeout":false`} {
		var o OpenAIChatRequest
		if err := json.Unmarshal([]byte(`{"model":"a/m","messages":[{"role":"user","content":"x"}],`+extra+`}`), &o); err != nil {
			t.Fatal(err)
		}
		if _, err := o.ToRequest(); err != nil {
			t.Errorf("%s: %v", extra, err)
		}
	}
}
