package server

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// errorProbe is one cheap way to make a route fail: the request's key ("" for none),
// body and content type, and the statuses the failure may have (nil: any 4xx).
type errorProbe struct {
	name, key, body, contentType string
	want                         []int
}

// errorProbes are the cheap failures of rt: no key (401) on a keyed route, a virtual key
// (403) on a route virtual keys may not call, a malformed body (400 or 422) on a route
// that takes one and an unknown id (a 4xx, mostly 404) on a route with path parameters.
func errorProbes(rt Route, virtualKey string) []errorProbe {
	var out []errorProbe
	if !rt.Public {
		out = append(out, errorProbe{name: "no key", want: []int{http.StatusUnauthorized}})
		if !rt.ScopedKeys && !rt.VirtualKeys {
			out = append(out, errorProbe{name: "virtual key", key: virtualKey, want: []int{http.StatusForbidden}})
		}
	}
	key := ""
	if !rt.Public {
		key = testKey
	}
	if rt.Request != nil {
		// A route that looks the path's id up first answers 404 for the unknown one.
		bad := []int{http.StatusBadRequest, http.StatusUnprocessableEntity}
		if pathParam.MatchString(rt.Path) {
			bad = append(bad, http.StatusNotFound)
		}
		switch rt.RequestContentType {
		case "", "application/json":
			out = append(out, errorProbe{name: "malformed JSON body", key: key, body: `{"oops"`, contentType: "application/json", want: bad})
		case "multipart/form-data":
			out = append(out, errorProbe{name: "multipart body without a boundary", key: key, body: "--x--", contentType: "multipart/form-data", want: bad})
		}
	}
	if pathParam.MatchString(rt.Path) && !isPassThroughPath(rt.Path) {
		// (A pass-through path names no id of the server's: the provider answers it, as
		// it is, in whatever body the provider has.)
		p := errorProbe{name: "unknown id", key: key}
		if rt.Request != nil && (rt.RequestContentType == "" || rt.RequestContentType == "application/json") {
			p.body, p.contentType = "{}", "application/json"
		}
		out = append(out, p)
	}
	return out
}

// errorProbeURL is rt's path with an id no test made in each path parameter; a POST to a
// model wildcard names a Gemini method, as the Gemini surface's clients do.
func errorProbeURL(rt Route) string {
	return pathParam.ReplaceAllStringFunc(rt.Path, func(m string) string {
		name := pathParam.FindStringSubmatch(m)[1]
		if name == "model" && rt.Method == http.MethodPost {
			return "no-such-model:generateContent"
		}
		return "no-such-" + strings.ReplaceAll(name, "_", "-")
	})
}

// TestOpenAPIErrorContract: every registered route (the route table of a server with every
// capability, not a list) is made to fail in each cheap way errorProbes knows, and the
// real answer's status is one the document lists for that operation (not only under
// default) and its body validates against the schema documented for that status — so a
// route answering in one surface's envelope (OpenAI's on the LiteLLM routes, Anthropic's
// on /v1/messages, Google's on the Gemini routes, the uniform body on /api/v1) while the
// document describes another fails here, naming the route. Public routes that read no
// body and no path parameter have no cheap failure and are the only ones left out.
func TestOpenAPIErrorContract(t *testing.T) {
	_, s := fullAPIServer(t)
	doc := loadOpenAPI(t, s)
	vk := issue(t, s, `{"name":"error-contract"}`).Key
	probed, skipped := 0, 0
	for i, rt := range s.Routes() {
		probes := errorProbes(rt, vk)
		if len(probes) == 0 {
			skipped++
			continue
		}
		template := pathParam.ReplaceAllString(rt.Path, "{$1}")
		item := doc.Paths.Find(template)
		if item == nil || item.GetOperation(rt.Method) == nil {
			t.Errorf("%s %s is not documented", rt.Method, rt.Path)
			continue
		}
		op := item.GetOperation(rt.Method)
		for j, p := range probes {
			var body io.Reader = http.NoBody
			if p.body != "" {
				body = strings.NewReader(p.body)
			}
			req := httptest.NewRequest(rt.Method, errorProbeURL(rt), body)
			// An address of its own per request: the failed-authentication limit is per address.
			req.RemoteAddr = fmt.Sprintf("10.%d.%d.%d:40000", i/250, i%250, j+1)
			if p.key != "" {
				req.Header.Set("Authorization", "Bearer "+p.key)
			}
			if p.contentType != "" {
				req.Header.Set("Content-Type", p.contentType)
			}
			rec := httptest.NewRecorder()
			s.ServeHTTP(rec, req)
			name := fmt.Sprintf("%s %s (%s)", rt.Method, rt.Path, p.name)
			status := rec.Code
			if status < 400 || status >= 500 || p.want != nil && !containsInt(p.want, status) {
				t.Errorf("%s: answered %d, want %v (any 4xx when empty): %.300s", name, status, p.want, rec.Body.String())
				continue
			}
			probed++
			if op.Responses.Status(status) == nil {
				t.Errorf("%s: answered %d, which the document does not list (it lists %v): %.300s", name, status, documentedStatuses(op), rec.Body.String())
				continue
			}
			reqForValidation := req.Clone(context.Background())
			reqForValidation.Body = io.NopCloser(bytes.NewReader(nil))
			if err := validateAnswer(doc, reqForValidation, template, status, rec.Header(), rec.Body.Bytes()); err != nil {
				t.Errorf("%s: the %d answer does not match the document: %v\n%.400s", name, status, err, rec.Body.String())
			}
		}
	}
	if probed < 250 || skipped > 10 {
		t.Errorf("%d failures probed and %d routes without a cheap failure: the probes no longer reach the routes", probed, skipped)
	}
}

func containsInt(list []int, v int) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// documentedStatuses lists the response keys of op.
func documentedStatuses(op *openapi3.Operation) []string {
	var out []string
	for k := range op.Responses.Map() {
		out = append(out, k)
	}
	return out
}
