package server

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
)

// anthropicPath reports whether path belongs to the Anthropic Messages surface, whose
// failures are written in Anthropic's envelope {"type": "error", "error": {"type",
// "message"}}.
func anthropicPath(path string) bool {
	return path == "/v1/messages" || strings.HasPrefix(path, "/v1/messages/")
}

// writeAnthropicError writes ae as Anthropic's API does: the status the OpenAI surfaces
// would answer (see openAIStatus: every upstream rate limited is a 429 with Retry-After, a
// prompt too long for all of them a 400, …; every upstream overloaded Anthropic's 529) with
// Anthropic's error types, and
// x-should-retry: false on the gateway's own final failures, which Anthropic's SDKs honour
// as OpenAI's do.
func writeAnthropicError(w http.ResponseWriter, ae *APIError, cause error) {
	status, _, _, retry := openAIStatus(w.Header(), ae, cause)
	var af *completions.AllFailedError
	if errors.As(cause, &af) && af.Every(providers.KindOverloaded) {
		// Every upstream was overloaded: Anthropic's own 529, which its SDKs know.
		status = 529
	}
	typ := "api_error"
	switch status {
	case http.StatusBadRequest:
		typ = "invalid_request_error"
	case http.StatusUnauthorized:
		typ = "authentication_error"
	case http.StatusForbidden:
		typ = "permission_error"
	case http.StatusNotFound:
		typ = "not_found_error"
	case http.StatusRequestEntityTooLarge:
		typ = "request_too_large"
	case http.StatusTooManyRequests:
		typ = "rate_limit_error"
	case http.StatusServiceUnavailable, 529:
		typ = "overloaded_error"
	}
	if !retry && status != http.StatusInternalServerError {
		w.Header().Set("X-Should-Retry", "false")
	}
	obj := completions.AnthropicErrorObject{Type: typ, Message: ae.Message}
	if errors.Is(cause, completions.ErrThreadNotFound) {
		// What Anthropic's SDKs replay the whole conversation on.
		obj.Details = map[string]any{"error_code": "thread_not_found"}
	}
	writeJSON(w, status, completions.AnthropicErrorBody{Type: "error", Error: obj})
}

// decodeMessages reads a Messages request and translates it for the gateway; forCount
// (count_tokens) needs no max_tokens and never streams.
func decodeMessages(r *http.Request, forCount bool) (*completions.AnthropicMessagesRequest, *completions.Request, error) {
	var mreq completions.AnthropicMessagesRequest
	if err := decodeJSON(r, &mreq, decodeOptions{AllowUnknownFields: true}); err != nil {
		return nil, nil, err
	}
	for _, v := range r.Header.Values("Anthropic-Beta") {
		for b := range strings.SplitSeq(v, ",") {
			if b = strings.TrimSpace(b); b != "" {
				mreq.Betas = append(mreq.Betas, b)
			}
		}
	}
	if forCount {
		if mreq.MaxTokens == nil {
			one := 1
			mreq.MaxTokens = &one
		}
		mreq.Stream = false
	}
	creq, err := mreq.ToChatRequest()
	if err != nil {
		return nil, nil, err
	}
	req, err := creq.ToRequest()
	return &mreq, req, err
}

// handleMessages serves POST /v1/messages: the request is translated to a chat request and
// answered by the same gateway; the answer is a "message" object or its typed events.
func (s *Server) handleMessages(g *completions.Gateway, w http.ResponseWriter, r *http.Request) error {
	received := time.Now()
	mreq, req, err := decodeMessages(r, false)
	if err != nil {
		return s.openAIError(w, r, err)
	}
	userID := ""
	if mreq.Metadata != nil {
		userID = mreq.Metadata.UserID
	}
	r = withEndUserNamed(r, []string{"litellm_metadata.user", "metadata.user_id"}, mreq.LiteLLMMetadata.EndUser(), userID)
	// The answer names the model as the request did — unless it named a model group, whose
	// answering model the caller would not see otherwise.
	model := func(provider, name string) string {
		if g.IsModelGroup(mreq.Model) {
			return provider + "/" + name
		}
		return mreq.Model
	}
	return s.answerOpenAI(g, w, r, req, received, openAIAnswer{
		what: "messages",
		whole: func(resp *completions.Response) error {
			writeJSON(w, http.StatusOK, completions.NewAnthropicResponse(resp, model(resp.Provider, resp.Model)))
			return nil
		},
		refused: func(cf *completions.ContentFilterError, stream bool) error {
			m := completions.NewAnthropicResponse(contentFilteredResponse(cf), mreq.Model)
			if stream {
				return completions.WriteAnthropicEvents(w, m)
			}
			writeJSON(w, http.StatusOK, m)
			return nil
		},
		stream: func(st *completions.ResponseStream) error {
			return completions.WriteAnthropicStream(w, st, model(st.Provider(), st.Model()))
		},
	})
}

// handleCountTokens serves POST /v1/messages/count_tokens: the prompt tokens a Messages
// request would cost on its model, estimated without calling it (Gateway.CountTokens),
// as {"input_tokens": n}. max_tokens is not needed.
func (s *Server) handleCountTokens(g *completions.Gateway, w http.ResponseWriter, r *http.Request) error {
	received := time.Now()
	_, req, err := decodeMessages(r, true)
	if err != nil {
		return s.openAIError(w, r, err)
	}
	// The header's and the key's tags select a tag-filtered group's members as /v1/messages'
	// (a count draws on no budget: the tags' accounts are not asked).
	if req.Tags, err = headerTags(r, req.Tags); err != nil {
		return s.openAIError(w, r, err)
	}
	n, err := g.CountTokens(r.Context(), completionsScope(r, received), req)
	if err != nil {
		return s.openAIError(w, r, err)
	}
	writeJSON(w, http.StatusOK, anthropicTokenCount{InputTokens: n})
	return nil
}

// anthropicTokenCount is count_tokens' answer.
type anthropicTokenCount struct {
	InputTokens int `json:"input_tokens"`
}
