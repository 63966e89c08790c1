package server

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
)

// TestOpenAPIContract: real requests through a server with every capability (the gateway
// over the scripted upstream) answer what the OpenAPI document says — a documented status,
// a documented content type, and a body that validates against that status's schema
// (kin-openapi's openapi3filter, JSON Schema 2020-12 as OpenAPI 3.1 uses) — for model
// selection, a chat completion, the model list, virtual keys, an unknown training job's
// status (an error body) and LiteLLM's /key/generate.
func TestOpenAPIContract(t *testing.T) {
	hs, s := fullAPIServer(t)
	doc := loadOpenAPI(t, s)
	checkContract(t, hs, doc, []contractCase{
		{"POST", "/api/v1/model-select", "/api/v1/model-select", `{"messages":[{"role":"user","content":"hi"}],"llm_providers":[{"provider":"openai","model":"ok"},{"provider":"openai","model":"ok2"}]}`, 200},
		{"POST", "/v1/chat/completions", "/v1/chat/completions", `{"model":"openai/ok","messages":[{"role":"user","content":"hi"}]}`, 200},
		{"GET", "/v1/models", "/v1/models", "", 200},
		{"POST", "/api/v1/keys", "/api/v1/keys", `{"name":"contract","max_budget_usd":5}`, 201},
		{"GET", "/api/v1/keys", "/api/v1/keys", "", 200},
		{"GET", "/api/v1/routers/train/status", "/api/v1/routers/train/status?task_id=00000000-0000-0000-0000-000000000000", "", 404},
		{"POST", "/key/generate", "/key/generate", `{"key_alias":"contract-litellm","max_budget":1}`, 200},
	})
}

// contractCase is a request (as testKey, to url of the route template) whose answer must
// have status and validate against the OpenAPI document.
type contractCase struct {
	method, template, url, body string
	status                      int
}

// checkContract sends the cases in order to hs and checks each answer's status and that it
// validates against doc (validateAnswer).
func checkContract(t *testing.T, hs *httptest.Server, doc *openapi3.T, cases []contractCase) {
	t.Helper()
	for _, c := range cases {
		req, err := http.NewRequest(c.method, hs.URL+c.url, strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+testKey)
		if c.body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("%s %s: %d, want %d: %.300s", c.method, c.url, resp.StatusCode, c.status, body)
			continue
		}
		if err := validateAnswer(doc, req, c.template, resp.StatusCode, resp.Header, body); err != nil {
			t.Errorf("%s %s: the %d answer does not match the document: %v\n%.400s", c.method, c.url, resp.StatusCode, err, body)
		}
	}
}

// validateAnswer checks an answer (status, header, body) to req, a request of the route
// template, against doc: a status the operation lists, its content type and a body that
// validates against that status's schema (kin-openapi's openapi3filter).
func validateAnswer(doc *openapi3.T, req *http.Request, template string, status int, header http.Header, body []byte) error {
	item := doc.Paths.Find(template)
	if item == nil || item.GetOperation(req.Method) == nil {
		return fmt.Errorf("%s %s is not documented", req.Method, template)
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req,
			Route: &routers.Route{Spec: doc, Path: template, PathItem: item, Method: req.Method, Operation: item.GetOperation(req.Method)}},
		Status:  status,
		Header:  header,
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	in.SetBodyBytes(body)
	return openapi3filter.ValidateResponse(context.Background(), in)
}
