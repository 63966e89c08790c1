package server

import (
	"net/http"

	"github.com/switchyard-ai/switchyard/completions"
)

// imageRoutes registers POST /v1/images/generations: OpenAI's image generation over the
// gateway's OpenAI-format providers (Azure OpenAI deployments too), with the gateway's
// keys, model limits, retries, prices, usage log and metrics; errors in OpenAI's envelope
// (validation 400 naming the field, unknown model 404).
func (s *Server) imageRoutes(g *completions.Gateway) {
	s.handleGateway(Route{Method: "POST", Path: "/v1/images/generations", Summary: "OpenAI-compatible image generation (model is provider/model or a bare OpenAI image model or a model group; dall-e-2 when absent)",
		Tags: []string{"Completions"}, Request: completions.ImageGenerationRequest{}, Response: completions.ImageGenerationResponse{}, ScopedKeys: true,
		Errors: openAIErrors},
		g, completions.OperationImageGeneration, operationHandler(s, func(req *completions.ImageGenerationRequest) (**completions.CacheControl, *[]string) {
			var uncached *completions.CacheControl // images are not cached: each call draws anew
			return &uncached, &req.Tags
		},
			g.GenerateImages, func(w http.ResponseWriter, resp *completions.ImageGenerationResponse) error {
				writeJSON(w, http.StatusOK, resp)
				return nil
			}))
}
