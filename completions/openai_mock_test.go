package completions

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// LiteLLM's testing switches become the request's MockResponse and MockFailure (the
// first true of the mock_testing_* switches and mock_timeout, in that order); values of another
// type, LiteLLM's mock error strings and a mock answer with a mock failure are refused
// naming the field; their off values pass and mock nothing.
func TestOpenAIChatMockFields(t *testing.T) {
	parse := func(extra string) (*Request, error) {
		var o OpenAIChatRequest
		if err := json.Unmarshal([]byte(`{"model":"a/m","messages":[{"role":"user","content":"x"}],`+extra+`}`), &o); err != nil {
			t.Fatal(err)
		}
		return o.ToRequest()
	}
	for _, tc := range []struct {
		extra string
		text  string
		kind  providers.ErrorKind
	}{
		{`"mock_response":"It's a mock"`, "It's a mock", providers.KindUnknown},
		{`"mock_response":""`, "", providers.KindUnknown},
		{`"mock_testing_fallbacks":true`, "", providers.KindOverloaded},
		{`"mock_testing_context_fallbacks":true`, "", providers.KindContextLength},
		{`"mock_testing_content_policy_fallbacks":true`, "", providers.KindContentFilter},
		{`"mock_testing_fallbacks":false,"mock_testing_content_policy_fallbacks":true,"mock_testing_context_fallbacks":true`, "", providers.KindContextLength},
		{`"mock_timeout":true,"timeout":3`, "", providers.KindTimeout},
	} {
		req, err := parse(tc.extra)
		if err != nil {
			t.Errorf("%s: %v", tc.extra, err)
			continue
		}
		if req.MockFailure != tc.kind {
			t.Errorf("%s: MockFailure %v, want %v", tc.extra, req.MockFailure, tc.kind)
		}
		if wantText := tc.kind == providers.KindUnknown; (req.MockResponse != nil) != wantText || wantText && *req.MockResponse != tc.text {
			t.Errorf("%s: MockResponse %v, want %q", tc.extra, req.MockResponse, tc.text)
		}
	}
	for _, tc := range []struct{ extra, field string }{
		{`"mock_response":{"choices":[]}`, "mock_response"},
		{`"mock_response":"litellm.RateLimitError"`, "mock_response"},
		{`"mock_response":"Exception: content_filter_policy"`, "mock_response"},
		{`"mock_testing_fallbacks":"true"`, "mock_testing_fallbacks"},
		{`"mock_testing_content_policy_fallbacks":1`, "mock_testing_content_policy_fallbacks"},
		{`"mock_response":"x","mock_testing_context_fallbacks":true`, "mock_response"},
		{`"mock_timeout":1`, "mock_timeout"},
		{`"mock_response":"x","mock_timeout":true`, "mock_response"},
	} {
		_, err := parse(tc.extra)
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != tc.field {
			t.Errorf("%s: err = %v, want a validation error naming %s", tc.extra, err, tc.field)
		}
	}
	for _, extra := range []string{`"mock_testing_fallbacks":false`, `"mock_response":null`, `"mock_timeout":false`, `"mock_testing_context_fallbacks":null`} {
		req, err := parse(extra)
		if err != nil || req.MockResponse != nil || req.MockFailure != providers.KindUnknown {
			t.Errorf("%s: %v, %+v", extra, err, req)
		}
	}
}
