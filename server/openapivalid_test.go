package server

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/switchyard-ai/switchyard/batch"
	"github.com/switchyard-ai/switchyard/mcpgateway"
	"github.com/switchyard-ai/switchyard/mcpgateway/mcpgatewaytest"
	"github.com/switchyard-ai/switchyard/optimizer"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/trainer"
	"github.com/switchyard-ai/switchyard/usagelog"
)

// fullAPIServer is keysServer (the gateway over the scripted OpenAI upstream as provider
// "openai", model selection, usage) with every other capability `switchyard serve` wires
// in as well — custom routers, batches and files, prompt optimization (a fake agent
// runner), an MCP gateway over a fake MCP server, spend, the console and /metrics — so its
// OpenAPI document lists every route.
func fullAPIServer(t *testing.T) (*httptest.Server, *Server) {
	t.Helper()
	hs, s := keysServer(t, nil, 0)
	st := s.Store()
	quiet := slog.New(slog.DiscardHandler)
	tr, err := trainer.New(st, trainer.WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	files, err := batch.NewFiles(st, batch.FilesOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bs, err := batch.New(st, files, batch.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	reg := providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: hs.URL + "/v1", APIKey: testKey}))
	proposer, err := optimizer.NewLLMProposer(reg, "openai/ok", nil)
	if err != nil {
		t.Fatal(err)
	}
	opt, err := optimizer.New(st, fakeAgentRunner{}, proposer, optimizer.WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	web := mcpgatewaytest.StartFakeHTTP(t, "fake-web")
	mg, err := mcpgateway.New([]mcpgateway.ServerConfig{{Name: "web", URL: web.URL}}, mcpgateway.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mg.Close() })
	roll := usagelog.NewRollup(st, usagelog.RollupOptions{FlushEvery: time.Hour})
	for _, o := range []Option{CustomRouters(tr), Batches(bs), Optimizer(opt), MCP(mg), Spend(roll), Console(), MetricsEndpoint(http.NotFoundHandler())} {
		if err := o(s); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	return hs, s
}

// loadOpenAPI parses the server's document with kin-openapi and validates it as
// OpenAPI: unresolved $refs, duplicate operationIds, undeclared or missing path
// parameters, paths differing only by parameter names, invalid schemas.
func loadOpenAPI(t *testing.T, s *Server) *openapi3.T {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(s.OpenAPI())
	if err != nil {
		t.Fatalf("the OpenAPI document does not load: %v", err)
	}
	ctx := openapi3.WithValidationOptions(context.Background(), openapi3.EnableMultiError())
	if err := doc.Validate(ctx); err != nil {
		t.Fatalf("the OpenAPI document is not valid OpenAPI: %v", err)
	}
	return doc
}

// TestOpenAPIDocumentValidates: the document of a server with every capability is valid
// OpenAPI 3.1 by kin-openapi's validator (what oapi-codegen loads documents with), and
// documents every route the server registered.
func TestOpenAPIDocumentValidates(t *testing.T) {
	_, s := fullAPIServer(t)
	doc := loadOpenAPI(t, s)
	ops := 0
	for _, item := range doc.Paths.Map() {
		ops += len(item.Operations())
	}
	if ops != len(s.Routes()) || ops < 130 {
		t.Fatalf("the document has %d operations for %d routes", ops, len(s.Routes()))
	}
}

// TestOpenAPINoBooleanSchemas: no schema in the document is the boolean schema true or
// false where a Schema Object is read (items, properties, oneOf, …): oapi-codegen and
// Redocly refuse them (additionalProperties: false, valid in every OpenAPI version, is
// kept), and no oneOf has an alternative that takes any value, which makes every value
// that matches another alternative (null, for a nullable any) fail the oneOf.
func TestOpenAPINoBooleanSchemas(t *testing.T) {
	_, s := fullAPIServer(t)
	var doc any
	if err := json.Unmarshal(s.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	var bad []string
	var walk func(v any, path string, schema bool)
	walk = func(v any, path string, schema bool) {
		switch x := v.(type) {
		case bool:
			if schema {
				bad = append(bad, fmt.Sprintf("%s is %v", path, x))
			}
		case []any:
			for i, e := range x {
				walk(e, fmt.Sprintf("%s/%d", path, i), schema)
			}
		case map[string]any:
			for k, e := range x {
				switch k {
				case "schema", "items", "not", "contains", "propertyNames", "if", "then", "else", "allOf", "anyOf", "prefixItems":
					walk(e, path+"/"+k, true)
				case "oneOf":
					for i, alt := range e.([]any) {
						if m, ok := alt.(map[string]any); ok && len(m) == 0 {
							bad = append(bad, fmt.Sprintf("%s/oneOf/%d takes any value", path, i))
						}
					}
					walk(e, path+"/"+k, true)
				case "properties":
					if m, ok := e.(map[string]any); ok && schema {
						for name, p := range m {
							walk(p, path+"/properties/"+name, true)
						}
						continue
					}
					walk(e, path+"/"+k, false)
				case "additionalProperties":
					if e != false {
						walk(e, path+"/"+k, true)
					}
				default:
					walk(e, path+"/"+k, false)
				}
			}
		}
	}
	walk(doc, "", false)
	sort.Strings(bad)
	if len(bad) > 0 {
		t.Fatalf("%d boolean or take-anything schemas, e.g.:\n%s", len(bad), strings.Join(bad[:min(len(bad), 10)], "\n"))
	}
}

// TestOpenAPIPropertiesNameDistinctFields: no object in the document has two properties
// that a client generator turns into the same field name (oapi-codegen drops what is not
// a letter or digit and capitalizes the words: image and image[] were both Image, so the
// generated Go did not compile) unless one says its Go name (x-go-name); and
// /v1/images/edits documents image[] as the repeated file parts the handler reads.
func TestOpenAPIPropertiesNameDistinctFields(t *testing.T) {
	_, s := fullAPIServer(t)
	var doc any
	if err := json.Unmarshal(s.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	fieldName := func(prop string) string {
		var b strings.Builder
		for _, w := range strings.FieldsFunc(prop, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			b.WriteString(strings.ToUpper(w[:1]) + w[1:])
		}
		return b.String()
	}
	var walk func(v any, path string)
	walk = func(v any, path string) {
		switch x := v.(type) {
		case []any:
			for i, e := range x {
				walk(e, fmt.Sprintf("%s/%d", path, i))
			}
		case map[string]any:
			if props, ok := x["properties"].(map[string]any); ok {
				seen := map[string]string{}
				for name, p := range props {
					f := fieldName(name)
					if g, ok := at(p, "x-go-name").(string); ok {
						f = g
					}
					if other, dup := seen[f]; dup {
						t.Errorf("%s: properties %q and %q are both field %s in a generated client", path, other, name, f)
					}
					seen[f] = name
				}
			}
			for k, e := range x {
				walk(e, path+"/"+k)
			}
		}
	}
	walk(doc, "")

	form := at(doc, "paths", "/v1/images/edits", "post", "requestBody", "content", "multipart/form-data", "schema")
	images := at(form, "properties", "image[]")
	if at(images, "type") != "array" || at(images, "items", "format") != "binary" || at(images, "maxItems") != float64(16) {
		t.Errorf("image[] is %v, want an array of at most 16 binary parts", images)
	}
	if slices.Contains(strs(at(form, "required")), "image") {
		t.Errorf("image is required, but image[] alone is taken: %v", at(form, "required"))
	}
}
