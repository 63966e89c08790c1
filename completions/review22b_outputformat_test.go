package completions

import (
	"context"
	"errors"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// Anthropic's structured outputs beta asks with a top-level output_format (what the
// Anthropic SDKs' beta messages and parse helpers send, the API still taking it beside
// output_config.format): the answer must follow the schema on every model, as with
// output_config.format, instead of the field being ignored and the answer free text.
func TestReview22bMessagesOutputFormat(t *testing.T) {
	const schema = `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"],"additionalProperties":false}`
	_, c, err := messagesRequest(t, `{"model":"openai/gpt-4o-mini","max_tokens":100,"messages":[{"role":"user","content":"Who?"}],
		"output_format":{"type":"json_schema","schema":`+schema+`}}`)
	if err != nil {
		t.Fatal(err)
	}
	req, err := c.ToRequest()
	if err != nil {
		t.Fatal(err)
	}
	fake := newFake("openai")
	fake.on("gpt-4o-mini", step{text: `{"name":"Ada"}`})
	h := newHarness(t, func(o *Options) { o.Providers = fakeRegistry{"openai": fake} })
	if _, err := h.g.Complete(context.Background(), Scope{}, req); err != nil {
		t.Fatal(err)
	}
	f := fake.lastRequest().ResponseFormat
	if f == nil || f.Type != providers.ResponseJSONSchema || string(f.Schema) != schema {
		t.Errorf("the upstream was asked for the response format %+v, want the output_format's schema", f)
	}

	for body, field := range map[string]string{
		`"output_format":{"type":"regex"}`: "output_format.type",
		`"output_format":{"type":"json_schema","schema":{"type":"object"}},"output_config":{"format":{"type":"json_schema","schema":{"type":"object"}}}`: "output_format",
	} {
		_, _, err := messagesRequest(t, `{"model":"openai/gpt-4o-mini","max_tokens":100,"messages":[{"role":"user","content":"Who?"}],`+body+`}`)
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != field {
			t.Errorf("%s: %v, want a validation error naming %s", body, err, field)
		}
	}
}
