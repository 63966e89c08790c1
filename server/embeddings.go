package server

import (
	"net/http"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
)

// embeddingRoutes registers POST /v1/embeddings: OpenAI's embeddings API over the gateway's
// providers (OpenAI-format and Gemini), with the gateway's keys, budgets, retries, usage
// log and metrics; errors in OpenAI's envelope (validation 400, unknown model 404).
func (s *Server) embeddingRoutes(g *completions.Gateway) {
	s.Handle(Route{Method: "POST", Path: "/v1/embeddings", Summary: "OpenAI-compatible embeddings (model is provider/model, a bare name one configured provider catalogues, or a model group of deployments of one model)",
		Tags: []string{"Completions"}, Request: completions.EmbeddingsRequest{}, Response: completions.EmbeddingsResponse{}, ScopedKeys: true,
		Errors: openAIErrors},
		func(w http.ResponseWriter, r *http.Request) error {
			received := time.Now()
			var req completions.EmbeddingsRequest
			if err := decodeJSON(r, &req, decodeOptions{AllowUnknownFields: true}); err != nil {
				return s.openAIError(w, r, err)
			}
			// The Cache-Control and tags headers speak as on chat requests (applyRequestHeaders).
			cr := completions.Request{Cache: req.Cache, Tags: req.Tags}
			if err := applyRequestHeaders(r, &cr); err != nil {
				return s.openAIError(w, r, err)
			}
			req.Cache, req.Tags = cr.Cache, cr.Tags
			resp, err := g.Embed(r.Context(), completionsScope(r, received), &req)
			if err != nil {
				return s.openAIError(w, r, err)
			}
			setCacheHeaders(w, resp.Cache)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			return resp.WriteJSON(w)
		})
}
