package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/google/uuid"
	"log/slog"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
)

// Completions plugs the chat-completions gateway (package completions) into the server:
//
//   - POST /api/v1/completions — the spec's completions request; a JSON response, or with
//     "stream": true server-sent events in the framing documented on completions.WriteStream
//     (one data event per fragment, a "final": true text event with the full response, then
//     data: [DONE]; a failure after the first fragment ends with "event: error" and no [DONE]).
//   - GET /api/v1/conversations (newest first; limit, cursor, created_after,
//     created_before), GET and DELETE /api/v1/conversations/{conversation_id} and GET
//     /api/v1/conversations/{conversation_id}/messages (oldest first; limit, cursor) — the
//     key's conversations; a delete removes the messages in the same transaction.
//   - POST /v1/chat/completions — the OpenAI-compatible surface on the same gateway, keys and
//     fallbacks; errors use OpenAI's {"error": {"message", "type", "code"}} envelope. With n
//     above 1, n answers at once (Gateway.CompleteN, or Gateway.StreamN when streamed), a
//     choice each.
//   - POST /v1/embeddings — OpenAI's embeddings API over the providers that have one
//     (Gateway.Embed), same keys and envelope.
//   - POST /v1/rerank (alias /v2/rerank) — Cohere's rerank API over the providers that have
//     one (Gateway.Rerank), same keys and envelope (rerank.go).
//   - POST /v1/moderations — OpenAI's moderations API over the OpenAI-format providers
//     (Gateway.Moderate), same keys and envelope, at no cost (moderation.go).
//   - POST /v1/audio/transcriptions, /v1/audio/translations and /v1/audio/speech —
//     OpenAI's audio API over the OpenAI-format providers (Gateway.Transcribe and
//     Gateway.Speak), same keys and envelope (audio.go).
//   - POST /openai/deployments/{deployment}/… (chat/completions, completions, embeddings,
//     images/generations, audio/…) and /engines/{model}/… — Azure OpenAI's and LiteLLM's
//     forms of those /v1 routes, the path's model in place of the body's (deployments.go).
//   - POST /utils/token_counter — LiteLLM's local token count (tokencounter.go).
//   - POST /spend/calculate — LiteLLM's cost calculator (spendcalculate.go).
//   - POST/GET /api/v1/keys, GET/PATCH/DELETE /api/v1/keys/{key_id}, GET /api/v1/keys/self
//     — virtual keys (keys.go): keys the caller issues, held to models and a budget kept in
//     the store, which act for it on these routes and model selection only.
//
// Statuses: validation 422, conversation of another key or unknown 404, model outside a
// scoped key's allow-list 403, scoped key's budget used up 429, every model failing 502 with
// the attempts, a provider's content filter refusing the request 400 with error "Content
// Filtered" and the attempts (the fallback models are not asked: a policy decision is not
// overridden). On /v1/chat/completions the same failures use OpenAI's envelope and
// statuses (validation 400, every model unknown 404 model_not_found) and a content filter is
// a 200 answer whose finish_reason is "content_filter". A temporary key whose Principal.Scope is a *completions.Budget or a
// completions.Scope is held to that budget.
func Completions(g *completions.Gateway) Option {
	return func(s *Server) error {
		if g == nil {
			return errors.New("server: Completions needs a *completions.Gateway")
		}
		// Close commits conversation turns still queued (completions.WriteBehind).
		s.OnClose(g.Close)
		s.tokensLeft = g.TokensLeft // the x-ratelimit-*-tokens headers
		if err := s.setUpProxyBudget(); err != nil {
			return err
		}
		// Job keys minted by another process on the same store (a replica that runs the job),
		// and virtual keys (issued by any process).
		s.Auth().SetScopeResolver(keyScopes(s.cfg.Store))
		s.handleGateway(Route{Method: "POST", Path: "/api/v1/completions", Summary: "Generate (or stream) an assistant message across models with fallbacks",
			Tags: []string{"Completions"}, Request: completions.Request{}, Response: completions.Answer{}, Stream: true, ScopedKeys: true,
			Errors: map[int]string{
				400: "a provider's content filter refused the request (error content_filtered; the attempts are in the body), or a guardrail did (error Guardrail Violation, naming it in guardrail)",
				404: "conversationId names no conversation of this key",
				422: "validation error (error Validation Error): the message names the field",
				429: "the key's budget is spent",
				502: "every model failed (the attempts are in the body)",
			}},
			g, "", func(w http.ResponseWriter, r *http.Request) error { return s.handleCompletions(g, w, r) })
		s.handleGateway(Route{Method: "POST", Path: "/v1/chat/completions", Summary: "OpenAI-compatible chat completions (model is provider/model)",
			Tags: []string{"Completions"}, Request: completions.OpenAIChatRequest{}, Response: completions.OpenAIChatCompletion{}, Stream: true, ScopedKeys: true,
			Errors: openAIErrors},
			g, "", func(w http.ResponseWriter, r *http.Request) error { return s.handleOpenAIChat(g, w, r) })
		s.handleGateway(Route{Method: "POST", Path: "/v1/completions", Summary: "OpenAI's legacy text completions (autocomplete tools): the prompt is one user message of a chat request over the same gateway",
			Tags: []string{"Completions"}, Request: completions.OpenAITextCompletionRequest{}, Response: completions.OpenAITextCompletion{}, Stream: true, ScopedKeys: true,
			Errors: openAIErrors},
			g, "", func(w http.ResponseWriter, r *http.Request) error { return s.handleTextCompletions(g, w, r) })
		s.handleGateway(Route{Method: "POST", Path: "/v1/responses", Summary: "OpenAI Responses API (the chat subset: input, instructions, function tools, text.format, streaming) over the same gateway",
			Tags: []string{"Completions"}, Request: completions.ResponsesRequest{}, Response: completions.ResponseObject{}, Stream: true, ScopedKeys: true,
			Errors: openAIErrors},
			g, "", func(w http.ResponseWriter, r *http.Request) error { return s.handleResponses(g, w, r) })
		s.handleGateway(Route{Method: "POST", Path: "/v1/messages", Summary: "Anthropic Messages API over the same gateway (Anthropic's SDKs and Claude Code reach any configured model; key in x-api-key or Authorization)",
			Tags: []string{"Completions"}, Request: completions.AnthropicMessagesRequest{}, Response: completions.AnthropicResponse{}, Stream: true, ScopedKeys: true,
			Errors: anthropicErrors},
			g, "", func(w http.ResponseWriter, r *http.Request) error { return s.handleMessages(g, w, r) })
		s.Handle(Route{Method: "POST", Path: "/v1/messages/count_tokens", Summary: "Anthropic's token count of a Messages request, estimated locally for its model (OpenAI's tokenizer for OpenAI models)",
			Tags: []string{"Completions"}, Request: completions.AnthropicMessagesRequest{}, Response: anthropicTokenCount{}, ScopedKeys: true,
			Errors: map[int]string{400: anthropicErrors[400], 401: anthropicErrors[401], 404: anthropicErrors[404]}},
			withKeyAliases(func(w http.ResponseWriter, r *http.Request) error { return s.handleCountTokens(g, w, r) }))
		s.Handle(Route{Method: "GET", Path: "/v1/models", Summary: "OpenAI-compatible list of the models this server can route to",
			Tags: []string{"Completions"}, Response: openAIModelList{}, ScopedKeys: true},
			func(w http.ResponseWriter, r *http.Request) error {
				list := openAIModelList{Object: "list", Data: []openAIModel{}}
				scope := completionsScope(r, time.Time{}) // a scoped key sees what it may call
				for _, m := range g.ListedModels() {
					if g.Allows(scope, m) {
						list.Data = append(list.Data, newOpenAIModel(m))
					}
				}
				writeJSON(w, http.StatusOK, list)
				return nil
			})
		s.Handle(Route{Method: "GET", Path: "/v1/models/{model...}", Summary: "One model this server can route to (model is provider/model or a bare name that one configured provider catalogues)",
			Tags: []string{"Completions"}, Response: openAIModel{}, ScopedKeys: true, Errors: map[int]string{404: "no configured provider serves the model or the key may not call it (model_not_found)"}},
			func(w http.ResponseWriter, r *http.Request) error {
				id, ok := g.ResolveModel(r.PathValue("model")) // a bare name as chat takes it
				if !ok {
					if eid, eok := g.ResolveEmbeddingModel(r.PathValue("model")); eok && slices.Contains(g.EmbeddingModels(), eid) {
						id, ok = eid, true
					} else if rid, rok := g.ResolveRerankModel(r.PathValue("model")); rok && g.HasRerankModel(rid) {
						id, ok = rid, true
					}
				}
				if ok && !g.Serves(r.PathValue("model")) {
					ok = false // a LiteLLM config's: what it does not list is not served
				}
				if ok && !g.Allows(completionsScope(r, time.Time{}), id) {
					ok = false // a scoped key sees only what it may call, as in the list
				}
				if !ok {
					// As OpenAI answers: the path's model is the param.
					code, param := "model_not_found", "model"
					writeOpenAIErrorBody(w, http.StatusNotFound, completions.OpenAIErrorObject{
						Message: fmt.Sprintf("The model %q does not exist or no configured provider serves it.", id),
						Type:    "invalid_request_error", Param: &param, Code: &code})
					return nil
				}
				writeJSON(w, http.StatusOK, newOpenAIModel(id))
				return nil
			})
		s.embeddingRoutes(g)
		s.rerankRoutes(g)
		s.moderationRoutes(g)
		s.imageRoutes(g)
		s.imageEditRoute(g)
		s.audioRoutes(g)
		s.realtimeRoutes(g)
		s.realtimeSecretRoutes(g)
		s.realtimeTranscriptionRoutes(g)
		s.realtimeCallRoutes(g)
		s.conversationRoutes(g)
		s.keyRoutes(g)
		s.litellmRoutes(g)
		s.teamRoutes(g)
		s.litellmTeamRoutes(g)
		s.litellmTeamMemberRoutes()
		s.litellmOrganizationRoutes(g)
		s.litellmUserRoutes(g)
		s.userRoutes(g)
		s.endUserRoutes(g)
		s.litellmCustomerRoutes(g)
		s.litellmBudgetRoutes(g)
		s.litellmTagRoutes()
		s.litellmModelRoutes(g)
		s.guardrailRoutes(g)
		s.geminiRoutes(g)
		s.cacheRoutes(g)
		s.responseRoutes(g)
		s.openAIConversationRoutes(g)
		s.passThroughEndpoints(g)
		s.tokenCounterRoute(g)
		s.spendCalculateRoute(g)
		s.registerDeploymentRoutes() // after the /v1 routes they serve
		s.AddErrorMapper(completionsError)
		return nil
	}
}

// anthropicErrors are the failures /v1/messages answers, in Anthropic's envelope
// {"type": "error", "error": {"type", "message"}}.
var anthropicErrors = map[int]string{
	400: "invalid_request_error: the message names the field",
	401: "authentication_error: the key may not call the model (LiteLLM's 401 key_model_access_denied)",
	404: "not_found_error: no configured provider serves the model",
	429: "rate_limit_error: the key's budget or rate is spent or every upstream was rate limited",
	502: "api_error: every model failed",
	529: "overloaded_error: every upstream was overloaded",
}

// openAIErrors are the failures the OpenAI-compatible completion routes answer, in
// OpenAI's envelope.
var openAIErrors = map[int]string{
	400: "validation error naming the field (param)",
	401: "key_model_access_denied (LiteLLM's): the key may not call the model",
	404: "no configured provider serves the model (model_not_found)",
	429: "the key's budget or rate is spent (rate_limit_exceeded when it clears with time)",
	502: "every model failed",
}

// openAIModelList is OpenAI's model list.
type openAIModelList struct {
	Object string        `json:"object"`
	Data   []openAIModel `json:"data"`
}

// openAIModel is OpenAI's model object; id is "provider/model", owned_by the provider.
type openAIModel struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

// modelsCreated is the "created" time reported for every model: the catalogue does not
// record release dates, and OpenAI's SDKs only read the field as a number.
var modelsCreated = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).Unix()

func newOpenAIModel(id string) openAIModel {
	owner, _, found := strings.Cut(id, "/")
	if !found { // a model group
		owner = "switchyard"
	}
	return openAIModel{ID: id, Object: "model", Created: modelsCreated, OwnedBy: owner}
}

// gatewayRoute is the gateway and operation of a gateway route (handleGateway).
type gatewayRoute struct {
	g  *completions.Gateway
	op string
	// asked is the model a request of the route names outside its body (its path, its
	// query, its client secret), "" when it names none there; nil on a route whose
	// requests name their model in the body alone. A refusal before the handler records
	// it (refuseBeforeHandler) without reading the body.
	asked func(*http.Request) string
}

// handleGateway registers rt, a route of gateway g for operation op ("" for chat,
// completions.OperationEmbeddings, …), with handler h: h's refusals are recorded
// (recordRefusals), and so are the server's before h runs (refuseBeforeHandler).
func (s *Server) handleGateway(rt Route, g *completions.Gateway, op string, h HandlerFunc) {
	s.handleGatewayAsking(rt, g, op, nil, h)
}

// handleGatewayAsking is handleGateway for a route whose requests may name their model
// outside the body: asked reads it (see gatewayRoute.asked), for the server's refusals
// before h runs to be recorded with it.
func (s *Server) handleGatewayAsking(rt Route, g *completions.Gateway, op string, asked func(*http.Request) string, h HandlerFunc) {
	s.gateways[rt.muxPattern()] = gatewayRoute{g: g, op: op, asked: asked}
	s.Handle(rt, recordRefusals(g, op, asked, withKeyAliases(h)))
}

// refuseBeforeHandler answers r, an authenticated request for the route of pattern, with
// ae, a refusal of the server's before the route's handler runs (a request rate's 429, a
// body too large's 413). On a gateway route (handleGateway) the request is recorded
// through the gateway's Observer as the handler's own refusals are (recordRefusals), so
// that the usage history and /spend/logs hold it under its request id, with the key, team
// and user of its caller, and with the model it asked for where the request names it
// outside its body (gatewayRoute.asked: a realtime session's ?model=, a Gemini or Azure
// deployment route's path) — the body is not read for it.
func (s *Server) refuseBeforeHandler(w http.ResponseWriter, r *http.Request, pattern string, ae *APIError) {
	s.respondError(w, r, ae, nil)
	if gr, ok := s.gateways[pattern]; ok {
		asked := ""
		if gr.asked != nil {
			asked = gr.asked(r)
		}
		gr.g.ObserveRefusedAsking(r.Context(), completionsScope(r, time.Now()), gr.op, false, asked, ae)
	}
}

// recordRefusals wraps h, the handler of a route of gateway g for operation op ("" for
// chat, completions.OperationEmbeddings, …): a request it answers with an error the gateway
// did not record (a body that does not decode, a field refused before any model was tried,
// a model the key may not call, the closed gateway's 503) is recorded through g's Observer
// (Gateway.ObserveRefusedAsking), so that the usage history and /spend/logs hold every such
// request under the x-request-id its caller was answered with, with the model it asked for
// as its model_group as LiteLLM's spend logs hold a failed request's: the one its body named
// (noted as it was decoded, noteDecodedModel), else the one it named outside its body
// (noteAskedModel, or asked, the route's gatewayRoute.asked, when not nil), and stream as
// its body asked ("stream": true, noted with its model). A stream that failed after it
// started was recorded by the gateway.
func recordRefusals(g *completions.Gateway, op string, asked func(*http.Request) string, h func(http.ResponseWriter, *http.Request) error) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		received := time.Now()
		var recorded atomic.Bool
		r = r.WithContext(completions.WithRecordedFlag(r.Context(), &recorded))
		err := h(w, r)
		answered, model, stream := err, "", false
		if info, ok := r.Context().Value(requestInfoKey{}).(*requestInfo); ok {
			if answered == nil {
				answered = info.answeredErr // written in the route's own envelope
			}
			model, stream = info.askedModel, info.askedStream
		}
		if answered != nil && !recorded.Load() {
			if model == "" && asked != nil {
				model = asked(r)
			}
			g.ObserveRefusedAsking(cutRefusalContext(r.Context(), answered), completionsScope(r, received), op, stream, model, answered)
		}
		return err
	}
}

// noteAskedModel notes model as the model r names (a realtime session's ?model= or its
// client secret's), for recordRefusals to record a refusal of r with: a route whose
// request names its model outside a JSON body calls it before it may refuse r.
func noteAskedModel(r *http.Request, model string) {
	if info, ok := r.Context().Value(requestInfoKey{}).(*requestInfo); ok {
		info.askedModel = model
	}
}

// noteDecodedModel notes the model a gateway request's body names (decodedModel of v, the
// value decodeJSON decoded body into, err its decoding's error) as the model r asked for,
// and whether it asked for a stream, for recordRefusals to record a refusal of r with. It
// allocates nothing on a body that decoded; on one that did not, the model and stream are
// read from body on their own, so that a refusal names them whatever field the decoder
// stopped at.
func noteDecodedModel(r *http.Request, v any, body []byte, err error) {
	model, stream, ok := decodedModel(v)
	if !ok {
		return
	}
	if err != nil {
		var named struct {
			Model  string   `json:"model"`
			Models []string `json:"models"`
			Stream bool     `json:"stream"`
		}
		json.Unmarshal(body, &named) //nolint:errcheck // a model of the wrong type names none
		model, stream = named.Model, named.Stream
		if _, native := v.(*completions.Request); native {
			model = ""
			if len(named.Models) == 1 {
				model = named.Models[0]
			}
		}
	}
	if info, ok := r.Context().Value(requestInfoKey{}).(*requestInfo); ok {
		info.askedStream = stream
		if model != "" {
			info.askedModel = model
		}
	}
}

// decodedModel is the model v, a gateway request body decoded, names as its caller wrote
// it (a model group's or a model's name; "" for none), whether it asked for a stream
// ("stream": true), and true; false for a value of another type. The native request's
// (completions.Request) is its one model, as the gateway's own records name it; one
// listing several names none.
func decodedModel(v any) (model string, stream, ok bool) {
	switch req := v.(type) {
	case *completions.OpenAIChatRequest:
		return req.Model, req.Stream, true
	case *completions.ResponsesRequest:
		return req.Model, req.Stream, true
	case *completions.AnthropicMessagesRequest:
		return req.Model, req.Stream, true
	case *completions.OpenAITextCompletionRequest:
		return req.Model, req.Stream, true
	case *completions.EmbeddingsRequest:
		return req.Model, false, true
	case *completions.ImageGenerationRequest:
		return req.Model, req.Stream, true
	case *completions.ModerationRequest:
		return req.Model, false, true
	case *completions.RerankRequest:
		return req.Model, false, true
	case *completions.SpeechRequest:
		return req.Model, false, true
	case *completions.Request:
		if len(req.Models) == 1 {
			return req.Models[0], req.Stream, true
		}
		return "", req.Stream, true
	}
	return "", false, false
}

// completionsScope builds the gateway scope of an authenticated request.
func completionsScope(r *http.Request, received time.Time) completions.Scope {
	p, _ := PrincipalFrom(r.Context())
	sc := completions.Scope{Owner: p.Owner, Received: received, RequestID: requestID(r.Context()), UserAgent: r.UserAgent()}
	switch v := p.Scope.(type) {
	case *completions.Budget:
		sc.Budget = v
	case completions.Scope:
		sc.Budget, sc.Tag, sc.CallTimeout, sc.Guardrails, sc.MCPServers = v.Budget, v.Tag, v.CallTimeout, v.Guardrails, v.MCPServers
	case *completions.Scope:
		sc.Budget, sc.Tag, sc.CallTimeout, sc.Guardrails, sc.MCPServers = v.Budget, v.Tag, v.CallTimeout, v.Guardrails, v.MCPServers
	case virtualKeyScope:
		sc.Budget, sc.Tag, sc.Guardrails, sc.MCPServers = v.Budget, v.Tag, v.Guardrails, v.MCPServers
		// Its conversations are its own (responsesOwner), not its siblings' to continue.
		sc.ConversationOwner = p.Owner + "/" + v.KeyID
		sc.KeyID, sc.TeamID, sc.UserID = v.KeyID, v.TeamID, v.UserID
		sc.KeyAlias, sc.TeamAlias = v.KeyAlias, v.TeamAlias
		sc.InheritedTags = v.Tags
		sc.NumRetries, sc.Fallbacks, sc.ContextWindowFallbacks, sc.AttemptTimeout = v.NumRetries, v.Fallbacks, v.ContextWindowFallbacks, v.AttemptTimeout // router_settings
	}
	return sc
}

func (s *Server) handleCompletions(g *completions.Gateway, w http.ResponseWriter, r *http.Request) error {
	received := time.Now()
	var req completions.Request
	if err := decodeJSON(r, &req, decodeOptions{EmptyIsObject: true}); err != nil {
		return err
	}
	if err := applyRequestHeaders(r, &req); err != nil {
		return err
	}
	scope, err := s.gatewayScope(withEndUserOf(r), received)
	if err != nil {
		return err
	}
	if !req.Stream {
		resp, err := g.Complete(r.Context(), scope, &req)
		if err != nil {
			return err
		}
		setCacheHeaders(w, resp.Cache)
		writeJSON(w, http.StatusOK, completions.NewAnswer(resp))
		return nil
	}
	st, err := g.Stream(r.Context(), scope, &req)
	if err != nil {
		return err // nothing sent yet: an ordinary JSON error
	}
	setCacheHeaders(w, st.Cache())
	if err := completions.WriteStream(w, st); err != nil {
		s.logStreamEnd(r, "completions", err)
	}
	return nil
}

func (s *Server) handleOpenAIChat(g *completions.Gateway, w http.ResponseWriter, r *http.Request) error {
	received := time.Now()
	var oreq completions.OpenAIChatRequest
	if err := decodeJSON(r, &oreq, decodeOptions{AllowUnknownFields: true}); err != nil {
		return s.openAIError(w, r, err)
	}
	r = withEndUserNamed(r, litellmEndUserFields, oreq.User, oreq.LiteLLMMetadata.EndUser(), completions.MetadataUserID(oreq.Metadata))
	req, err := oreq.ToRequest()
	if err != nil {
		return s.openAIError(w, r, err)
	}
	includeUsage := oreq.StreamOptions != nil && oreq.StreamOptions.IncludeUsage
	if n := oreq.Choices(); n > 1 && req.Stream {
		return s.streamOpenAIChoices(g, w, r, req, n, received, includeUsage)
	}
	if n := oreq.Choices(); n > 1 {
		return s.answerChoices(g, w, r, req, n, received,
			func(cf *completions.ContentFilterError) { writeContentFiltered(w, cf, received, false, false) },
			func(resps []*completions.Response) {
				c := completions.NewOpenAIChatCompletionN(resps, received)
				if oreq.UsesLegacyFunctions() {
					c.AsLegacyFunctionCall()
				}
				writeJSON(w, http.StatusOK, c)
			})
	}
	return s.answerOpenAI(g, w, r, req, received, openAIAnswer{
		what: "chat completions",
		whole: func(resp *completions.Response) error {
			c := completions.NewOpenAIChatCompletion(resp, received)
			if oreq.UsesLegacyFunctions() {
				c.AsLegacyFunctionCall() // the form the request declared its functions in
			}
			writeJSON(w, http.StatusOK, c)
			return nil
		},
		refused: func(cf *completions.ContentFilterError, stream bool) error {
			writeContentFiltered(w, cf, received, stream, stream && includeUsage)
			return nil
		},
		stream: func(st *completions.ResponseStream) error { return completions.WriteOpenAIStream(w, st, includeUsage) },
	})
}

// answerChoices answers n > 1 choices of req, not streamed (Gateway.CompleteN): a content
// filter's refusal through refused, the answers through write. When some failed,
// X-Switchyard-Choices-Failed counts them: the answers that came are paid for and are the
// choices, fewer than asked.
func (s *Server) answerChoices(g *completions.Gateway, w http.ResponseWriter, r *http.Request, req *completions.Request, n int, received time.Time,
	refused func(*completions.ContentFilterError), write func([]*completions.Response)) error {
	nameModelGroup(w, g, req)
	if err := applyRequestHeaders(r, req); err != nil {
		return s.openAIError(w, r, err)
	}
	scope, err := s.gatewayScope(r, received)
	if err != nil {
		return s.openAIError(w, r, err)
	}
	resps, failed, err := g.CompleteN(r.Context(), scope, req, n)
	var cf *completions.ContentFilterError
	if errors.As(err, &cf) {
		refused(cf)
		return nil
	}
	if err != nil {
		return s.openAIError(w, r, err)
	}
	if len(failed) > 0 {
		w.Header().Set("X-Switchyard-Choices-Failed", strconv.Itoa(len(failed)))
		s.log.WarnContext(r.Context(), "completions: some choices failed", "asked", n, "failed", len(failed), "err", failed[0])
	}
	write(resps)
	return nil
}

// startChoices starts n streamed choices of req (Gateway.StreamN) once each started or
// failed. When none started it answers instead — a content filter's refusal through
// filtered, another failure as n 1's error — and returns a nil MultiStream (with the
// handler's error). When some failed, X-Switchyard-Choices-Failed counts them: the choices
// that started are paid for and streamed, fewer than asked.
func (s *Server) startChoices(g *completions.Gateway, w http.ResponseWriter, r *http.Request, scope completions.Scope, req *completions.Request,
	n int, what string, filtered func(*completions.ContentFilterError)) (*completions.MultiStream, error) {
	m, failed, err := g.StreamN(r.Context(), scope, req, n)
	var cf *completions.ContentFilterError
	if errors.As(err, &cf) {
		filtered(cf)
		return nil, nil
	}
	if err != nil {
		return nil, s.openAIError(w, r, err)
	}
	if len(failed) > 0 {
		w.Header().Set("X-Switchyard-Choices-Failed", strconv.Itoa(len(failed)))
		s.log.WarnContext(r.Context(), "completions: some streamed "+what+" choices failed", "asked", n, "failed", len(failed), "err", failed[0])
	}
	return m, nil
}

// streamOpenAIChoices streams n choices of a chat completion (Gateway.StreamN) once every
// choice's stream started or failed: all failing is the error n 1 gives (a content
// filter's refusal a one-chunk stream); some failing is a 200 whose
// X-Switchyard-Choices-Failed counts them, the others keeping their indices.
func (s *Server) streamOpenAIChoices(g *completions.Gateway, w http.ResponseWriter, r *http.Request, req *completions.Request, n int, received time.Time, includeUsage bool) error {
	nameModelGroup(w, g, req)
	if err := applyRequestHeaders(r, req); err != nil {
		return s.openAIError(w, r, err)
	}
	scope, err := s.gatewayScope(r, received)
	if err != nil {
		return s.openAIError(w, r, err)
	}
	m, err := s.startChoices(g, w, r, scope, req, n, "chat completion", func(cf *completions.ContentFilterError) {
		writeContentFiltered(w, cf, received, true, includeUsage)
	})
	if m == nil {
		return err
	}
	group, model := m.Answerer()
	setLiteLLMDeploymentHeaders(w, g, req, group, model)
	if err := completions.WriteOpenAIStreamN(w, m, includeUsage); err != nil {
		s.logStreamEnd(r, "chat completions", err)
	}
	return nil
}

// nameModelGroup sets X-Switchyard-Model-Group when req names a model group alone: the
// answer names the model that answered; this names the group the caller asked for (as
// LiteLLM's x-litellm-model-group does).
func nameModelGroup(w http.ResponseWriter, g *completions.Gateway, req *completions.Request) {
	if len(req.Models) == 1 && g.IsModelGroup(req.Models[0]) {
		w.Header().Set("X-Switchyard-Model-Group", req.Models[0])
	}
}

// openAIAnswer writes one answer of an OpenAI-compatible route in its own shape: a whole
// response, a content filter's refusal (whole or as a stream), or a stream.
type openAIAnswer struct {
	what    string // the route, for the log line of a stream that failed
	whole   func(resp *completions.Response) error
	refused func(cf *completions.ContentFilterError, stream bool) error
	stream  func(st *completions.ResponseStream) error
}

// answerOpenAI runs req through g and writes the answer with a; failures before any answer
// are OpenAI error envelopes, a stream that fails after it started is logged (its client
// already saw the error event).
func (s *Server) answerOpenAI(g *completions.Gateway, w http.ResponseWriter, r *http.Request, req *completions.Request, received time.Time, a openAIAnswer) error {
	scope, err := s.gatewayScope(r, received)
	if err != nil {
		return s.openAIError(w, r, err)
	}
	nameModelGroup(w, g, req)
	if err := applyRequestHeaders(r, req); err != nil {
		return s.openAIError(w, r, err)
	}
	var cf *completions.ContentFilterError
	if !req.Stream {
		resp, err := g.Complete(r.Context(), scope, req)
		if errors.As(err, &cf) {
			return a.refused(cf, false)
		}
		if err != nil {
			return s.openAIError(w, r, err)
		}
		setCacheHeaders(w, resp.Cache)
		setLiteLLMAnswerHeaders(w, g, req, resp, received)
		return a.whole(resp)
	}
	st, err := g.Stream(r.Context(), scope, req)
	if errors.As(err, &cf) {
		return a.refused(cf, true)
	}
	if err != nil {
		return s.openAIError(w, r, err)
	}
	setCacheHeaders(w, st.Cache())
	setLiteLLMDeploymentHeaders(w, g, req, st.ModelGroup(), st.Provider()+"/"+st.Model())
	if err := a.stream(st); err != nil {
		s.logStreamEnd(r, a.what, err)
	}
	return nil
}

// logStreamEnd logs a stream that ended with err after it started: a warning, unless the
// client went away (then it is its choice, logged at debug).
func (s *Server) logStreamEnd(r *http.Request, what string, err error) {
	level := slog.LevelWarn
	if r.Context().Err() != nil {
		level = slog.LevelDebug
	}
	s.log.Log(r.Context(), level, what+" stream ended with an error", "request_id", requestID(r.Context()), "err", err)
}

// openAIError writes err in the gateway envelope of r's surface (gatewayErrorEnvelope):
// Google's or Anthropic's on theirs, else OpenAI's (see writeOpenAIError) — on a route off
// /v1 too, whose failures before its handler (401, 403) are in the path's own envelope;
// errors nobody maps fall back to the path's 500.
func (s *Server) openAIError(w http.ResponseWriter, r *http.Request, err error) error {
	ae := s.toAPIError(err)
	if ae == nil {
		return err
	}
	if errors.Is(err, completions.ErrModelNotServed) {
		// LiteLLM's words start with the route ("/chat/completions: Invalid model name…").
		route := r.URL.Path
		if rest, ok := strings.CutPrefix(route, "/v1/"); ok {
			route = "/" + rest // /v1beta/… stays whole
		}
		ae.Message = route + ": " + ae.Message
	}
	if info, ok := r.Context().Value(requestInfoKey{}).(*requestInfo); ok {
		info.answeredErr = err
	}
	switch errorEnvelopeOf(r.Method, r.URL.Path) {
	case envelopeGemini:
		writeGeminiError(w, ae, err)
	case envelopeAnthropic:
		writeAnthropicError(w, ae, err)
	default: // OpenAI's, also off /v1 (/v2/rerank, see gatewayErrorEnvelope)
		writeOpenAIError(w, ae, err)
	}
	return nil
}

// completionsError maps the gateway's typed errors onto statuses.
// ErrorStatus is the HTTP status the gateway's routes answer a request that failed with
// err: what the client was told, for metrics (telemetry.LiteLLMOptions.StatusOf); 500 for
// an error of no known kind.
func ErrorStatus(err error) int {
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.Status
	}
	if ae := completionsError(err); ae != nil {
		return ae.Status
	}
	return http.StatusInternalServerError
}

func completionsError(err error) *APIError {
	var ve *completions.ValidationError
	var af *completions.AllFailedError
	var cf *completions.ContentFilterError
	var ge *completions.GuardrailError
	var team *completions.BudgetExceededError
	var gone *completions.BudgetGoneError
	var cost *completions.CostExceededError
	var tagged *completions.TagRoutingError
	if ae := modelLimitError(err); ae != nil {
		return ae // the key's per-model limits, in LiteLLM's words
	}
	switch {
	case errors.Is(err, completions.ErrGatewayClosed):
		return gatewayClosedRefusal()
	case errors.As(err, &cf):
		ae := Errorf(http.StatusBadRequest, KindContentFiltered, "%v", cf)
		ae.Extra = map[string]any{"attempts": cf.Attempts}
		return ae
	case errors.As(err, &ge):
		// LiteLLM's guardrail errors: a 400 naming the guardrail.
		ae := Errorf(http.StatusBadRequest, KindGuardrail, "%s", ge.Error())
		ae.Extra = map[string]any{"guardrail": ge.Guardrail, "mode": ge.Mode}
		ae.Param = "guardrails"
		return ae
	case errors.Is(err, completions.ErrModelNotServed) && errors.As(err, &ve):
		// LiteLLM's proxy's 400 for a model its config does not serve (openAIError puts
		// the route before it, as LiteLLM does).
		ae := Errorf(http.StatusBadRequest, KindBadRequest, "%s", ve.Message)
		ae.Param = ve.Field
		return ae
	case errors.Is(err, completions.ErrInvalid) && errors.As(err, &ve):
		return Validation(http.StatusUnprocessableEntity, "%s", ve.Error())
	case errors.Is(err, completions.ErrInvalid):
		return Validation(http.StatusUnprocessableEntity, "%s", userMessage(err))
	case errors.Is(err, completions.ErrNotFound), errors.Is(err, completions.ErrCacheMiss), errors.Is(err, completions.ErrResponseNotFound),
		errors.Is(err, completions.ErrConversationNotFound), errors.Is(err, completions.ErrThreadNotFound):
		return NotFound("%s", userMessage(err))
	case errors.As(err, &tagged):
		// No deployment of the model group for the request's tags: LiteLLM's words and
		// status (its proxy answers this router error with a 401).
		return Errorf(http.StatusUnauthorized, KindUnauthorized, "%s", tagged.Error())
	case errors.Is(err, completions.ErrModelNotAllowed):
		return Errorf(http.StatusForbidden, KindForbidden, "%s", userMessage(err))
	case errors.As(err, &gone) && gone.Kind == endUserKind:
		// The end user was deleted meanwhile: what a request naming an unknown end user
		// on /customer/info is told (LiteLLM's 404), not that the key was revoked.
		return NotFound("End User Id=%s does not exist in db (deleted while this request was on its way)", gone.Name)
	case errors.As(err, &gone) && gone.Kind == userKind:
		// The user was deleted meanwhile: deleting a user revokes its keys.
		return Errorf(http.StatusUnauthorized, KindUnauthorized, "this key was revoked (its user %s was deleted)", gone.Name)
	case errors.As(err, &gone) && gone.Kind == teamMemberKind:
		return Errorf(http.StatusUnauthorized, KindUnauthorized, "this key's user was taken out of its team meanwhile (User=%s): try again", gone.Name)
	case errors.As(err, &gone) && gone.Kind == orgMemberKind:
		return Errorf(http.StatusUnauthorized, KindUnauthorized, "this key's user was taken out of its organization meanwhile (User=%s): try again", gone.Name)
	case errors.As(err, &gone) && gone.Kind == completions.TagBudgetKind:
		// A tag the request named was deleted (POST /tag/delete) while it was on its way: the
		// key is fine, and sent again the request draws on no tag budget (409: the SDKs retry).
		ae := Errorf(http.StatusConflict, KindConflict, "Tag=%s was deleted while this request was on its way: try again", gone.Name)
		ae.Retryable = true
		return ae
	case errors.As(err, &gone) && gone.Kind == organizationKind:
		// Deleting an organization deletes its teams and revokes their keys.
		return Errorf(http.StatusUnauthorized, KindUnauthorized, "this key was revoked (its organization %s, or its team's, was deleted)", gone.Name)
	case errors.As(err, &gone) && gone.Name != "":
		// A team's account: deleting a team revokes its keys.
		return Errorf(http.StatusUnauthorized, KindUnauthorized, "this key was revoked (its team %s was deleted)", gone.Name)
	case errors.Is(err, completions.ErrBudgetGone):
		return Errorf(http.StatusUnauthorized, KindUnauthorized, "this key was revoked")
	case errors.Is(err, completions.ErrBudgetBusy):
		ae := Errorf(http.StatusTooManyRequests, KindTooManyRequests, "%s", userMessage(err))
		ae.Retryable = true
		ae.Header = http.Header{"Retry-After": {"1"}}
		return ae
	case errors.Is(err, completions.ErrLimited):
		// Every deployment at its rpm or tpm, or at its max_parallel until the request's
		// deadline (LiteLLM's router answers a RateLimitError): it clears with time, so
		// the SDKs may wait and retry.
		ae := Errorf(http.StatusTooManyRequests, KindTooManyRequests, "%s", userMessage(err))
		ae.Retryable = true
		var le *completions.LimitedError
		if errors.As(err, &le) {
			ae.Header = http.Header{"Retry-After": {strconv.Itoa(le.RetryAfterSeconds())}}
			ae.Extra = map[string]any{"attempts": le.Attempts}
		}
		return ae
	case errors.Is(err, completions.ErrTokenRate):
		// A rate, not a spent budget: it clears with time, so the SDKs may wait and retry.
		msg := userMessage(err)
		var te *completions.TokenRateError
		if errors.As(err, &te) && te.Name != "" && te.Kind == "" {
			// SetParent's account is a team's: say so (the message names the others' kind).
			named := *te
			named.Kind = "team"
			msg = userMessage(&named)
		}
		ae := Errorf(http.StatusTooManyRequests, KindTooManyRequests, "%s", msg)
		ae.Retryable = true
		if te != nil {
			ae.Header = http.Header{"Retry-After": {strconv.Itoa(int(math.Ceil(te.RetryAfter.Seconds())))}}
		}
		return ae
	case errors.As(err, &team) && team.Kind == endUserKind:
		// An end user's account refused the request: LiteLLM's wording and status.
		return endUserRefusal(team)
	case errors.As(err, &team) && team.Kind == proxyBudgetKind:
		// The proxy-wide budget (LiteLLM's litellm_settings.max_budget) is spent.
		return Errorf(http.StatusTooManyRequests, KindTooManyRequests, "%s", proxyRefusal(team))
	case errors.As(err, &team) && (team.Kind == userKind || team.Kind == teamMemberKind || team.Kind == orgMemberKind):
		// A user's account (or its membership's in the key's team or in the team's
		// organization) refused the request.
		return Errorf(http.StatusTooManyRequests, KindTooManyRequests, "%s", userRefusal(team))
	case errors.As(err, &team) && team.Kind == completions.TagBudgetKind:
		// The account of a tag the request named (POST /tag/new) refused it.
		return Errorf(http.StatusTooManyRequests, KindTooManyRequests, "%s", accountRefusal("Tag", "/tag/update", team))
	case errors.As(err, &team) && team.Kind == organizationKind:
		// The account of the organization of the key's team refused the request.
		return Errorf(http.StatusTooManyRequests, KindTooManyRequests, "%s", organizationRefusal(team))
	case errors.As(err, &team):
		// A team's account refused the request: LiteLLM's wording, which names the team. A
		// blocked team is a 429 here as a blocked key is; the OpenAI-compatible surface
		// answers both with LiteLLM's 401 auth_error (openAIStatus).
		return Errorf(http.StatusTooManyRequests, KindTooManyRequests, "%s", teamRefusal(team))
	case errors.As(err, &cost):
		// The key's own max_budget spent: LiteLLM's words (BudgetExceededError's), as a
		// team's and an end user's refusals have theirs, then Switchyard's rounded figures.
		return Errorf(http.StatusTooManyRequests, KindTooManyRequests, "Budget has been exceeded! Current cost: %s, Max budget: %s ($%.4f of $%.4f spent)",
			pythonFloat(cost.SpentUSD), pythonFloat(cost.MaxUSD), cost.SpentUSD, cost.MaxUSD)
	case errors.Is(err, completions.ErrBlocked):
		// LiteLLM's words for a blocked key (a 429 here, its 401 on /v1/: see openAIStatus).
		return Errorf(http.StatusTooManyRequests, KindTooManyRequests, "Key is blocked. Update via `/key/unblock` if you're an admin.")
	case errors.Is(err, completions.ErrBudgetExceeded):
		return Errorf(http.StatusTooManyRequests, KindTooManyRequests, "%s", userMessage(err))
	case errors.As(err, &af):
		ae := Errorf(http.StatusBadGateway, KindBadGateway, "%v", af)
		ae.Extra = map[string]any{"attempts": af.Attempts}
		return ae
	}
	return nil
}

// handleResponses serves POST /v1/responses: the request is translated to a chat request
// and answered by the same gateway; the answer is a response object or its typed events.
// previous_response_id brings the stored conversation it ends (Gateway.ContinueResponse);
// the answer is stored (Gateway.StoreResponse) unless the request says store: false, before
// the client gets its end, and its output items are kept for the caller's item_reference
// items (Gateway.KeepResponseItems). background: true answers at once with the response
// queued and runs it on (Gateway.StartBackgroundResponse).
func (s *Server) handleResponses(g *completions.Gateway, w http.ResponseWriter, r *http.Request) error {
	received := time.Now()
	var rreq completions.ResponsesRequest
	if err := decodeJSON(r, &rreq, decodeOptions{AllowUnknownFields: true}); err != nil {
		return s.openAIError(w, r, err)
	}
	r = withEndUserNamed(r, responsesEndUserFields, rreq.User, rreq.SafetyIdentifier, rreq.LiteLLMMetadata.EndUser(), completions.MetadataUserID(rreq.Metadata))
	owner := responsesOwner(r)
	if err := g.ResolveItemReferences(r.Context(), owner, &rreq); err != nil {
		return s.openAIError(w, r, err)
	}
	if err := g.ContinueResponse(r.Context(), owner, &rreq); err != nil {
		return s.openAIError(w, r, err)
	}
	// The lease on a conversation ends with the request, answered (StoreResponse) or not.
	defer g.ReleaseResponse(context.WithoutCancel(r.Context()), owner, &rreq)
	if n, bound := rreq.HistoryBytes(), historyBodies*s.cfg.MaxBodyBytes; n > bound {
		// A conversation may outgrow one request (--max-body-bytes), not without end.
		ae := Validation(http.StatusBadRequest, "previous_response_id: the conversation holds %d bytes of items, over this server's bound of %d (%d times --max-body-bytes): start a new conversation with what matters of it in input", n, bound, historyBodies)
		ae.Param = "previous_response_id"
		return s.openAIError(w, r, ae)
	}
	creq, err := rreq.ToChatRequest()
	if err != nil {
		return s.openAIError(w, r, err)
	}
	req, err := creq.ToRequest()
	if err != nil {
		return s.openAIError(w, r, err)
	}
	if rreq.Background != nil && *rreq.Background && !rreq.UsesMCP() { // mcp tools: refused by RespondWithMCP
		// Answered at once (queued), run on in this process: GET polls it, cancel stops it.
		nameModelGroup(w, g, req)
		if err := applyRequestHeaders(r, req); err != nil {
			return s.openAIError(w, r, err)
		}
		scope, err := s.gatewayScope(r, received)
		if err != nil {
			return s.openAIError(w, r, err)
		}
		// The run holds the key's max_parallel_requests slots until it ends, not only
		// until this answer (queued) is sent.
		release := keepParallelSlot(r)
		scope.BackgroundDone = release
		o, err := g.StartBackgroundResponse(r.Context(), scope, owner, &rreq, req)
		if err != nil {
			release()
			return s.openAIError(w, r, err)
		}
		if rreq.Stream {
			// Its events as the run makes them; the run goes on if this client leaves
			// (GET ?stream=true&starting_after= resumes).
			if err := g.StreamBackgroundResponse(r.Context(), owner, o.ID, -1, w); err != nil && r.Context().Err() == nil {
				s.log.Warn("responses: stream a background response", "response_id", o.ID, "err", err)
			}
			return nil
		}
		writeJSON(w, http.StatusOK, o)
		return nil
	}
	newObject := func(msgID string) *completions.ResponseObject {
		o := completions.NewResponseObject(&rreq, completions.NewResponseID(msgID), received)
		o.Store = o.Store && g.StoresResponses()
		return o
	}
	// keep stores o (paid for: a failure to store is logged, and o says store: false) and
	// keeps its items for item_reference.
	keep := func(o *completions.ResponseObject) {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), storeResponseTimeout)
		defer cancel()
		if err := g.StoreResponse(ctx, owner, &rreq, o); err != nil {
			s.log.Warn("responses: the answer is not stored", "response_id", o.ID, "err", err)
		}
		g.KeepResponseItems(owner, o) // for the item_reference items of the caller's next requests
	}
	whole := func(resp *completions.Response) *completions.ResponseObject {
		o := newObject(resp.ResponseMessageID)
		o.Complete(resp)
		keep(o)
		return o
	}
	if rreq.UsesMCP() {
		return s.respondWithMCP(g, w, r, &rreq, req, newObject(mcpResponseID()), keep, received)
	}
	return s.answerOpenAI(g, w, r, req, received, openAIAnswer{
		what: "responses",
		whole: func(resp *completions.Response) error {
			writeJSON(w, http.StatusOK, whole(resp))
			return nil
		},
		refused: func(cf *completions.ContentFilterError, stream bool) error {
			// An incomplete response (reason content_filter), whole or as its events.
			o := whole(contentFilteredResponse(cf))
			if stream {
				return completions.WriteResponsesEvents(w, o)
			}
			writeJSON(w, http.StatusOK, o)
			return nil
		},
		stream: func(st *completions.ResponseStream) error {
			o := newObject(st.ResponseMessageID())
			return completions.WriteResponsesStreamWith(w, st, o, completions.ResponsesStreamOptions{BeforeDone: keep})
		},
	})
}

// respondWithMCP answers a /v1/responses request with mcp tools (completions.Gateway.
// RespondWithMCP): whole, or as its events; keep stores the answer before the client gets
// its end.
func (s *Server) respondWithMCP(g *completions.Gateway, w http.ResponseWriter, r *http.Request, rreq *completions.ResponsesRequest,
	req *completions.Request, o *completions.ResponseObject, keep func(*completions.ResponseObject), received time.Time) error {
	scope, err := s.gatewayScope(r, received)
	if err != nil {
		return s.openAIError(w, r, err)
	}
	nameModelGroup(w, g, req)
	opts := completions.MCPResponseOptions{Prepare: func(req *completions.Request) error { return applyRequestHeaders(r, req) }, BeforeDone: keep}
	if rreq.Stream {
		err := g.StreamWithMCP(r.Context(), scope, rreq, o, w, opts)
		var started *completions.StreamStartedError
		if errors.As(err, &started) {
			s.logStreamEnd(r, "responses", err)
			return nil
		}
		if err != nil {
			return s.openAIError(w, r, err) // nothing was sent yet
		}
		return nil
	}
	if err := g.RespondWithMCP(r.Context(), scope, rreq, o, opts); err != nil {
		return s.openAIError(w, r, err)
	}
	keep(o)
	writeJSON(w, http.StatusOK, o)
	return nil
}

// mcpResponseID is the message id of a response with mcp tools, which has one of its own
// (each of its rounds is a gateway request with its own).
func mcpResponseID() string { return strings.ReplaceAll(uuid.NewString(), "-", "") }

// historyBodies is how many request bodies (Config.MaxBodyBytes) the items a
// previous_response_id brings may weigh (completions.DefaultMaxHistoryBytes for the
// default body bound; serve gives the gateway the same bound).
const historyBodies = 8

// responsesOwner is whom the stored /v1/responses answers of r's key belong to (and its
// files, batches, OpenAI conversations, preferences and model selection sessions): the
// key's owner, and for a virtual key or a job key the key itself ("<owner>/<key>", which
// store.Owns lets the owner reach) — each is handed to someone else (an app, a sandboxed
// agent), who sees only what it was given, not its issuer's nor a sibling's.
func responsesOwner(r *http.Request) string {
	p, _ := PrincipalFrom(r.Context())
	switch v := p.Scope.(type) {
	case nil:
		return p.Owner
	case virtualKeyScope:
		return p.Owner + "/" + v.KeyID
	}
	if tag := completionsScope(r, time.Time{}).Tag; tag != "" {
		return p.Owner + "/scoped:" + tag // a job key: its job's
	}
	return p.Owner + "/scoped"
}

// storeResponseTimeout bounds the write of a /v1/responses answer to the store.
const storeResponseTimeout = 10 * time.Second

// contentFilteredResponse is the answer of a request a provider's content filter refused:
// no content, finish reason content_filter, the attempts made and the usage the blocked
// call is billed.
func contentFilteredResponse(cf *completions.ContentFilterError) *completions.Response {
	resp := &completions.Response{FinishReason: "content_filter", Attempts: cf.Attempts,
		ResponseMessageID: cf.ResponseMessageID, Usage: cf.Usage, UsageEstimated: cf.UsageEstimated}
	resp.Provider, resp.Model, _ = strings.Cut(cf.Model, "/")
	if resp.ResponseMessageID == "" { // a library-built error: an id of its own all the same
		resp.ResponseMessageID = strings.ReplaceAll(cf.Model, "/", "-") + "-filtered-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	}
	return resp
}

// userMessage is an error's text without the Go package prefix ("completions: ",
// "trainer: ", "optimizer: "), which means nothing to an API client.
func userMessage(err error) string {
	msg := err.Error()
	for _, pkg := range []string{"completions: ", "trainer: ", "optimizer: "} {
		if m, ok := strings.CutPrefix(msg, pkg); ok {
			return m
		}
	}
	return msg
}

// streamTextChoices streams n choices of a one-prompt text completion (Gateway.StreamN),
// with streamOpenAIChoices' outcomes: all failing is n 1's error (a content filter's
// refusal a one-chunk stream), some failing a 200 with X-Switchyard-Choices-Failed.
func (s *Server) streamTextChoices(g *completions.Gateway, w http.ResponseWriter, r *http.Request, treq *completions.OpenAITextCompletionRequest,
	req *completions.Request, scope completions.Scope, n int, received time.Time) error {
	m, err := s.startChoices(g, w, r, scope, req, n, "text completion", func(cf *completions.ContentFilterError) {
		completions.WriteOpenAITextFiltered(w, treq, contentFilteredResponse(cf), received, true)
	})
	if m == nil {
		return err
	}
	group, model := m.Answerer()
	setLiteLLMDeploymentHeaders(w, g, req, group, model)
	if err := completions.WriteOpenAITextStreamN(w, m, treq); err != nil {
		s.logStreamEnd(r, "text completions", err)
	}
	return nil
}

// handleTextCompletions serves POST /v1/completions, OpenAI's legacy text completions: each
// prompt is a chat request of its own (ToChatRequests), answered n times; several prompts
// are answered at once, their choices in prompt order.
func (s *Server) handleTextCompletions(g *completions.Gateway, w http.ResponseWriter, r *http.Request) error {
	received := time.Now()
	var treq completions.OpenAITextCompletionRequest
	if err := decodeJSON(r, &treq, decodeOptions{AllowUnknownFields: true}); err != nil {
		return s.openAIError(w, r, err)
	}
	creqs, err := treq.ToChatRequests()
	if err != nil {
		return s.openAIError(w, r, err)
	}
	reqs := make([]*completions.Request, len(creqs))
	for i, c := range creqs {
		if reqs[i], err = c.ToRequest(); err != nil {
			return s.openAIError(w, r, err)
		}
		if err := applyRequestHeaders(r, reqs[i]); err != nil {
			return s.openAIError(w, r, err)
		}
	}
	scope, err := s.gatewayScope(withEndUserNamed(r, litellmEndUserFields, treq.User, treq.LiteLLMMetadata.EndUser(), completions.MetadataUserID(treq.Metadata)), received)
	if err != nil {
		return s.openAIError(w, r, err)
	}
	nameModelGroup(w, g, reqs[0])
	var cf *completions.ContentFilterError
	if n := creqs[0].Choices(); treq.Stream && n > 1 {
		return s.streamTextChoices(g, w, r, &treq, reqs[0], scope, n, received)
	}
	if treq.Stream {
		st, err := g.Stream(r.Context(), scope, reqs[0])
		if errors.As(err, &cf) {
			// A content filter's refusal is an answer, as on chat: a one-chunk stream.
			completions.WriteOpenAITextFiltered(w, &treq, contentFilteredResponse(cf), received, true)
			return nil
		}
		if err != nil {
			return s.openAIError(w, r, err)
		}
		setCacheHeaders(w, st.Cache())
		setLiteLLMDeploymentHeaders(w, g, reqs[0], st.ModelGroup(), st.Provider()+"/"+st.Model())
		if err := completions.WriteOpenAITextStream(w, st, &treq); err != nil {
			s.logStreamEnd(r, "text completions", err)
		}
		return nil
	}
	answers := make([][]*completions.Response, len(reqs))
	failed := make([][]error, len(reqs))
	var wg sync.WaitGroup
	for i, req := range reqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var cf *completions.ContentFilterError // one per prompt: they run at once
			var err error
			answers[i], failed[i], err = g.CompleteN(r.Context(), scope, req, creqs[i].Choices())
			if errors.As(err, &cf) {
				answers[i], failed[i] = []*completions.Response{contentFilteredResponse(cf)}, nil // an answer, as on chat
			} else if err != nil && len(failed[i]) == 0 {
				failed[i] = []error{err}
			}
		}()
	}
	wg.Wait()
	// The answers that came are paid for: they are the choices, fewer than asked (as
	// CompleteN keeps the choices that came); the request fails only when none came.
	var firstErr error
	nFailed, nAnswered := 0, 0
	for i := range reqs {
		nFailed += len(failed[i])
		nAnswered += len(answers[i])
		if firstErr == nil && len(failed[i]) > 0 {
			firstErr = failed[i][0]
		}
	}
	if nAnswered == 0 {
		return s.openAIError(w, r, firstErr)
	}
	if nFailed > 0 {
		w.Header().Set("X-Switchyard-Choices-Failed", strconv.Itoa(nFailed))
		s.log.WarnContext(r.Context(), "completions: some text completion choices failed", "failed", nFailed, "err", firstErr)
	}
	tc := completions.NewOpenAITextCompletion(&treq, answers, received)
	setCacheHeaders(w, tc.Switchyard.Cache) // every prompt's, combined
	setLiteLLMTextHeaders(w, g, reqs, answers, received)
	writeJSON(w, http.StatusOK, tc)
	return nil
}
