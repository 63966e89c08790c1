package server

import (
	"context"
	"net/http"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
)

// embeddingRoutes registers POST /v1/embeddings: OpenAI's embeddings API over the gateway's
// providers (OpenAI-format and Gemini), with the gateway's keys, budgets, retries, usage
// log and metrics; errors in OpenAI's envelope (validation 400, unknown model 404).
func (s *Server) embeddingRoutes(g *completions.Gateway) {
	s.handleGateway(Route{Method: "POST", Path: "/v1/embeddings", Summary: "OpenAI-compatible embeddings (model is provider/model, a bare name one configured provider catalogues, or a model group of deployments of one model)",
		Tags: []string{"Completions"}, Request: completions.EmbeddingsRequest{}, Response: completions.EmbeddingsResponse{}, ScopedKeys: true,
		Errors: openAIErrors},
		g, completions.OperationEmbeddings, operationHandler(s, func(req *completions.EmbeddingsRequest) (**completions.CacheControl, *[]string) {
			return &req.Cache, &req.Tags
		},
			g.Embed, func(w http.ResponseWriter, resp *completions.EmbeddingsResponse) error {
				setCacheHeaders(w, resp.Cache)
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusOK)
				return resp.WriteJSON(w)
			}))
}

// operationHandler is the handler of a gateway operation other than chat (embeddings,
// rerank): it decodes the body (unknown fields ignored), lets the Cache-Control and tags
// headers speak as on chat requests (applyRequestHeaders) through the request's cache and
// tags fields, calls the gateway and writes its answer; errors in OpenAI's envelope.
func operationHandler[Req, Resp any](s *Server, fields func(*Req) (cache **completions.CacheControl, tags *[]string),
	call func(context.Context, completions.Scope, *Req) (Resp, error), answer func(http.ResponseWriter, Resp) error) HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		received := time.Now()
		var req Req
		var body []byte
		keep := func(b []byte) ([]byte, error) { body = b; return b, nil }
		if err := decodeJSON(r, &req, decodeOptions{AllowUnknownFields: true, Rewrite: keep}); err != nil {
			return s.openAIError(w, r, err)
		}
		cache, tags := fields(&req)
		// LiteLLM's metadata.tags and litellm_metadata.tags, which these request types have
		// no field for, are tags as on chat requests.
		more, err := completions.BodyMetadataTags(body)
		if err == nil && len(more) > 0 {
			*tags = completions.AddTags(*tags, more...)
			err = completions.CheckTags("tags", *tags)
		}
		if err != nil {
			return s.openAIError(w, r, err)
		}
		cr := completions.Request{Cache: *cache, Tags: *tags}
		if err := applyRequestHeaders(r, &cr); err != nil {
			return s.openAIError(w, r, err)
		}
		*cache, *tags = cr.Cache, cr.Tags
		var user string // OpenAI's user, where the request has one
		switch e := any(&req).(type) {
		case *completions.EmbeddingsRequest:
			user = e.User
		case *completions.ImageGenerationRequest:
			user = e.User
		}
		scope, err := s.gatewayScope(withEndUserOf(r, user), received)
		if err != nil {
			return s.openAIError(w, r, err)
		}
		resp, err := call(r.Context(), scope, &req)
		if err != nil {
			return s.openAIError(w, r, err)
		}
		return answer(w, resp)
	}
}
