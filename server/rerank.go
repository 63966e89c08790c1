package server

import (
	"net/http"

	"github.com/switchyard-ai/switchyard/completions"
)

// rerankRoutes registers POST /v1/rerank and its alias POST /v2/rerank: Cohere's rerank API
// (which LiteLLM's proxy serves too) over the gateway's providers with one (cohere, jina,
// voyage, a configured self-hosted reranker), with the gateway's keys, budgets, retries,
// response cache, usage log and metrics; errors in OpenAI's envelope, as on the other /v1
// routes (validation 400 naming the field, unknown model 404).
func (s *Server) rerankRoutes(g *completions.Gateway) {
	for _, path := range []string{"/v1/rerank", "/v2/rerank"} {
		s.handleGateway(Route{Method: "POST", Path: path, Summary: "Cohere-compatible rerank (model is provider/model, a bare name one configured provider catalogues, or a model group): documents ranked by relevance to the query, most relevant first",
			Tags: []string{"Completions"}, Request: completions.RerankRequest{}, Response: completions.RerankResponse{}, ScopedKeys: true, GatewayErrors: true,
			Errors: openAIErrors},
			g, completions.OperationRerank, operationHandler(s, func(req *completions.RerankRequest) (**completions.CacheControl, *[]string) {
				return &req.Cache, &req.Tags
			},
				g.Rerank, func(w http.ResponseWriter, resp *completions.RerankResponse) error {
					setCacheHeaders(w, resp.Cache)
					writeJSON(w, http.StatusOK, resp)
					return nil
				}))
	}
}
