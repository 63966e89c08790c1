package server

import (
	"net/http"
	"net/url"
	"strings"
)

// The models requests name outside their bodies (gatewayRoute.asked), for a refusal before
// the route's handler runs (a request rate, a body too large) to be recorded with the model
// asked as its handler's refusals are. Each reads only the request's line and headers, and
// what authentication already put in its context: never the body.

// realtimeAskedModel is the model a realtime session (GET /v1/realtime) asks for: its
// ?model=, else Azure's ?deployment=, else its client secret's — as handleRealtime reads it.
func realtimeAskedModel(r *http.Request) string {
	q := r.URL.Query()
	if m := q.Get("model"); m != "" {
		return m
	}
	if m := q.Get("deployment"); m != "" {
		return m
	}
	if secret := realtimeSecretOf(r); secret != nil {
		return secret.Model
	}
	return ""
}

// realtimeCallAskedModel is the model a realtime call (POST /v1/realtime/calls) asks for
// outside its body: its client secret's, which binds the call, else its ?model= (the
// form's session.model is in the body and not read).
func realtimeCallAskedModel(r *http.Request) string {
	if secret := realtimeSecretOf(r); secret != nil {
		return secret.Model
	}
	return r.URL.Query().Get("model")
}

// geminiAskedModel reads the model of a Gemini API route under prefix
// ("/v1beta/models/"): the {model} of {model}:{method}, "" for a path without a method
// (which the handler refuses as no route).
func geminiAskedModel(prefix string) func(*http.Request) string {
	return func(r *http.Request) string {
		rest, ok := strings.CutPrefix(r.URL.Path, prefix)
		cut := strings.LastIndexByte(rest, ':')
		if !ok || cut < 0 {
			return ""
		}
		return strings.TrimPrefix(rest[:cut], "models/")
	}
}

// deploymentAskedModel reads the model of a deployment or engine route of path pattern
// ("/openai/deployments/{deployment}/chat/completions"): its one wildcard segment,
// unescaped as r.PathValue would (a deploymentAlias request carries a '/' in it escaped).
func deploymentAskedModel(pattern string) func(*http.Request) string {
	prefix, rest, _ := strings.Cut(pattern, "{")
	_, suffix, _ := strings.Cut(rest, "}")
	return func(r *http.Request) string {
		mid, ok := strings.CutPrefix(r.URL.EscapedPath(), prefix)
		if !ok {
			return ""
		}
		if mid, ok = strings.CutSuffix(mid, suffix); !ok {
			return ""
		}
		m, err := url.PathUnescape(mid)
		if err != nil {
			return ""
		}
		return m
	}
}
