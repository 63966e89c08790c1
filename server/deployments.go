package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"
)

// Azure OpenAI's deployment routes and LiteLLM's engine routes: the OpenAI-compatible
// operations with the model in the path. Clients built on Azure's SDKs
// (AzureOpenAI(azure_endpoint=…, api_version=…, api_key=…) in Python, openai-go's azure
// package) call POST {endpoint}/openai/deployments/{deployment}/chat/completions?api-version=…
// with the key in an api-key header; LiteLLM's proxy answers them, and the older
// /engines/{model}/… form, as its /v1 routes with the path's model as the request's model.

// deploymentRoute is one route that serves the /v1 route v1 with the model in its path's
// wildcard.
type deploymentRoute struct {
	path, wildcard, v1 string
}

// deploymentRoutes are LiteLLM's Azure-compatible and engine routes, and the audio routes
// Azure's SDKs call under /openai/deployments/ (LiteLLM has none there; the gateway serves
// them alike).
var deploymentRoutes = []deploymentRoute{
	{"/openai/deployments/{deployment}/chat/completions", "deployment", "/v1/chat/completions"},
	{"/openai/deployments/{deployment}/completions", "deployment", "/v1/completions"},
	{"/openai/deployments/{deployment}/embeddings", "deployment", "/v1/embeddings"},
	{"/openai/deployments/{deployment}/images/generations", "deployment", "/v1/images/generations"},
	{"/openai/deployments/{deployment}/audio/speech", "deployment", "/v1/audio/speech"},
	{"/openai/deployments/{deployment}/audio/transcriptions", "deployment", "/v1/audio/transcriptions"},
	{"/openai/deployments/{deployment}/audio/translations", "deployment", "/v1/audio/translations"},
	{"/engines/{model}/chat/completions", "model", "/v1/chat/completions"},
	{"/engines/{model}/completions", "model", "/v1/completions"},
	{"/engines/{model}/embeddings", "model", "/v1/embeddings"},
}

// deploymentPath reports whether path is on the deployment or engine routes, which answer
// in OpenAI's envelope and take the key in api-key (or x-api-key) as the /v1 routes do.
func deploymentPath(path string) bool {
	return strings.HasPrefix(path, "/openai/deployments/") || strings.HasPrefix(path, "/engines/")
}

// passThroughOpenAIPattern is the /openai pass-through's mux pattern (passThroughEndpoints):
// what a deployment route's path with a '/' in its deployment matches in the mux.
const passThroughOpenAIPattern = "/openai/{path...}"

// deploymentAlias is r for the deployment or engine route its path names when the
// deployment (or engine model) in it contains '/' sent unescaped — Python's AzureOpenAI
// calls /openai/deployments/openai/gpt-4o/chat/completions for the model openai/gpt-4o, and
// LiteLLM's {model:path} routes take it — nil otherwise. A ServeMux wildcard takes one
// segment, so such a path matched only the pass-through (pattern, as the mux matched r) or
// nothing. A POST whose path ends in an operation of deploymentRoutes (the longest that
// fits: chat/completions before completions) is that route's with the rest as the
// deployment, escaped into one segment as an SDK escaping it sends it; any other method or
// ending stays with the pass-through. The alias is the deployment route in every respect:
// its key scopes, body limit, rate and errors; its handler reads the deployment whole
// (r.PathValue unescapes it).
func (s *Server) deploymentAlias(r *http.Request, pattern string) *http.Request {
	if r.Method != http.MethodPost || (pattern != "" && pattern != passThroughOpenAIPattern) {
		return nil
	}
	p := r.URL.Path
	if path.Clean(p) != p {
		return nil // dot segments or empty ones: the mux's redirect, or the pass-through's refusal
	}
	var best *deploymentRoute
	var name string
	for i, d := range deploymentRoutes {
		prefix, rest, _ := strings.Cut(d.path, "{")
		_, suffix, _ := strings.Cut(rest, "}")
		mid, ok := strings.CutPrefix(p, prefix)
		if !ok {
			continue
		}
		if mid, ok = strings.CutSuffix(mid, suffix); !ok || !strings.Contains(mid, "/") {
			continue
		}
		if best == nil || len(d.path) > len(best.path) {
			best, name = &deploymentRoutes[i], mid
		}
	}
	if best == nil {
		return nil
	}
	prefix, rest, _ := strings.Cut(best.path, "{")
	_, suffix, _ := strings.Cut(rest, "}")
	// As v1Alias does: a shallow copy of r with its own URL.
	r2 := new(http.Request)
	*r2 = *r
	r2.URL = new(url.URL)
	*r2.URL = *r.URL
	r2.URL.RawPath = prefix + url.PathEscape(name) + suffix
	if _, got := s.mux.Handler(r2); got != http.MethodPost+" "+best.path {
		return nil // the server does not serve that route (no such /v1 route)
	}
	return r2
}

// deploymentModelKey is the context key of the model a deployment route's path names.
type deploymentModelKey struct{}

// deploymentModel is the model r's deployment route named in its path, if r came by one.
func deploymentModel(r *http.Request) (string, bool) {
	m, ok := r.Context().Value(deploymentModelKey{}).(string)
	return m, ok
}

// registerDeploymentRoutes serves each deployment route as its /v1 route: the same handler,
// key scopes, body limit, rate and errors, with the path's model in place of the body's
// "model" (LiteLLM's proxy does the same: the path's model wins). A /v1 route the server
// does not have is skipped. Called once the /v1 routes are registered.
func (s *Server) registerDeploymentRoutes() {
	for _, d := range deploymentRoutes {
		v1, ok := s.direct["POST "+d.v1]
		if !ok {
			continue
		}
		i := slices.IndexFunc(s.routes, func(rt Route) bool { return rt.Method == http.MethodPost && rt.Path == d.v1 })
		if i < 0 {
			continue
		}
		rt := s.routes[i]
		rt.Path = d.path
		what := "Azure OpenAI's deployment form"
		if d.wildcard == "model" {
			what = "LiteLLM's engine form"
		}
		rt.Summary = what + " of POST " + d.v1 + ": {" + d.wildcard + "} is the model (it replaces the body's model; a provider/model may come with its '/' escaped as %2F or as it is); the rest as there"
		rt.Query = append(slices.Clone(rt.Query), QueryParam{Name: "api-version",
			Description: "Azure OpenAI's API version, as its SDKs send it: accepted and ignored (any value, or none)"})
		rt.Headers = append(slices.Clone(rt.Headers), HeaderParam{Name: "api-key",
			Description: "the key, as Azure OpenAI's SDKs send it (in place of Authorization: Bearer)"})
		wildcard, h := d.wildcard, v1.h
		if gr, ok := s.gateways["POST "+d.v1]; ok {
			// Refused before the handler (a rate, a body too large): recorded as the /v1
			// route's are, with the path's model.
			gr.asked = deploymentAskedModel(d.path)
			s.gateways[rt.muxPattern()] = gr
		}
		s.Handle(rt, func(w http.ResponseWriter, r *http.Request) error {
			model := r.PathValue(wildcard)
			if strings.TrimSpace(model) == "" {
				ae := Validation(http.StatusBadRequest, "%s: the path names no model", wildcard)
				ae.Param = "model"
				return ae
			}
			h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), deploymentModelKey{}, model)))
			return nil
		})
	}
}

// withDeploymentModel is the JSON body with its "model" set to model. A JSON null is read
// as an empty object (a body without a model, which the path's stands for); another body
// that is not a JSON object is returned as it is, for the handler's decoding to report.
func withDeploymentModel(body []byte, model string) []byte {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return body
	}
	if fields == nil {
		fields = map[string]json.RawMessage{}
	}
	m, err := json.Marshal(model)
	if err != nil {
		return body
	}
	fields["model"] = m
	out, err := json.Marshal(fields)
	if err != nil {
		return body
	}
	return out
}
