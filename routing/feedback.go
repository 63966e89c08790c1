package routing

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/invopop/jsonschema"

	"github.com/switchyard-ai/switchyard/store"
)

// FeedbackRequest is the body of POST /api/v1/feedback and of Not Diamond's
// POST /v2/report/metrics/feedback: a thumbs up or down on one candidate of a session.
type FeedbackRequest struct {
	// SessionID is the model selection session the feedback is about.
	SessionID string `json:"session_id"`
	// Provider is the rated candidate, one of the session's ranked list, in any of the
	// shapes model selection accepts ({"provider","model"}, {"name"} or "provider/model").
	Provider Candidate `json:"provider"`
	// Feedback holds the metric.
	Feedback FeedbackMetrics `json:"feedback"`

	providerSet bool
}

// FeedbackMetrics is the feedback given; accuracy is the only metric.
type FeedbackMetrics struct {
	// Accuracy is 1 (the answer was good: thumbs up) or 0 (thumbs down).
	Accuracy *float64 `json:"accuracy" jsonschema:"required,enum=0,enum=1,description=1 for a good answer (thumbs up) and 0 for a bad one (thumbs down)"`
}

// JSONSchemaExtend marks the request's fields required and describes them.
func (FeedbackRequest) JSONSchemaExtend(s *jsonschema.Schema) {
	s.Required = []string{"session_id", "provider", "feedback"}
	if p, ok := s.Properties.Get("session_id"); ok {
		p.Description = "session_id returned by model selection"
	}
	if p, ok := s.Properties.Get("provider"); ok {
		p.Description = "the rated candidate: one of the session's ranked list"
	}
}

// UnmarshalJSON decodes the wire request; errors are *ValidationError naming the field.
func (r *FeedbackRequest) UnmarshalJSON(data []byte) error {
	var w struct {
		SessionID json.RawMessage `json:"session_id"`
		Provider  json.RawMessage `json:"provider"`
		Feedback  json.RawMessage `json:"feedback"`
	}
	if err := strictDecode(data, &w); err != nil {
		return jsonError("body", err)
	}
	var out FeedbackRequest
	var err error
	if out.providerSet, err = decodeTarget(w.SessionID, w.Provider, &out.SessionID, &out.Provider); err != nil {
		return err
	}
	if isSet(w.Feedback) {
		var fb map[string]json.RawMessage
		if err := strictDecode(w.Feedback, &fb); err != nil {
			return jsonError("feedback", err)
		}
		for k, v := range fb {
			if k != "accuracy" {
				return invalid("feedback."+k, "is not a metric Switchyard learns from; give feedback.accuracy (0 or 1)")
			}
			var a float64
			if err := decodeField(v, "feedback.accuracy", &a); err != nil {
				return err
			}
			if isSet(v) {
				out.Feedback.Accuracy = &a
			}
		}
	}
	*r = out
	return nil
}

// Validate checks the request's own rules and normalises the candidate.
func (r *FeedbackRequest) Validate() error {
	if r == nil {
		return invalid("body", "the request is missing")
	}
	if err := validateTarget(r.SessionID, &r.Provider, r.providerSet, "the rated candidate"); err != nil {
		return err
	}
	switch a := r.Feedback.Accuracy; {
	case a == nil:
		return invalid("feedback.accuracy", "is required: 1 for a good answer, 0 for a bad one")
	case *a != 0 && *a != 1:
		return invalid("feedback.accuracy", "must be 0 or 1 (got %v)", *a)
	}
	return nil
}

// FeedbackResponse answers a feedback.
type FeedbackResponse struct {
	// SessionID and Feedback echo the request.
	SessionID string          `json:"session_id" jsonschema:"required"`
	Feedback  FeedbackMetrics `json:"feedback" jsonschema:"required"`
	// Provider is the rated candidate, as the session's ranked list names it.
	Provider string `json:"provider"`
	// PreferenceID is the session's pref_ preference the feedback updated, if any.
	PreferenceID string `json:"preference_id,omitempty"`
	// Personalized says whether the feedback updated a preference: false for a session
	// selected without a pref_ preference (the feedback is recorded with the session but
	// personalizes nothing), whose preference was deleted since, or answered by the
	// request's default unranked (score_source "default" or "default_replaced").
	Personalized bool `json:"personalized"`
	// FeedbackCount is the preference's number of feedbacks after this one.
	FeedbackCount int `json:"feedback_count,omitempty"`
	// Replaced says the session already had feedback on this candidate; the new value
	// replaced it (each candidate of a session counts once).
	Replaced bool `json:"replaced,omitempty"`
}

// Feedback records a thumbs up or down (feedback.accuracy 1 or 0) on one candidate of
// owner's session. The session keeps it; when the session was selected under a pref_
// preference, the preference's counts for the candidate are updated in the same store
// transaction, so concurrent feedback (from several replicas on one store too) loses no
// update. Feedback again on the same candidate of the same session replaces the earlier
// one. Errors: *ValidationError for a bad request (provider not in the session's ranked
// list, accuracy not 0 or 1, a preference already holding MaxPreferenceModels other
// models), *NotFoundError (field session_id) for a session owner does not have.
func (s *Selector) Feedback(ctx context.Context, owner string, req *FeedbackRequest) (*FeedbackResponse, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	if s.store == nil {
		return nil, ErrZeroSelector
	}
	y := *req.Feedback.Accuracy
	var resp *FeedbackResponse
	err := s.store.Update(ctx, func(tx store.Tx) error {
		sess, ci, err := sessionCandidate(ctx, tx, owner, req.SessionID, req.Provider.Name)
		if err != nil {
			return err
		}
		cand := sess.Ranked[ci]
		key := cand.key()
		resp = &FeedbackResponse{SessionID: sess.ID, Feedback: FeedbackMetrics{Accuracy: &y}, Provider: cand.Label}
		var prev *float64
		if cand.Feedback != nil {
			prev = cand.Feedback
			resp.Replaced = true
		}
		sess.Ranked[ci].Feedback = &y
		if err := putSession(ctx, tx, sess, sess.CreatedAt); err != nil {
			return fmt.Errorf("routing: store session: %w", err)
		}
		if !strings.HasPrefix(sess.PreferenceID, PreferencePrefix) {
			return nil
		}
		resp.PreferenceID = sess.PreferenceID
		if cand.Source == SourceDefault || cand.Source == SourceDefaultReplaced {
			// the request's default (or the prior's pick in its place) answered unranked
			// (its timeout passed, or the router failed): there is no router estimate to
			// compare the outcome with
			return nil
		}
		base := cand.Base
		if base == nil {
			base = &cand.Score // a session stored without base estimates
		}
		resp.Personalized, err = s.updatePreference(ctx, tx, owner, sess.PreferenceID, key, func(pref *Preference) {
			if prev != nil {
				pref.Models = recordFeedback(pref.Models, key, *prev, *base, -1)
				pref.FeedbackCount--
			}
			pref.Models = recordFeedback(pref.Models, key, y, *base, 1)
			pref.FeedbackCount++
			resp.FeedbackCount = pref.FeedbackCount
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	s.log.DebugContext(ctx, "feedback recorded", "session_id", resp.SessionID, "preference_id", resp.PreferenceID,
		"personalized", resp.Personalized)
	return resp, nil
}
