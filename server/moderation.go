package server

import (
	"net/http"

	"github.com/switchyard-ai/switchyard/completions"
)

// moderationRoutes registers POST /v1/moderations: OpenAI's moderations API over the
// gateway's OpenAI-format providers, with the gateway's keys, model limits, retries, usage
// log and metrics, at no cost (OpenAI's is free); errors in OpenAI's envelope (validation
// 400 naming the field, unknown model 404).
func (s *Server) moderationRoutes(g *completions.Gateway) {
	s.handleGateway(Route{Method: "POST", Path: "/v1/moderations", Summary: "OpenAI-compatible moderation (model is provider/model, a bare OpenAI moderation model, omni-moderation-latest when absent, or a model group)",
		Tags: []string{"Completions"}, Request: completions.ModerationRequest{}, Response: completions.ModerationResponse{}, ScopedKeys: true,
		Errors: openAIErrors},
		g, completions.OperationModeration, operationHandler(s, func(req *completions.ModerationRequest) (**completions.CacheControl, *[]string) {
			var uncached *completions.CacheControl // moderation answers are not cached
			return &uncached, &req.Tags
		},
			g.Moderate, func(w http.ResponseWriter, resp *completions.ModerationResponse) error {
				writeJSON(w, http.StatusOK, resp)
				return nil
			}))
}
