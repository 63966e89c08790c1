package server

import (
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
)

// openAIPath reports whether path belongs to the OpenAI-compatible surface, whose failures
// are written in OpenAI's envelope {"error": {"message", "type", "param", "code"}} with 400
// for invalid requests. /v1/modelSelect, the spec's alias of model selection, is not part of
// it: it keeps Switchyard's own body and statuses, like /api/v1/model-select.
func openAIPath(path string) bool {
	return strings.HasPrefix(path, "/v1/") && path != "/v1/modelSelect"
}

// errorEnvelope is the shape a failure body takes on a family of routes.
type errorEnvelope int

const (
	// envelopeUniform is Switchyard's {"error": kind, "message": text} (writeAPIError).
	envelopeUniform errorEnvelope = iota
	// envelopeOpenAI is OpenAI's {"error": {"message", "type", "param", "code"}}, which
	// LiteLLM's proxy answers too (its ProxyException).
	envelopeOpenAI
	// envelopeAnthropic is Anthropic's {"type": "error", "error": {"type", "message"}}.
	envelopeAnthropic
	// envelopeGemini is Google's {"error": {"code", "message", "status"}}.
	envelopeGemini
)

// errorEnvelopeOf is the envelope respondError answers a failure of method path in:
// Google's on the Gemini surface, Anthropic's on /v1/messages, OpenAI's elsewhere under
// /v1/ and on LiteLLM's management routes, the uniform body elsewhere. The OpenAPI
// document describes each route's failures by the same function.
func errorEnvelopeOf(method, path string) errorEnvelope {
	if e, ok := passThroughEnvelope(path); ok {
		return e
	}
	switch {
	case geminiPath(method, path):
		return envelopeGemini
	case anthropicPath(path):
		return envelopeAnthropic
	case openAIPath(path) || litellmPath(path) || deploymentPath(path) || path == tokenCounterPath || path == spendCalculatePath:
		return envelopeOpenAI
	}
	return envelopeUniform
}

// respondError writes ae in the shape of r's route family: Google's envelope on the Gemini
// surface (see writeGeminiError), Anthropic's on /v1/messages (see writeAnthropicError), OpenAI's elsewhere under /v1/ (see
// writeOpenAIError) and on LiteLLM's /key/ routes (its proxy answers in that envelope), Switchyard's uniform body elsewhere. cause, when not nil, is the
// error ae was made from (it supplies param and the 404 of an unknown model).
func (s *Server) respondError(w http.ResponseWriter, r *http.Request, ae *APIError, cause error) {
	switch errorEnvelopeOf(r.Method, r.URL.Path) {
	case envelopeGemini:
		writeGeminiError(w, ae, cause)
		return
	case envelopeAnthropic:
		writeAnthropicError(w, ae, cause)
		return
	case envelopeOpenAI:
		writeOpenAIError(w, ae, cause)
		return
	}
	if errors.Is(cause, completions.ErrBudgetExceeded) {
		// A spent budget does not clear by retrying: the clients honour this as the SDKs do.
		w.Header().Set("X-Should-Retry", "false")
	}
	writeAPIError(w, ae)
}

// writeOpenAIError writes ae as OpenAI does: validation 422 becomes 400, every model unknown
// (or without a key here) becomes 404 with code model_not_found, every upstream refusing the
// request as too long or malformed 400 (context_length_exceeded), every upstream rate
// limited 429 with its Retry-After (and no x-should-retry: false), a spent quota 429
// insufficient_quota, types and codes follow the OpenAI API
// (invalid_request_error with invalid_api_key, unknown_url, method_not_allowed,
// request_too_large; rate_limit_error; server_error). The gateway's own final failures
// carry x-should-retry: false — it already retried and fell back, so an SDK retrying would
// only repeat (and pay for) every attempt; only a 500 leaves the decision to the client.
func writeOpenAIError(w http.ResponseWriter, ae *APIError, cause error) {
	status, typ, code, retry := openAIStatus(w.Header(), ae, cause)
	body := completions.OpenAIErrorBody{Error: completions.OpenAIErrorObject{Message: ae.Message, Type: typ}}
	if code != "" {
		body.Error.Code = &code
	}
	var ve *completions.ValidationError
	var af *completions.AllFailedError
	switch {
	case errors.As(cause, &ve) && ve.Field != "":
		body.Error.Param = &ve.Field
	case ae.Param != "":
		body.Error.Param = &ae.Param
	case errors.Is(cause, completions.ErrModelNotAllowed):
		model := "model" // LiteLLM's param of its key_model_access_denied
		body.Error.Param = &model
	case errors.As(cause, &af) && status == http.StatusBadRequest:
		if p := af.Param(); p != "" { // every upstream named the same field
			body.Error.Param = &p
		}
	}
	if status == http.StatusBadRequest && body.Error.Code == nil && errors.As(cause, &af) {
		if c := af.Code(); c != "" { // every upstream gave the same code (invalid_value, …)
			body.Error.Code = &c
		}
	}
	if status == http.StatusUnauthorized && errors.Is(cause, completions.ErrBlocked) {
		// LiteLLM's proxy answers a blocked key or team from its auth check: an auth_error
		// whose message starts "Authentication Error, " and whose param is Python's None.
		body.Error.Message = "Authentication Error, " + body.Error.Message
		none := "None"
		body.Error.Param = &none
	}
	if retry {
		writeJSON(w, status, body)
		return
	}
	writeOpenAIErrorBody(w, status, body.Error)
}

// openAIStatus is the status, OpenAI error type and code ae is answered with on the
// OpenAI-compatible surfaces, and whether the client may retry (see writeOpenAIError); it
// adds ae's headers to h, and Retry-After when every upstream was rate limited.
func openAIStatus(h http.Header, ae *APIError, cause error) (status int, typ, code string, retry bool) {
	for k, vs := range ae.Header {
		for _, v := range vs {
			h.Add(k, v)
		}
	}
	status, typ, code = ae.Status, "invalid_request_error", ""
	switch ae.Status {
	case http.StatusUnprocessableEntity:
		status = http.StatusBadRequest
	case http.StatusUnauthorized:
		code = "invalid_api_key"
		var expired *KeyExpiredError
		if errors.As(cause, &expired) {
			typ, code = "expired_key", "401" // LiteLLM's, which its users' clients look for
		}
		if errors.Is(cause, completions.ErrTagRouting) {
			typ, code = "auth_error", "401" // LiteLLM's, for no deployment with the request's tags
		}
	case http.StatusForbidden:
		typ = "permission_error"
		if errors.Is(cause, completions.ErrModelNotAllowed) {
			// LiteLLM's answer, which its users' clients look for: its proxy refuses a
			// model outside the key's models from its auth check, a 401 (code: its status).
			status, typ, code = http.StatusUnauthorized, "key_model_access_denied", "401"
		}
	case http.StatusNotFound:
		code = "not_found"
		if strings.HasPrefix(ae.Message, "no route for") {
			code = "unknown_url"
		}
	case http.StatusMethodNotAllowed:
		code = "method_not_allowed"
	case http.StatusRequestEntityTooLarge:
		code = "request_too_large"
	case http.StatusTooManyRequests:
		typ, code = "rate_limit_error", "rate_limit_exceeded"
		if errors.Is(cause, completions.ErrBlocked) {
			// A blocked key or team: LiteLLM's 401 auth_error (writeOpenAIError words it).
			status, typ, code = http.StatusUnauthorized, "auth_error", "401"
		} else if errors.Is(cause, completions.ErrBudgetExceeded) {
			code = "budget_exceeded"
		} else if ae.Retryable {
			retry = true // a limit that clears with time (the key's requests per minute)
		}
	case http.StatusBadGateway:
		typ, code = "api_error", "upstream_error"
	case http.StatusInternalServerError:
		typ = "server_error"
	case http.StatusServiceUnavailable:
		if ae.Retryable {
			typ, retry = "server_error", true // the key store restarting: the SDK may retry
		}
	}
	if status == http.StatusBadRequest && blockedEndUser(cause) {
		code = "400" // LiteLLM's code of a blocked end user (its HTTPException's status)
	}
	if status == http.StatusBadRequest && errors.Is(cause, completions.ErrBudgetExceeded) {
		typ, code = "budget_exceeded", "400" // LiteLLM's of a key's model_max_budget spent
	}
	if status == http.StatusBadRequest && errors.Is(cause, completions.ErrModelNotServed) {
		code = "400" // LiteLLM's code of a model its config does not serve (its HTTPException's status)
	}
	if status == http.StatusBadRequest && errors.Is(cause, completions.ErrGuardrailBlocked) {
		code = "guardrail_violation" // a configured guardrail refused the request or its answer
	}
	if status == http.StatusBadRequest && errors.Is(cause, completions.ErrResponseNotFound) {
		code = "previous_response_not_found" // OpenAI's code for a previous_response_id it does not have
	}
	if status == http.StatusBadRequest && errors.Is(cause, completions.ErrConversationLocked) {
		code = "conversation_locked" // another request is being answered on the conversation
	}
	if errors.Is(cause, completions.ErrUnknownModel) {
		status, typ, code = http.StatusNotFound, "invalid_request_error", "model_not_found"
	}
	var af *completions.AllFailedError
	if errors.As(cause, &af) {
		// When every upstream failed the same way, answer as OpenAI would have, so SDKs raise
		// the matching exception (agents trim their context on context_length_exceeded and
		// back off on a RateLimitError) instead of an InternalServerError for a 502.
		switch {
		case af.ModelNotFound():
			status, typ, code = http.StatusNotFound, "invalid_request_error", "model_not_found"
		case af.Every(providers.KindContextLength):
			status, typ, code = http.StatusBadRequest, "invalid_request_error", "context_length_exceeded"
		case af.Every(providers.KindContextLength, providers.KindBadRequest):
			status, typ, code = http.StatusBadRequest, "invalid_request_error", ""
		case af.Every(providers.KindQuotaExceeded):
			status, typ, code = http.StatusTooManyRequests, "insufficient_quota", "insufficient_quota"
		case af.Every(providers.KindRateLimited):
			status, typ, code = http.StatusTooManyRequests, "rate_limit_error", "rate_limit_exceeded"
			// The limit clears with time: the SDK may retry, after Retry-After when known.
			retry = true
			if pe := af.Last(); pe != nil && pe.RetryAfter > 0 {
				h.Set("Retry-After", strconv.Itoa(int(math.Ceil(pe.RetryAfter.Seconds()))))
			}
		}
	}
	return status, typ, code, retry
}

// writeOpenAIErrorBody writes e in OpenAI's envelope with status; every status but 500
// carries x-should-retry: false.
func writeOpenAIErrorBody(w http.ResponseWriter, status int, e completions.OpenAIErrorObject) {
	if status != http.StatusInternalServerError {
		w.Header().Set("X-Should-Retry", "false")
	}
	writeJSON(w, status, completions.OpenAIErrorBody{Error: e})
}

// writeContentFiltered answers a request whose provider's safety system refused it as
// OpenAI does: 200 with one choice whose finish_reason is "content_filter" and no content
// (for a stream: one chunk with that finish reason, the usage chunk when includeUsage,
// then [DONE]). The usage is what the blocked call is billed; the attempts are in the
// switchyard extension.
func writeContentFiltered(w http.ResponseWriter, cf *completions.ContentFilterError, received time.Time, stream, includeUsage bool) {
	completion := completions.NewOpenAIChatCompletion(contentFilteredResponse(cf), received)
	if !stream {
		writeJSON(w, http.StatusOK, completion)
		return
	}
	completions.WriteOpenAIFinalChunk(w, completion, includeUsage)
}
