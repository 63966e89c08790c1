package server

import (
	"encoding/json"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/invopop/jsonschema"
)

var pathParam = regexp.MustCompile(`\{([A-Za-z0-9_]+)\.{0,3}\}`)

// schemaFor reflects a Go value's type into an inlined JSON Schema (2020-12, as OpenAPI 3.1
// uses). A field is listed as required only when tagged `jsonschema:"required"`; the
// decoders enforce presence themselves, the tag documents it.
func schemaFor(v any) *jsonschema.Schema {
	r := &jsonschema.Reflector{DoNotReference: true, AllowAdditionalProperties: true, RequiredFromJSONSchemaTags: true}
	t := reflect.TypeOf(v)
	s := r.ReflectFromType(t)
	s.Version = ""
	s.ID = ""
	nilPointersNullable(t, s, 0)
	return openSchemas(s)
}

// nilPointersNullable makes the property of every pointer field of t without omitempty
// admit null: encoding/json writes such a field null when it is nil (LiteLLM's key fields,
// a chat answer's content and refusal), so a schema of the pointed-to type alone fails
// the answer. A property already nullable (the nullable tag), or one whose type has its own
// JSONSchema, is left as it is.
func nilPointersNullable(t reflect.Type, s *jsonschema.Schema, depth int) {
	if s == nil || depth > 32 {
		return
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if _, own := reflect.New(t).Interface().(interface{ JSONSchema() *jsonschema.Schema }); own {
		return
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		nilPointersNullable(t.Elem(), s.Items, depth+1)
	case reflect.Map:
		nilPointersNullable(t.Elem(), s.AdditionalProperties, depth+1)
	case reflect.Struct:
		if s.Properties == nil {
			return
		}
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			name, opts, _ := strings.Cut(tag, ",")
			if tag == "-" || !f.IsExported() && !f.Anonymous {
				continue
			}
			if f.Anonymous && name == "" {
				nilPointersNullable(f.Type, s, depth+1)
				continue
			}
			if name == "" {
				name = f.Name
			}
			prop, ok := s.Properties.Get(name)
			if !ok || prop == nil {
				continue
			}
			if len(prop.OneOf) > 0 && prop.OneOf[len(prop.OneOf)-1].Type == "null" {
				prop = prop.OneOf[0] // nullable already
				nilPointersNullable(f.Type, prop, depth+1)
				continue
			}
			nilPointersNullable(f.Type, prop, depth+1)
			if f.Type.Kind() != reflect.Pointer || slices.Contains(strings.Split(opts, ","), "omitempty") || prop.Type == "null" || prop.Type == "" && len(prop.OneOf)+len(prop.AnyOf) == 0 {
				continue
			}
			s.Properties.Set(name, &jsonschema.Schema{OneOf: []*jsonschema.Schema{prop, {Type: "null"}}})
		}
	}
}

// openSchemas returns s with every schema that takes any value written {} rather than as
// the boolean schema true, which invopop/jsonschema writes for an empty schema (an `any`
// field, []any's items). Both mean the same in JSON Schema 2020-12, but OpenAPI tools
// that read a Schema Object as an object refuse true: oapi-codegen ("cannot unmarshal bool
// into field Schema.items"), Redocly ("Expected type Schema (object) but got boolean"). A
// nullable any (oneOf [any, null]) becomes any: null is a value of any, and as a oneOf it
// matched both alternatives, so null failed it.
func openSchemas(s *jsonschema.Schema) *jsonschema.Schema {
	if s == nil || s == jsonschema.FalseSchema {
		return s
	}
	if s == jsonschema.TrueSchema || reflect.DeepEqual(s, &jsonschema.Schema{}) {
		// A non-nil empty Extras makes the schema differ from the empty one, which
		// Schema.MarshalJSON writes as true; it adds no keyword, so it is written {}.
		return &jsonschema.Schema{Extras: map[string]any{}}
	}
	for _, alt := range s.OneOf {
		if alt == jsonschema.TrueSchema || reflect.DeepEqual(alt, &jsonschema.Schema{}) {
			s.OneOf = nil
			if reflect.DeepEqual(s, &jsonschema.Schema{}) {
				return openSchemas(s)
			}
			break
		}
	}
	for _, list := range [][]*jsonschema.Schema{s.AllOf, s.AnyOf, s.OneOf, s.PrefixItems} {
		for i := range list {
			list[i] = openSchemas(list[i])
		}
	}
	for _, p := range []**jsonschema.Schema{&s.Not, &s.If, &s.Then, &s.Else, &s.Items, &s.Contains, &s.AdditionalProperties, &s.PropertyNames, &s.ContentSchema} {
		*p = openSchemas(*p)
	}
	for _, m := range []map[string]*jsonschema.Schema{s.DependentSchemas, s.PatternProperties} {
		for k, v := range m {
			m[k] = openSchemas(v)
		}
	}
	if s.Properties != nil {
		for pair := s.Properties.Oldest(); pair != nil; pair = pair.Next() {
			pair.Value = openSchemas(pair.Value)
		}
	}
	return s
}

// OpenAPI returns the OpenAPI 3.1 document of every registered route, built from the
// request and response types.
func (s *Server) OpenAPI() []byte {
	s.openapiOnce.Do(func() { s.openapi = s.buildOpenAPI() })
	return s.openapi
}

func (s *Server) buildOpenAPI() []byte {
	paths := map[string]map[string]any{}
	// operationIds are unique: a later route whose id is taken — an OpenAI-compatible /v1
	// route named as a Switchyard one (/v1/completions beside /api/v1/completions) — says
	// OpenAI after its method, then a number if need be.
	taken := map[string]bool{}
	uniqueID := func(id, path string) string {
		if taken[id] && strings.HasPrefix(path, "/v1/") {
			if i := strings.IndexFunc(id, func(r rune) bool { return r >= 'A' && r <= 'Z' }); i > 0 {
				id = id[:i] + "OpenAI" + id[i:]
			}
		}
		for n, base := 2, id; taken[id]; n++ {
			id = base + strconv.Itoa(n)
		}
		taken[id] = true
		return id
	}
	for _, rt := range s.routes {
		op := map[string]any{
			"summary":     rt.Summary,
			"operationId": uniqueID(operationID(rt), rt.Path),
		}
		if len(rt.Tags) > 0 {
			op["tags"] = rt.Tags
		}
		var params []map[string]any
		for _, m := range pathParam.FindAllStringSubmatch(rt.Path, -1) {
			params = append(params, map[string]any{"name": m[1], "in": "path", "required": true, "schema": map[string]string{"type": "string"}})
		}
		for _, q := range rt.Query {
			params = append(params, map[string]any{"name": q.Name, "in": "query", "required": q.Required, "description": q.Description, "schema": q.querySchema()})
		}
		for _, h := range rt.Headers {
			params = append(params, map[string]any{"name": h.Name, "in": "header", "required": false, "description": h.Description, "schema": map[string]string{"type": "string"}})
		}
		if len(params) > 0 {
			op["parameters"] = params
		}
		if rt.Request != nil {
			ctype := rt.RequestContentType
			if ctype == "" {
				ctype = "application/json"
			}
			op["requestBody"] = map[string]any{
				"required": true,
				"content":  map[string]any{ctype: map[string]any{"schema": schemaFor(rt.Request)}},
			}
		}
		status := rt.Status
		if status == 0 {
			status = http.StatusOK
		}
		ok := map[string]any{"description": http.StatusText(status)}
		content := map[string]any{}
		if rt.Response != nil {
			content["application/json"] = map[string]any{"schema": schemaFor(rt.Response)}
		} else if len(rt.OneOf) > 0 {
			alts := make([]any, len(rt.OneOf))
			for i, v := range rt.OneOf {
				alts[i] = schemaFor(v)
			}
			content["application/json"] = map[string]any{"schema": map[string]any{"oneOf": alts}}
		}
		if rt.Stream {
			content["text/event-stream"] = map[string]any{"schema": map[string]string{"type": "string"}}
		}
		for _, ct := range rt.ResponseContentTypes {
			content[ct] = map[string]any{"schema": map[string]string{"type": "string", "format": "binary"}}
		}
		if len(content) > 0 {
			ok["content"] = content
		}
		headers := everyAnswerHeaders()
		for _, h := range rt.ResponseHeaders {
			headers[h.Name] = map[string]any{"description": h.Description, "schema": map[string]string{"type": "string"}}
		}
		ok["headers"] = headers
		responses := map[string]any{strconv.Itoa(status): ok}
		for code, e := range routeErrors(rt) {
			key := strconv.Itoa(code)
			if code == 0 {
				key = "default"
			}
			responses[key] = e.response()
		}
		if rt.Public {
			op["security"] = []any{}
		}
		op["responses"] = responses
		p := pathParam.ReplaceAllString(rt.Path, "{$1}")
		if paths[p] == nil {
			paths[p] = map[string]any{}
		}
		paths[p][strings.ToLower(rt.Method)] = op
	}
	doc := map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{
			"title":   "Switchyard API",
			"version": s.cfg.Version,
			"description": "Model selection, custom router training and prediction, agent prompt optimization " +
				"and chat completions. A failure body is {\"error\": kind, \"message\": text} (components/schemas/Error) on /api/v1, " +
				"/v2 and the other native routes; OpenAI's envelope {\"error\": {\"message\", \"type\", \"param\", \"code\"}} (OpenAIError) " +
				"on the OpenAI-compatible /v1 routes (and their Azure /openai/deployments/ and /engines/ forms and /utils/token_counter, /spend/calculate) and on LiteLLM's management routes (/key, /team, /user, /customer, /end_user, " +
				"/budget, /spend, /global/spend, /model/info, /model_group/info, /health) as LiteLLM's proxy answers them; " +
				"Anthropic's {\"type\": \"error\", \"error\": {\"type\", \"message\"}} (AnthropicError) on /v1/messages; " +
				"Google's {\"error\": {\"code\", \"message\", \"status\"}} (GeminiError) on the Gemini routes. " +
				"Each operation lists the statuses it answers with the envelope of each.",
		},
		// One server, "/": Redocly's lint asks for servers, and "/" keeps every path relative
		// to wherever the document was fetched from.
		"servers": []any{map[string]any{"url": "/"}},
		"paths":   paths,
		"components": map[string]any{
			"securitySchemes": map[string]any{"bearer": map[string]any{"type": "http", "scheme": "bearer"}},
			"headers":         answerHeaderComponents(),
			"schemas":         errorSchemaComponents(),
		},
		"security": []any{map[string]any{"bearer": []string{}}},
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		panic("server: building OpenAPI document: " + err.Error())
	}
	return b
}

// answerHeaderComponents are the response headers every answer carries (withAccessLog),
// as the document's components/headers that each response refers to (everyAnswerHeaders).
func answerHeaderComponents() map[string]any {
	str := map[string]string{"type": "string"}
	return map[string]any{
		"X-Request-Id": map[string]any{"required": true, "schema": str,
			"description": "The request's id: the caller's own X-Request-Id when it is 1-" + strconv.Itoa(maxRequestIDLen) +
				" printable characters without spaces or quotes, else req_ and 32 hex digits. The usage history and /spend/logs (request_id) hold a gateway request under it, refused ones too."},
		"x-litellm-call-id": map[string]any{"required": true, "schema": str,
			"description": "LiteLLM's name for the request's id: the same value as X-Request-Id."},
	}
}

// everyAnswerHeaders refers a response to the headers of answerHeaderComponents.
func everyAnswerHeaders() map[string]any {
	out := map[string]any{}
	for name := range answerHeaderComponents() {
		out[name] = map[string]any{"$ref": "#/components/headers/" + name}
	}
	return out
}

func operationID(rt Route) string {
	parts := strings.FieldsFunc(rt.Path, func(r rune) bool { return r == '/' || r == '{' || r == '}' || r == '.' || r == '-' })
	var b strings.Builder
	b.WriteString(strings.ToLower(rt.Method))
	for _, p := range parts {
		if p == "api" || p == "v1" {
			continue
		}
		b.WriteString(strings.ToUpper(p[:1]) + p[1:])
	}
	return b.String()
}

func (s *Server) handleOpenAPI(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "application/json")
	w.Write(s.OpenAPI())
	return nil
}

// Routes returns the registered routes sorted by path then method.
func (s *Server) Routes() []Route {
	out := append([]Route(nil), s.routes...)
	sort.Slice(out, func(i, j int) bool {
		if out[i].Path != out[j].Path {
			return out[i].Path < out[j].Path
		}
		return out[i].Method < out[j].Method
	})
	return out
}
