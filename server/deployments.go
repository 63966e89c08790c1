package server

import (
	"context"
	"encoding/json"
	"net/http"
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
		rt.Summary = what + " of POST " + d.v1 + ": {" + d.wildcard + "} is the model (it replaces the body's model); the rest as there"
		rt.Query = append(slices.Clone(rt.Query), QueryParam{Name: "api-version",
			Description: "Azure OpenAI's API version, as its SDKs send it: accepted and ignored (any value, or none)"})
		rt.Headers = append(slices.Clone(rt.Headers), HeaderParam{Name: "api-key",
			Description: "the key, as Azure OpenAI's SDKs send it (in place of Authorization: Bearer)"})
		wildcard, h := d.wildcard, v1.h
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
