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
		s.selector = sel
		h := func(w http.ResponseWriter, r *http.Request) error {
			var req routing.Request
			if err := decodeJSON(r, &req, decodeOptions{ValidationStatus: http.StatusBadRequest, EmptyIsObject: true}); err != nil {
				return err
			}
			if req.PreferenceID != "" {
				telemetry.MarkCustomRouter(r.Context())
			}
			resp, err := sel.Select(r.Context(), responsesOwner(r), &req)
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, resp)
			return nil
		}
		for _, path := range []string{"/api/v1/model-select", "/v1/modelSelect", "/v2/modelRouter/modelSelect"} {
			summary := "Select the LLM to call for a conversation"
			if path != "/api/v1/model-select" {
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
		preferenceRoutes(s, sel)
		s.AddErrorMapper(modelSelectionError)
		return nil
	}
}

// preferenceRoutes registers the personalized routing routes: preferences (native and Not
// Diamond's userPreferenceCreate) and feedback (native and Not Diamond's
// report/metrics/feedback).
func preferenceRoutes(s *Server, sel *routing.Selector) {
	tags := []string{"Model selection"}
	create := func(w http.ResponseWriter, r *http.Request) error {
		var req routing.PreferenceRequest
		if err := decodeJSON(r, &req, decodeOptions{ValidationStatus: http.StatusBadRequest, EmptyIsObject: true}); err != nil {
			return err
		}
		p, err := sel.CreatePreference(r.Context(), responsesOwner(r), req)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, p)
		return nil
	}
	createErrors := map[int]string{
		400: "bad request: the message names the field",
		404: "router_model_id names no trained router this key owns",
	}
	s.Handle(Route{Method: "POST", Path: "/api/v1/preferences", Summary: "Create a preference: model selection with its preference_id learns from feedback",
		Tags: tags, VirtualKeys: true, Request: routing.PreferenceRequest{}, Response: routing.Preference{}, Errors: createErrors}, create)
	s.Handle(Route{Method: "POST", Path: "/v2/preferences/userPreferenceCreate", Summary: "Create a preference (Not Diamond's path; alias of POST /api/v1/preferences)",
		Tags: tags, VirtualKeys: true, Request: routing.PreferenceRequest{}, Response: routing.Preference{}, Errors: createErrors}, create)
	s.Handle(Route{Method: "GET", Path: "/api/v1/preferences", Summary: "List this key's preferences, newest first",
		Tags: tags, VirtualKeys: true, Query: listParams(""), Response: routing.PreferenceList{},
		Errors: map[int]string{422: "a listing parameter is malformed (the message names it)", 400: "a listing value breaks a rule (the message names it)"}},
		func(w http.ResponseWriter, r *http.Request) error {
			f, err := listFilter(r)
			if err != nil {
				return err
			}
			list, err := sel.ListPreferences(r.Context(), responsesOwner(r), f)
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, list)
			return nil
		})
	s.Handle(Route{Method: "GET", Path: "/api/v1/preferences/{preference_id}", Summary: "A preference with its feedback counts per model",
		Tags: tags, VirtualKeys: true, Response: routing.Preference{}, Errors: map[int]string{404: "no such preference for this key"}},
		func(w http.ResponseWriter, r *http.Request) error {
			p, err := sel.Preference(r.Context(), responsesOwner(r), r.PathValue("preference_id"))
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, p)
			return nil
		})
	deletePref := func(w http.ResponseWriter, r *http.Request) error {
		id := r.PathValue("preference_id")
		if err := sel.DeletePreference(r.Context(), responsesOwner(r), id); err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, deletedPreference{ID: id, Deleted: true})
		return nil
	}
	s.Handle(Route{Method: "DELETE", Path: "/api/v1/preferences/{preference_id}", Summary: "Delete a preference with what it learned",
		Tags: tags, VirtualKeys: true, Response: deletedPreference{}, Errors: map[int]string{404: "no such preference for this key"}}, deletePref)
	s.Handle(Route{Method: "DELETE", Path: "/v2/preferences/userPreferenceDelete/{preference_id}", Summary: "Delete a preference (Not Diamond's path; alias of DELETE /api/v1/preferences/{preference_id})",
		Tags: tags, VirtualKeys: true, Response: deletedPreference{}, Errors: map[int]string{404: "no such preference for this key"}}, deletePref)
	updErrors := map[int]string{400: "bad request: the message names the field", 404: "no such preference for this key"}
	s.Handle(Route{Method: "PATCH", Path: "/api/v1/preferences/{preference_id}", Summary: "Rename a preference (its router and feedback are kept)",
		Tags: tags, VirtualKeys: true, Request: routing.PreferenceUpdate{}, Response: routing.Preference{}, Errors: updErrors},
		func(w http.ResponseWriter, r *http.Request) error {
			var req routing.PreferenceUpdate
			if err := decodeJSON(r, &req, decodeOptions{ValidationStatus: http.StatusBadRequest, EmptyIsObject: true}); err != nil {
				return err
			}
			p, err := sel.UpdatePreference(r.Context(), responsesOwner(r), r.PathValue("preference_id"), req)
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, p)
			return nil
		})
	s.Handle(Route{Method: "PUT", Path: "/v2/preferences/userPreferenceUpdate", Summary: "Rename a preference (Not Diamond's path; alias of PATCH /api/v1/preferences/{preference_id})",
		Tags: tags, VirtualKeys: true, Request: notDiamondPreferenceUpdate{}, Response: routing.Preference{}, Errors: updErrors},
		func(w http.ResponseWriter, r *http.Request) error {
			var req notDiamondPreferenceUpdate
			if err := decodeJSON(r, &req, decodeOptions{ValidationStatus: http.StatusBadRequest, EmptyIsObject: true}); err != nil {
				return err
			}
			if req.PreferenceID == "" {
				return Validation(http.StatusBadRequest, "preference_id: is required")
			}
			p, err := sel.UpdatePreference(r.Context(), responsesOwner(r), req.PreferenceID, routing.PreferenceUpdate{Name: req.Name})
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, p)
			return nil
		})
	feedback := func(w http.ResponseWriter, r *http.Request) error {
		var req routing.FeedbackRequest
		if err := decodeJSON(r, &req, decodeOptions{ValidationStatus: http.StatusBadRequest, EmptyIsObject: true}); err != nil {
			return err
		}
		resp, err := sel.Feedback(r.Context(), responsesOwner(r), &req)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, resp)
		return nil
	}
	fbErrors := map[int]string{
		400: "bad request: provider not among the session's candidates or feedback.accuracy not 0 or 1 (the message names the field)",
		404: "session_id names no session of this key",
	}
	s.Handle(Route{Method: "POST", Path: "/api/v1/feedback", Summary: "Thumbs up or down on a candidate of a model selection session; under a pref_ preference it personalizes later selections",
		Tags: tags, VirtualKeys: true, Request: routing.FeedbackRequest{}, Response: routing.FeedbackResponse{}, Errors: fbErrors}, feedback)
	s.Handle(Route{Method: "POST", Path: "/v2/report/metrics/feedback", Summary: "Feedback on a model selection session (Not Diamond's path; alias of POST /api/v1/feedback)",
		Tags: tags, VirtualKeys: true, Request: routing.FeedbackRequest{}, Response: routing.FeedbackResponse{}, Errors: fbErrors}, feedback)
	latency := func(w http.ResponseWriter, r *http.Request) error {
		var req routing.LatencyReport
		if err := decodeJSON(r, &req, decodeOptions{ValidationStatus: http.StatusBadRequest, EmptyIsObject: true}); err != nil {
			return err
		}
		resp, err := sel.ReportLatency(r.Context(), responsesOwner(r), &req)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, resp)
		return nil
	}
	latErrors := map[int]string{
		400: "bad request: provider not among the session's candidates or feedback.tokens_per_second not above 0 (the message names the field)",
		404: "session_id names no session of this key",
	}
	s.Handle(Route{Method: "POST", Path: "/api/v1/feedback/latency", Summary: "How fast a candidate of a model selection session answered; under a pref_ preference tradeoff latency ranks by it",
		Tags: tags, VirtualKeys: true, Request: routing.LatencyReport{}, Response: routing.LatencyReportResponse{}, Errors: latErrors}, latency)
	s.Handle(Route{Method: "POST", Path: "/v2/report/metrics/latency", Summary: "A latency report on a model selection session (Not Diamond's path; alias of POST /api/v1/feedback/latency)",
		Tags: tags, VirtualKeys: true, Request: routing.LatencyReport{}, Response: routing.LatencyReportResponse{}, Errors: latErrors}, latency)
}

// notDiamondPreferenceUpdate is the body of Not Diamond's PUT
// /v2/preferences/userPreferenceUpdate (its SDK's preferences.update).
type notDiamondPreferenceUpdate struct {
	PreferenceID string  `json:"preference_id" jsonschema:"required"`
	Name         *string `json:"name"`
}

// deletedPreference answers DELETE /api/v1/preferences/{preference_id}.
type deletedPreference struct {
	ID      string `json:"preference_id" jsonschema:"required"`
	Deleted bool   `json:"deleted" jsonschema:"required"`
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
