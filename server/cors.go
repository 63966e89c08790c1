package server

import (
	"net/http"
	"strings"
)

// corsMaxAge is how long, in seconds, a browser may cache a preflight answer.
const corsMaxAge = "600"

// withCORS answers cross-origin requests from the allow-listed origins (Config.CORSOrigins;
// "*" allows any). A preflight (OPTIONS with Access-Control-Request-Method) from an allowed
// origin is answered 204 without a key, allowing the requested headers (Authorization,
// Content-Type, the x-stainless-* headers of OpenAI's SDKs, ...); other requests from it get
// Access-Control-Allow-Origin and may read X-Request-Id (and x-litellm-call-id), X-Should-Retry and Retry-After.
// Requests from other origins get no CORS headers, so browsers refuse them. Credentials
// (cookies) are never allowed: the API is keyed by the Authorization header.
func withCORS(origins []string, next http.Handler) http.Handler {
	if len(origins) == 0 {
		return next
	}
	allowed := map[string]bool{}
	for _, o := range origins {
		if o = strings.TrimRight(strings.TrimSpace(o), "/"); o != "" {
			allowed[o] = true
		}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin == "" || !(allowed[origin] || allowed["*"]) {
			if origin != "" {
				w.Header().Add("Vary", "Origin")
			}
			next.ServeHTTP(w, r)
			return
		}
		h := w.Header()
		h.Add("Vary", "Origin")
		h.Set("Access-Control-Allow-Origin", origin)
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			h.Add("Vary", "Access-Control-Request-Method")
			h.Add("Vary", "Access-Control-Request-Headers")
			h.Set("Access-Control-Allow-Methods", "GET, POST, PATCH, DELETE, OPTIONS")
			allowHeaders := "Authorization, Content-Type, X-Request-Id, X-Api-Key, Api-Key, Anthropic-Version, Anthropic-Beta, X-Goog-Api-Key, X-Goog-Api-Client"
			if req := r.Header.Get("Access-Control-Request-Headers"); req != "" {
				allowHeaders = req
			}
			h.Set("Access-Control-Allow-Headers", allowHeaders)
			h.Set("Access-Control-Max-Age", corsMaxAge)
			w.WriteHeader(http.StatusNoContent)
			return
		}
		h.Set("Access-Control-Expose-Headers", "X-Request-Id, X-Litellm-Call-Id, "+liteLLMExposedHeaderValues+", X-Should-Retry, Retry-After")
		next.ServeHTTP(w, r)
	})
}
