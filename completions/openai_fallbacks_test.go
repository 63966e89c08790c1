package completions

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"
)

// LiteLLM's client-side fallbacks (model names) follow fallback_models; its per-fallback
// objects and a value that is not an array are refused naming the field.
func TestOpenAIChatLiteLLMFallbacks(t *testing.T) {
	parse := func(extra string) (*Request, error) {
		var o OpenAIChatRequest
		if err := json.Unmarshal([]byte(`{"model":"a/m","messages":[{"role":"user","content":"x"}],`+extra+`}`), &o); err != nil {
			t.Fatal(err)
		}
		return o.ToRequest()
	}
	for extra, want := range map[string][]string{
		`"fallbacks":["b/m","grp"]`:                     {"b/m", "grp"},
		`"fallback_models":["c/m"],"fallbacks":["b/m"]`: {"c/m", "b/m"},
		`"fallbacks":[]`:                                nil,
		`"fallbacks":null,"fallback_models":["c/m"]`:    {"c/m"},
	} {
		req, err := parse(extra)
		if err != nil || !slices.Equal(req.FallbackModels, want) {
			t.Errorf("%s: %v, %v; want %v", extra, req, err, want)
		}
	}
	for extra, field := range map[string]string{
		`"fallbacks":"b/m"`: "fallbacks",
		`"fallbacks":["b/m",{"model":"c/m","messages":[{"role":"user","content":"y"}]}]`: "fallbacks[1]",
	} {
		_, err := parse(extra)
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != field {
			t.Errorf("%s: %v, want a validation error naming %s", extra, err, field)
		}
	}
}
