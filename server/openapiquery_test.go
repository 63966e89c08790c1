package server

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// queryParamSchema is the schema the document gives query parameter name of method path
// (nil when the operation or the parameter is not documented).
func queryParamSchema(doc *openapi3.T, method, path, name string) *openapi3.Schema {
	item := doc.Paths.Find(path)
	if item == nil || item.GetOperation(method) == nil {
		return nil
	}
	for _, p := range item.GetOperation(method).Parameters {
		if p.Value != nil && p.Value.In == "query" && p.Value.Name == name && p.Value.Schema != nil {
			return p.Value.Schema.Value
		}
	}
	return nil
}

// TestOpenAPIQueryParamTypes: the query parameters whose handlers parse an integer, a
// boolean or one of fixed values are documented so (type, minimum, maximum, enum), so
// generated clients take typed values, and each handler does refuse what the document
// rules out (not a number, a number out of the bounds, a value outside the enum): the
// document claims nothing the server does not enforce. The document still validates
// (loadOpenAPI) and names one server, "/".
func TestOpenAPIQueryParamTypes(t *testing.T) {
	_, s := fullAPIServer(t)
	doc := loadOpenAPI(t, s)
	if len(doc.Servers) != 1 || doc.Servers[0].URL != "/" {
		t.Errorf("servers = %v, want one: /", doc.Servers)
	}
	none := -1 << 63 // no bound
	for _, c := range []struct {
		path, url, name, typ string
		min, max             int
		enum                 []string
		// loose: the handler reads the value (stream=true or not) without refusing others.
		loose bool
	}{
		{path: "/api/v1/conversations", url: "/api/v1/conversations", name: "limit", typ: "integer", min: 1, max: 100},
		{path: "/api/v1/conversations/{conversation_id}/messages", url: "/api/v1/conversations/c1/messages", name: "limit", typ: "integer", min: 1, max: 100},
		{path: "/api/v1/routers/models", url: "/api/v1/routers/models", name: "limit", typ: "integer", min: 1, max: 100},
		{path: "/api/v1/optimize/jobs", url: "/api/v1/optimize/jobs", name: "limit", typ: "integer", min: 1, max: 100},
		{path: "/api/v1/preferences", url: "/api/v1/preferences", name: "limit", typ: "integer", min: 1, max: 100},
		{path: "/v1/files", url: "/v1/files", name: "limit", typ: "integer", min: 1, max: 10000},
		{path: "/v1/files", url: "/v1/files", name: "order", typ: "string", min: none, max: none, enum: []string{"asc", "desc"}},
		{path: "/v1/files", url: "/v1/files", name: "purpose", typ: "string", min: none, max: none, enum: []string{"batch", "batch_output"}},
		{path: "/v1/batches", url: "/v1/batches", name: "limit", typ: "integer", min: 1, max: 100},
		{path: "/v1beta/models", url: "/v1beta/models", name: "pageSize", typ: "integer", min: 0, max: none},
		{path: "/customer/list", url: "/customer/list", name: "page", typ: "integer", min: 1, max: 1 << 30},
		{path: "/end_user/list", url: "/end_user/list", name: "page_size", typ: "integer", min: 1, max: 100},
		{path: "/key/list", url: "/key/list", name: "page", typ: "integer", min: 1, max: 1 << 30},
		{path: "/key/list", url: "/key/list", name: "size", typ: "integer", min: 1, max: 100},
		{path: "/key/list", url: "/key/list", name: "return_full_object", typ: "boolean", min: none, max: none},
		{path: "/key/list", url: "/key/list", name: "sort_order", typ: "string", min: none, max: none, enum: []string{"asc", "desc"}},
		{path: "/key/list", url: "/key/list", name: "sort_by", typ: "string", min: none, max: none, enum: []string{"created_at"}},
		{path: "/spend/logs", url: "/spend/logs", name: "summarize", typ: "boolean", min: none, max: none},
		{path: "/v1/responses/{response_id}", url: "/v1/responses/resp_missing", name: "starting_after", typ: "integer", min: 0, max: none},
		{path: "/v1/responses/{response_id}", url: "/v1/responses/resp_missing", name: "stream", typ: "boolean", min: none, max: none, loose: true},
		{path: "/v1/responses/{response_id}/input_items", url: "/v1/responses/resp_missing/input_items", name: "limit", typ: "integer", min: 1, max: 100},
		{path: "/v1/responses/{response_id}/input_items", url: "/v1/responses/resp_missing/input_items", name: "order", typ: "string", min: none, max: none, enum: []string{"asc", "desc"}},
		{path: "/v1/conversations/{conversation_id}/items", url: "/v1/conversations/conv_missing/items", name: "limit", typ: "integer", min: 1, max: 100},
		{path: "/api/v1/usage/requests", url: "/api/v1/usage/requests", name: "limit", typ: "integer", min: 1, max: 500},
		{path: "/api/v1/usage/requests", url: "/api/v1/usage/requests", name: "before", typ: "integer", min: 1, max: 1 << 62},
		{path: "/api/v1/usage/series", url: "/api/v1/usage/series", name: "by", typ: "string", min: none, max: none, enum: []string{"model", "tag"}},
		{path: "/api/v1/usage/spend", url: "/api/v1/usage/spend", name: "by", typ: "string", min: none, max: none, enum: []string{"tag", "model"}},
	} {
		what := fmt.Sprintf("GET %s ?%s", c.path, c.name)
		sc := queryParamSchema(doc, "GET", c.path, c.name)
		if sc == nil {
			t.Errorf("%s is not documented", what)
			continue
		}
		if !sc.Type.Is(c.typ) {
			t.Errorf("%s: type %v, want %s", what, sc.Type, c.typ)
		}
		if got := bound(sc.Min); got != c.min {
			t.Errorf("%s: minimum %d, want %d", what, got, c.min)
		}
		if got := bound(sc.Max); got != c.max {
			t.Errorf("%s: maximum %d, want %d", what, got, c.max)
		}
		var enum []string
		for _, v := range sc.Enum {
			enum = append(enum, fmt.Sprint(v))
		}
		slices.Sort(enum)
		want := slices.Sorted(slices.Values(c.enum))
		if !slices.Equal(enum, want) {
			t.Errorf("%s: enum %v, want %v", what, enum, want)
		}
		// What the document rules out, the handler refuses.
		var bad []string
		switch {
		case c.loose:
		case c.typ == "integer":
			bad = append(bad, "x", "1.5")
		case c.typ == "boolean":
			bad = append(bad, "maybe")
		case c.enum != nil:
			bad = append(bad, "sideways")
		}
		if c.min != none {
			bad = append(bad, fmt.Sprint(c.min-1))
		}
		if c.max != none && c.max < 1<<62 {
			bad = append(bad, fmt.Sprint(c.max+1))
		}
		for _, v := range bad {
			r := do(t, s, "GET", c.url+"?"+url.Values{c.name: {v}}.Encode(), testKey, "")
			if r.status != http.StatusBadRequest && r.status != http.StatusUnprocessableEntity {
				t.Errorf("%s=%s: %d, want 400 or 422 (the document rules it out): %.200s", what, v, r.status, r.raw)
			} else if !strings.Contains(r.raw, c.name) {
				t.Errorf("%s=%s: the refusal does not name %s: %.200s", what, v, c.name, r.raw)
			}
		}
	}
	// Every query parameter named as a page size or number anywhere is an integer.
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			for _, p := range op.Parameters {
				if p.Value.In != "query" || !slices.Contains([]string{"limit", "page", "page_size", "pageSize", "size", "before", "starting_after"}, p.Value.Name) {
					continue
				}
				if sc := p.Value.Schema.Value; !sc.Type.Is("integer") || sc.Min == nil {
					t.Errorf("%s %s ?%s: type %v, minimum %v: want an integer with its minimum", method, path, p.Value.Name, sc.Type, sc.Min)
				}
			}
		}
	}
}

// bound is a schema's minimum or maximum as an int, -1<<63 when it has none.
func bound(v *float64) int {
	if v == nil {
		return -1 << 63
	}
	return int(*v)
}
