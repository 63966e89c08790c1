package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	yaml "go.yaml.in/yaml/v4"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/routing"
)

// fuzzDecodeTarget is one route's request type, decoded as its handler decodes it, and
// the translation the handler runs next.
type fuzzDecodeTarget struct {
	name      string
	opts      decodeOptions
	new       func() any
	translate func(v any) // nil: none
}

var fuzzDecodeTargets = []fuzzDecodeTarget{
	{"completions", decodeOptions{EmptyIsObject: true}, func() any { return new(completions.Request) }, nil},
	{"openai-chat", decodeOptions{AllowUnknownFields: true}, func() any { return new(completions.OpenAIChatRequest) },
		func(v any) { v.(*completions.OpenAIChatRequest).ToRequest() }},
	{"responses", decodeOptions{AllowUnknownFields: true}, func() any { return new(completions.ResponsesRequest) }, nil},
	{"anthropic-messages", decodeOptions{AllowUnknownFields: true}, func() any { return new(completions.AnthropicMessagesRequest) },
		func(v any) {
			if creq, err := v.(*completions.AnthropicMessagesRequest).ToChatRequest(); err == nil {
				creq.ToRequest()
			}
		}},
	{"gemini-generate", decodeOptions{AllowUnknownFields: true, Rewrite: func(b []byte) ([]byte, error) {
		return completions.NormalizeGeminiJSON(b, completions.GeminiGenerateTopLevel)
	}}, func() any { return new(completions.GeminiGenerateRequest) },
		func(v any) {
			g := v.(*completions.GeminiGenerateRequest)
			g.Model = "gemini-2.5-flash"
			if creq, err := g.ToChatRequest(); err == nil {
				creq.ToRequest()
			}
			g.IncludeThoughts()
		}},
	{"model-select", decodeOptions{ValidationStatus: http.StatusBadRequest, EmptyIsObject: true}, func() any { return new(routing.Request) }, nil},
	{"text-completions", decodeOptions{AllowUnknownFields: true}, func() any { return new(completions.OpenAITextCompletionRequest) },
		func(v any) { v.(*completions.OpenAITextCompletionRequest).ToChatRequests() }},
	{"preference", decodeOptions{ValidationStatus: http.StatusBadRequest, EmptyIsObject: true}, func() any { return new(routing.PreferenceRequest) }, nil},
}

// fuzzDecodeSeeds are recorded request bodies (the providers' cassettes) and hand-written
// ones for the routes without recordings.
func fuzzDecodeSeeds(tb testing.TB) map[string][][]byte {
	seeds := map[string][][]byte{
		"completions": {
			[]byte(`{"model":"openai/gpt-4o","messages":[{"role":"user","content":"hi"}],"max_tokens":5,"stream":true}`),
			[]byte(`{"models":["openai/gpt-4o","anthropic/claude-sonnet-4-5"],"messages":[{"role":"system","content":"s"},{"role":"user","content":[{"type":"text","text":"x"}]}],"temperature":0.5}`),
			[]byte(``),
		},
		"responses": {
			[]byte(`{"model":"gpt-4o","input":"hi","instructions":"be brief","max_output_tokens":20,"stream":true}`),
			[]byte(`{"model":"gpt-4o","input":[{"role":"user","content":[{"type":"input_text","text":"hi"}]},{"type":"function_call_output","call_id":"c1","output":"42"}],"tools":[{"type":"function","name":"f","parameters":{"type":"object"}}],"previous_response_id":"resp_1"}`),
		},
		"gemini-generate": {
			[]byte(`{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"generationConfig":{"maxOutputTokens":10,"temperature":0.2,"thinkingConfig":{"includeThoughts":true}}}`),
			[]byte(`{"system_instruction":{"parts":[{"text":"s"}]},"contents":[{"parts":[{"inline_data":{"mime_type":"image/png","data":"iVBORw0KGgo="}}]}],"tools":[{"functionDeclarations":[{"name":"f","parameters":{"type":"OBJECT"}}]}]}`),
		},
		"model-select": {
			[]byte(`{"messages":[{"role":"user","content":"hi"}],"llm_providers":[{"provider":"openai","model":"gpt-4o"},{"provider":"anthropic","model":"claude-sonnet-4-5","input_price":3,"output_price":15}],"tradeoff":"cost"}`),
			[]byte(``),
		},
		"text-completions": {
			[]byte(`{"model":"gpt-3.5-turbo-instruct","prompt":["a","b"],"max_tokens":5,"n":2,"echo":true,"stop":["\n"]}`),
			[]byte(`{"model":"m","prompt":[[1,2,3]],"logprobs":2}`),
		},
		"preference": {[]byte(`{"name":"p"}`), []byte(``)},
		"anthropic-messages": {
			[]byte(`{"model":"claude-sonnet-4-5","max_tokens":64,"system":[{"type":"text","text":"s","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"r"}]}],"thinking":{"type":"enabled","budget_tokens":1024}}`),
		},
	}
	cassettes := map[string]string{"openai-chat": "openai", "anthropic-messages": "anthropic"}
	for target, dir := range cassettes {
		files, _ := filepath.Glob(filepath.Join("..", "providers", "testdata", dir, "*.yaml"))
		for _, f := range files {
			raw, err := os.ReadFile(f)
			if err != nil {
				tb.Fatal(err)
			}
			var cas struct {
				Interactions []struct {
					Request struct {
						Body string `yaml:"body"`
					} `yaml:"request"`
				} `yaml:"interactions"`
			}
			if yaml.Unmarshal(raw, &cas) != nil {
				continue
			}
			for _, in := range cas.Interactions {
				if in.Request.Body != "" {
					seeds[target] = append(seeds[target], []byte(in.Request.Body))
				}
			}
		}
	}
	return seeds
}

func fuzzDecode(t fuzzDecodeTarget, body []byte) (any, error) {
	r := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
	v := t.new()
	return v, decodeJSON(r, v, t.opts)
}

// FuzzDecodeJSON decodes arbitrary bodies into the main request types as their routes do.
// A refused body must be an *APIError with a 400, 413 or 422 (on the Gemini route, a
// completions error mapped to one); an accepted one must encode,
// and its encoding decode again to the same encoding (nothing read is lost or changed
// silently by a decode–encode round trip). The handlers' translations must not panic.
func FuzzDecodeJSON(f *testing.F) {
	seeds := fuzzDecodeSeeds(f)
	for i, t := range fuzzDecodeTargets {
		for _, s := range seeds[t.name] {
			f.Add(byte(i), s)
		}
		f.Add(byte(i), []byte(`{}`))
	}
	f.Fuzz(func(t *testing.T, which byte, body []byte) {
		target := fuzzDecodeTargets[int(which)%len(fuzzDecodeTargets)]
		v, err := fuzzDecode(target, body)
		if err != nil {
			var ae *APIError
			if !errors.As(err, &ae) {
				// A Rewrite's error (the Gemini names) comes back as it is, one of the
				// completions package's, which the route maps.
				if target.opts.Rewrite == nil || !errors.Is(err, completions.ErrInvalid) {
					t.Fatalf("%s: error %T is not an *APIError: %v", target.name, err, err)
				}
				ae = completionsError(err)
			}
			switch ae.Status {
			case http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusUnprocessableEntity:
			default:
				t.Fatalf("%s: status %d for a bad body: %v", target.name, ae.Status, err)
			}
			if ae.Message == "" {
				t.Fatalf("%s: error without a message", target.name)
			}
			return
		}
		enc1, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("%s: accepted body does not encode: %v", target.name, err)
		}
		v2, err := fuzzDecode(target, enc1)
		if err != nil {
			t.Fatalf("%s: the encoding of an accepted body is refused: %v\nbody: %q\nencoding: %s", target.name, err, body, enc1)
		}
		enc2, err := json.Marshal(v2)
		if err != nil {
			t.Fatalf("%s: re-decoded body does not encode: %v", target.name, err)
		}
		if !bytes.Equal(enc1, enc2) {
			t.Fatalf("%s: decode–encode is not stable\nbody: %q\nfirst:  %s\nsecond: %s", target.name, body, enc1, enc2)
		}
		if target.translate != nil {
			target.translate(v)
		}
	})
}
