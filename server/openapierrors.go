package server

import (
	"net/http"
	"slices"
	"strings"

	"github.com/switchyard-ai/switchyard/completions"
)

// errorBody is the uniform failure body, for the OpenAPI document.
type errorBody struct {
	Error   string `json:"error" jsonschema:"required,description=kind of failure (Validation Error or Not Found or …)"`
	Message string `json:"message" jsonschema:"required,description=what was wrong: naming the field and the rule"`
}

// errorSchemaNames are the components/schemas names of the envelopes' schemas.
var errorSchemaNames = map[errorEnvelope]string{
	envelopeUniform:   "Error",
	envelopeOpenAI:    "OpenAIError",
	envelopeAnthropic: "AnthropicError",
	envelopeGemini:    "GeminiError",
}

// errorSchemaComponents are the schemas of the failure envelopes, one per surface family,
// which every failure response of the document refers to.
func errorSchemaComponents() map[string]any {
	out := map[string]any{}
	for e, v := range map[errorEnvelope]any{
		envelopeUniform:   errorBody{},
		envelopeOpenAI:    completions.OpenAIErrorBody{},
		envelopeAnthropic: completions.AnthropicErrorBody{},
		envelopeGemini:    completions.GeminiErrorBody{},
	} {
		out[errorSchemaNames[e]] = schemaFor(v)
	}
	return out
}

// docError is one failure status of an operation: when it happens and the envelopes its
// body may take.
type docError struct {
	desc      string
	envelopes []errorEnvelope
}

func (d *docError) add(e errorEnvelope) {
	if !slices.Contains(d.envelopes, e) {
		d.envelopes = append(d.envelopes, e)
	}
}

// response is d as an OpenAPI Response Object: its schema refers to the envelope's
// component, or is anyOf them when the route answers the status in more than one.
func (d *docError) response() map[string]any {
	refs := make([]any, len(d.envelopes))
	slices.Sort(d.envelopes)
	for i, e := range d.envelopes {
		refs[i] = map[string]any{"$ref": "#/components/schemas/" + errorSchemaNames[e]}
	}
	schema := refs[0]
	if len(refs) > 1 {
		schema = map[string]any{"anyOf": refs}
	}
	return map[string]any{"description": d.desc, "headers": everyAnswerHeaders(),
		"content": map[string]any{"application/json": map[string]any{"schema": schema}}}
}

// routeErrors are the failure statuses rt answers ("default" under 0): its own (Errors)
// in its handler's envelope, and those the server answers before the handler in the
// path's (errorEnvelopeOf, as respondError writes them) — 401 without a valid key, 403 to
// a key limited in scope on a route such keys may not call, 413 for a body over the limit,
// 429 past the failed-authentication limit (and, on a POST, the key's requests per
// minute).
func routeErrors(rt Route) map[int]*docError {
	path := []errorEnvelope{errorEnvelopeOf(rt.Method, rt.Path)}
	if rt.Method == http.MethodPost && strings.HasPrefix(rt.Path, "/v1/models/{") {
		// {model}:{method} is a Gemini call (geminiPath); a path naming no Gemini
		// method is answered by the OpenAI surface beside it.
		path = []errorEnvelope{envelopeGemini, envelopeOpenAI}
	}
	handler := path
	if rt.GatewayErrors && path[0] == envelopeUniform {
		handler = []errorEnvelope{envelopeOpenAI}
	}
	out := map[int]*docError{}
	add := func(code int, desc string, envs []errorEnvelope) {
		d := out[code]
		if d == nil {
			d = &docError{desc: desc}
			out[code] = d
		}
		for _, e := range envs {
			d.add(e)
		}
	}
	for code, desc := range rt.Errors {
		add(code, desc, handler)
	}
	if !rt.Public {
		// The server's own wording of the 401 comes first; a route's own 401 (LiteLLM's
		// key_model_access_denied of a model the key may not call) follows it.
		desc := "missing or invalid API key"
		if own := rt.Errors[http.StatusUnauthorized]; own != "" {
			desc += "; or " + own
		}
		if d := out[http.StatusUnauthorized]; d != nil {
			d.desc = desc
		}
		add(http.StatusUnauthorized, desc, path)
		if !rt.ScopedKeys {
			who := "a virtual key or a job key"
			if rt.VirtualKeys {
				who = "a job key"
			}
			add(http.StatusForbidden, "the calling key is limited in scope ("+who+") and may not call this route", path)
		}
		limit := "too many failed authentications from this address (Retry-After says when to try again)"
		if rt.Method == http.MethodPost {
			limit += "; or past the key's requests per minute"
		}
		add(http.StatusTooManyRequests, limit, path)
	}
	if rt.Request != nil {
		add(http.StatusRequestEntityTooLarge, "the request body exceeds the limit (serve --max-body-bytes or the route's own)", path)
		add(http.StatusRequestEntityTooLarge, "", handler)
	}
	add(0, "error", path)
	add(0, "", handler)
	return out
}
