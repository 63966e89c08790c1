package server

import (
	"errors"
	"net/http"

	"github.com/switchyard-ai/switchyard/routing"
	"github.com/switchyard-ai/switchyard/telemetry"
)

// ModelSelection plugs model selection (package routing) into the server:
// POST /api/v1/model-select and its alias POST /v1/modelSelect (both need the bearer key).
// Validation failures answer 400 (as the spec's model selection section says), an unknown
// preference_id or previous_session 404; both name the field.
func ModelSelection(sel *routing.Selector) Option {
	return func(s *Server) error {
		if sel == nil {
			return errors.New("server: ModelSelection needs a *routing.Selector")
		}
		h := func(w http.ResponseWriter, r *http.Request) error {
			var req routing.Request
			if err := decodeJSON(r, &req, decodeOptions{ValidationStatus: http.StatusBadRequest, EmptyIsObject: true}); err != nil {
				return err
			}
			if req.PreferenceID != "" {
				telemetry.MarkCustomRouter(r.Context())
			}
			resp, err := sel.Select(r.Context(), owner(r), &req)
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, resp)
			return nil
		}
		for _, path := range []string{"/api/v1/model-select", "/v1/modelSelect"} {
			summary := "Select the LLM to call for a conversation"
			if path == "/v1/modelSelect" {
				summary += " (alias of /api/v1/model-select)"
			}
			s.Handle(Route{Method: "POST", Path: path, Summary: summary, Tags: []string{"Model selection"}, VirtualKeys: true,
				Request: routing.Request{}, Response: routing.Response{}, Errors: map[int]string{
					400: "bad request: the message names the field",
					404: "preference_id or previous_session names nothing this key owns",
					504: "the selection did not finish within the request's timeout and it named no default",
					500: "internal server error (the message carries a request id)",
				}}, h)
		}
		s.AddErrorMapper(modelSelectionError)
		return nil
	}
}

// modelSelectionError maps routing's typed errors: invalid → 400, not found → 404,
// timeout (the request's own, without a default) → 504.
func modelSelectionError(err error) *APIError {
	var ve *routing.ValidationError
	var nf *routing.NotFoundError
	switch {
	case errors.Is(err, routing.ErrInvalid) && errors.As(err, &ve):
		return Validation(http.StatusBadRequest, "%s", ve.Error())
	case errors.As(err, &nf):
		return NotFound("%s", nf.Error())
	case errors.Is(err, routing.ErrInvalid):
		return Validation(http.StatusBadRequest, "%v", err)
	case errors.Is(err, routing.ErrNotFound):
		return NotFound("%v", err)
	case errors.Is(err, routing.ErrTimeout):
		return Errorf(http.StatusGatewayTimeout, KindGatewayTimeout, "timeout: %v; give default to be answered with it instead", err)
	}
	return nil
}
