package server

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/switchyard-ai/switchyard/sandbox"
)

// openAPIDoc is the server's OpenAPI document, decoded.
func openAPIDoc(t *testing.T, h http.Handler) map[string]any {
	t.Helper()
	r := do(t, h, "GET", "/api/v1/openapi.json", "", "")
	var doc map[string]any
	if err := json.Unmarshal([]byte(r.raw), &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// at walks doc along keys ("properties", "items", … as given); nil when a key is missing.
func at(doc any, keys ...string) any {
	for _, k := range keys {
		m, ok := doc.(map[string]any)
		if !ok {
			return nil
		}
		doc = m[k]
	}
	return doc
}

// nullable reports whether schema admits null: by its type, or by one of its oneOf/anyOf.
func nullable(schema any) bool {
	if slices.Contains(strs(at(schema, "type")), "null") {
		return true
	}
	for _, k := range []string{"oneOf", "anyOf"} {
		alts, _ := at(schema, k).([]any)
		for _, a := range alts {
			if slices.Contains(strs(at(a, "type")), "null") {
				return true
			}
		}
	}
	return false
}

func strs(v any) []string {
	var out []string
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
	case string:
		out = append(out, x)
	}
	return out
}

// TestOpenAPIDocumentsTheSpecsFields: the OpenAPI document says what the spec says of the
// fields — completions' stream defaults to false, responseMessageId is a UUID, the
// message's role and type have one value each, the job and model states are enums, the
// training timestamps are ISO 8601 date-times, a result's test_score may be null — and
// lists the statuses the spec's status and results operations answer besides 200.
func TestOpenAPIDocumentsTheSpecsFields(t *testing.T) {
	_, cs, _ := completionsServer(t)
	doc := openAPIDoc(t, cs)
	post := at(doc, "paths", "/api/v1/completions", "post")
	body := at(post, "requestBody", "content", "application/json", "schema", "properties")
	if d := at(body, "stream", "default"); d != false {
		t.Errorf("completions: stream default %v, want false", d)
	}
	answer := at(post, "responses", "200", "content", "application/json", "schema", "properties")
	if f := at(answer, "responseMessageId", "format"); f != "uuid" {
		t.Errorf("completions: responseMessageId format %v, want uuid", f)
	}
	if e := strs(at(answer, "message", "properties", "role", "enum")); !slices.Equal(e, []string{"assistant"}) {
		t.Errorf("completions: message.role enum %v", e)
	}
	if e := strs(at(answer, "message", "properties", "type", "enum")); !slices.Equal(e, []string{"text"}) {
		t.Errorf("completions: message.type enum %v", e)
	}

	rt := routersServer(t)
	doc = openAPIDoc(t, rt.h)
	status := at(doc, "paths", "/api/v1/routers/train/status", "get")
	props := at(status, "responses", "200", "content", "application/json", "schema", "properties")
	if e := strs(at(props, "status", "enum")); !slices.Equal(e, []string{"queued", "running", "completed", "failed"}) {
		t.Errorf("training status: status enum %v", e)
	}
	for _, f := range []string{"created_at", "started_at", "completed_at"} {
		if got := at(props, f, "format"); got != "date-time" {
			t.Errorf("training status: %s format %v, want date-time", f, got)
		}
	}
	wantStatusesDocumented(t, doc, map[string][]string{
		"/api/v1/routers/train/status": {"404", "422"},
		"/api/v1/routers/models":       {"404", "422"},
		"/api/v1/routers/train/cancel": {"404", "409"},
	})

	e := optimizeServer(t, fakeAgentRunner{block: func(sandbox.Job) bool { return true }})
	doc = openAPIDoc(t, e.s)
	props = at(doc, "paths", "/api/v1/optimize/status", "get", "responses", "200", "content", "application/json", "schema", "properties")
	if e := strs(at(props, "status", "enum")); !slices.Equal(e, []string{"queued", "running", "completed", "interrupted", "failed"}) {
		t.Errorf("optimization status: status enum %v", e)
	}
	result := at(doc, "paths", "/api/v1/optimize/results", "get", "responses", "200", "content", "application/json", "schema", "properties", "results", "items", "properties")
	if !nullable(at(result, "test_score")) {
		t.Errorf("optimization result: test_score %v, want it nullable (an interrupted job's)", at(result, "test_score"))
	}
	wantStatusesDocumented(t, doc, map[string][]string{
		"/api/v1/optimize/status":  {"404", "422"},
		"/api/v1/optimize/results": {"404", "409", "422"},
		"/api/v1/optimize/cancel":  {"404", "409"},
	})
}

// wantStatusesDocumented fails t for each status of codes[path] that doc's GET or POST
// operation of path does not list.
func wantStatusesDocumented(t *testing.T, doc map[string]any, codes map[string][]string) {
	t.Helper()
	for path, want := range codes {
		for _, op := range []string{"get", "post"} {
			o := at(doc, "paths", path, op)
			if o == nil {
				continue
			}
			for _, c := range want {
				if at(o, "responses", c) == nil {
					t.Errorf("%s %s documents no %s", op, path, c)
				}
			}
		}
	}
}
