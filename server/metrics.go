package server

import (
	"errors"
	"net/http"
)

// MetricsEndpoint serves h (telemetry.Metrics.Handler: the Prometheus text format, with
// its own optional bearer token) at GET /metrics on the server's listener. It is outside
// the authenticated API: API keys are not checked there. To serve metrics on another
// listener instead, mount h there and leave this option out.
func MetricsEndpoint(h http.Handler) Option {
	return func(s *Server) error {
		if h == nil {
			return errors.New("server: MetricsEndpoint needs a handler")
		}
		s.Handle(Route{Method: "GET", Path: "/metrics", Summary: "Prometheus metrics (its own optional bearer token; not an API key)",
			Public: true, Tags: []string{"Operations"}},
			func(w http.ResponseWriter, r *http.Request) error {
				h.ServeHTTP(w, r)
				return nil
			})
		return nil
	}
}
