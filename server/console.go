package server

import (
	"net/http"

	"github.com/switchyard-ai/switchyard/console"
)

// Console serves the web console (package console) at GET /console/: public static files
// (the page asks for an API key and calls the authenticated JSON API with it). GET
// /console redirects there.
func Console() Option {
	return func(s *Server) error {
		h, err := console.Handler("/console/")
		if err != nil {
			return err
		}
		tags := []string{"Console"}
		s.Handle(Route{Method: "GET", Path: "/console/", Summary: "The web console (static files; the page asks for an API key)", Public: true, Tags: tags},
			func(w http.ResponseWriter, r *http.Request) error {
				h.ServeHTTP(w, r)
				return nil
			})
		s.Handle(Route{Method: "GET", Path: "/console", Summary: "Redirects to /console/", Public: true, Tags: tags},
			func(w http.ResponseWriter, r *http.Request) error {
				http.Redirect(w, r, "/console/", http.StatusMovedPermanently)
				return nil
			})
		return nil
	}
}
