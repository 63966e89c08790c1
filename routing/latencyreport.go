package routing

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/invopop/jsonschema"

	"github.com/switchyard-ai/switchyard/store"
)

// LatencyReport is the body of Not Diamond's POST /v2/report/metrics/latency (its Python
// SDK sends one after each call it makes, with latency tracking on) and of
// POST /api/v1/feedback/latency: how fast one candidate of a session answered.
type LatencyReport struct {
	// SessionID is the model selection session the call was routed by.
	SessionID string `json:"session_id"`
	// Provider is the candidate called, one of the session's ranked list, in any shape
	// model selection accepts.
	Provider Candidate `json:"provider"`
	// Feedback holds the speed.
	Feedback LatencyMetrics `json:"feedback"`

	providerSet bool
}

// LatencyMetrics is the reported speed.
type LatencyMetrics struct {
	// TokensPerSecond is how fast the call produced its answer, output tokens per second.
	TokensPerSecond *float64 `json:"tokens_per_second" jsonschema:"required,exclusiveMinimum=0,description=output tokens per second of the call"`
}

// JSONSchemaExtend marks the report's fields required.
func (LatencyReport) JSONSchemaExtend(s *jsonschema.Schema) {
	s.Required = []string{"session_id", "provider", "feedback"}
}

// UnmarshalJSON decodes the wire report; errors are *ValidationError naming the field.
func (r *LatencyReport) UnmarshalJSON(data []byte) error {
	var w struct {
		SessionID json.RawMessage `json:"session_id"`
		Provider  json.RawMessage `json:"provider"`
		Feedback  json.RawMessage `json:"feedback"`
	}
	if err := strictDecode(data, &w); err != nil {
		return jsonError("body", err)
	}
	var out LatencyReport
	var err error
	if out.providerSet, err = decodeTarget(w.SessionID, w.Provider, &out.SessionID, &out.Provider); err != nil {
		return err
	}
	if err := decodeField(w.Feedback, "feedback", &out.Feedback); err != nil {
		return err
	}
	*r = out
	return nil
}

// Validate checks the report's own rules and normalises the candidate.
func (r *LatencyReport) Validate() error {
	if r == nil {
		return invalid("body", "the request is missing")
	}
	if err := validateTarget(r.SessionID, &r.Provider, r.providerSet, "the candidate called"); err != nil {
		return err
	}
	switch v := r.Feedback.TokensPerSecond; {
	case v == nil:
		return invalid("feedback.tokens_per_second", "is required: output tokens per second of the call")
	case !(*v > 0) || math.IsInf(*v, 0):
		return invalid("feedback.tokens_per_second", "must be a finite number above 0 (got %v)", *v)
	}
	return nil
}

// LatencyReportResponse answers a latency report.
type LatencyReportResponse struct {
	// SessionID and Feedback echo the request.
	SessionID string         `json:"session_id" jsonschema:"required"`
	Feedback  LatencyMetrics `json:"feedback" jsonschema:"required"`
	// Provider is the candidate, as the session's ranked list names it.
	Provider string `json:"provider"`
	// PreferenceID is the session's pref_ preference the report updated, if any.
	PreferenceID string `json:"preference_id,omitempty"`
	// Personalized says whether a preference learned the speed (false: recorded with the
	// session only).
	Personalized bool `json:"personalized"`
}

// ReportLatency records how fast one candidate of owner's session answered. The session
// keeps the latest report per candidate; when it was selected under a pref_ preference,
// the preference's mean for the model is updated in the same store transaction (a second
// report on the same candidate of a session replaces the first), and selections under the
// preference with tradeoff "latency" rank by it: seconds per output token, the unit of the
// gateway's own measurements, which candidates without reports keep. Errors are as for
// Feedback.
func (s *Selector) ReportLatency(ctx context.Context, owner string, req *LatencyReport) (*LatencyReportResponse, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	if s.store == nil {
		return nil, ErrZeroSelector
	}
	tps := *req.Feedback.TokensPerSecond
	var resp *LatencyReportResponse
	err := s.store.Update(ctx, func(tx store.Tx) error {
		sess, ci, err := sessionCandidate(ctx, tx, owner, req.SessionID, req.Provider.Name)
		if err != nil {
			return err
		}
		cand := sess.Ranked[ci]
		resp = &LatencyReportResponse{SessionID: sess.ID, Feedback: LatencyMetrics{TokensPerSecond: &tps}, Provider: cand.Label}
		prev := cand.TokensPerSecond
		sess.Ranked[ci].TokensPerSecond = &tps
		if err := putSession(ctx, tx, sess, sess.CreatedAt); err != nil {
			return fmt.Errorf("routing: store session: %w", err)
		}
		if !strings.HasPrefix(sess.PreferenceID, PreferencePrefix) {
			return nil
		}
		resp.PreferenceID = sess.PreferenceID
		key := cand.key()
		resp.Personalized, err = s.updatePreference(ctx, tx, owner, sess.PreferenceID, key, func(pref *Preference) {
			var i int
			pref.Models, i = modelEntry(pref.Models, key)
			m := &pref.Models[i]
			if prev != nil {
				m.LatencyReports--
				m.SecondsPerTokenSum -= 1 / *prev
			}
			m.LatencyReports++
			m.SecondsPerTokenSum += 1 / tps
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// decodeTarget decodes the session and candidate a feedback or a latency report is about;
// it reports whether provider was given.
func decodeTarget(sessionRaw, providerRaw json.RawMessage, sessionID *string, provider *Candidate) (bool, error) {
	if err := decodeField(sessionRaw, "session_id", sessionID); err != nil {
		return false, err
	}
	if !isSet(providerRaw) {
		return false, nil
	}
	return true, provider.decode(providerRaw, "provider")
}

// validateTarget checks that a feedback or a latency report names a session and a
// candidate (role says which: "the rated candidate"), and normalises the candidate.
func validateTarget(sessionID string, provider *Candidate, providerSet bool, role string) error {
	if strings.TrimSpace(sessionID) == "" {
		return invalid("session_id", "is required: the session_id model selection returned")
	}
	if !providerSet && provider.Name == "" && provider.Provider == "" && provider.Model == "" {
		return invalid("provider", "is required: %s, e.g. {\"provider\": \"openai\", \"model\": \"gpt-4o\"}", role)
	}
	// A string without a slash is the llm_label model selection answered for a candidate
	// given as {"name": ...}: the candidate of that name (unlike in a selection request,
	// where a string must be provider/model).
	if provider.shape == ShapeString && !strings.Contains(provider.Name, "/") && strings.TrimSpace(provider.Name) != "" {
		provider.shape = ShapeName
	}
	return provider.normalise("provider")
}

// updatePreference applies update to owner's preference id (a pref_ one; others are left
// alone) within tx and stores it, refusing a model beyond MaxPreferenceModels (field
// provider). It reports whether a preference learned: false for an id that is not a
// preference's or one deleted since (the session keeps what it was told).
func (s *Selector) updatePreference(ctx context.Context, tx store.Tx, owner, id string, model modelKey, update func(p *Preference)) (bool, error) {
	if !strings.HasPrefix(id, PreferencePrefix) {
		return false, nil
	}
	pref, err := loadUsablePreference(ctx, tx, owner, id)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if !pref.knows(model) && len(pref.Models) >= MaxPreferenceModels {
		return false, invalid("provider", "preference %s already learns about %d models, the limit; create another preference", pref.ID, MaxPreferenceModels)
	}
	update(pref)
	pref.UpdatedAt = s.now().UTC()
	if err := store.PutJSON(ctx, tx, store.Preferences, pref.ID, pref); err != nil {
		return false, fmt.Errorf("routing: store preference: %w", err)
	}
	return true, nil
}

// knows reports whether the preference has an entry for model.
func (p *Preference) knows(model modelKey) bool {
	for _, m := range p.Models {
		if m.key() == model {
			return true
		}
	}
	return false
}

// sessionCandidate reads owner's session id and finds the candidate named name in its
// ranked list: a *NotFoundError (session_id) or a *ValidationError (provider) otherwise.
func sessionCandidate(ctx context.Context, tx store.Tx, owner, id, name string) (*Session, int, error) {
	sess, err := store.GetJSON[Session](ctx, tx, store.Sessions, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && !store.Owns(owner, sess.Owner)) {
		return nil, 0, &NotFoundError{Field: "session_id", ID: id, Err: err}
	}
	if err != nil {
		return nil, 0, fmt.Errorf("routing: read session %q: %w", id, err)
	}
	key := strings.ToLower(name)
	for i, c := range sess.Ranked {
		if strings.ToLower(c.Label) == key {
			return &sess, i, nil
		}
	}
	labels := make([]string, len(sess.Ranked))
	for i, c := range sess.Ranked {
		labels[i] = c.Label
	}
	return nil, 0, invalid("provider", "%q is not one of session %s's ranked candidates (%s)", name, sess.ID, strings.Join(labels, ", "))
}
